package domain_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainKnowsNoTechnology keeps the domain free of adapters: it may use
// the standard library only, and not the parts that reach the outside world,
// and one library that reaches nothing: the clock (github.com/coder/quartz),
// so its timers run on a fake clock in tests.
func TestDomainKnowsNoTechnology(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "akk/domain" && p != "github.com/coder/quartz" {
			t.Errorf("domain depends on non-standard package %s", p)
		}
	}
	out, err = exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := map[string]bool{"database/sql": true, "net/http": true, "os/exec": true, "net": true}
	for _, p := range strings.Fields(string(out)) {
		if banned[p] {
			t.Errorf("domain depends on %s", p)
		}
	}
}
