package endpoints_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The endpoints read and answer through the domain's transport ports
// alone: they know the domain and the clock, no adapter, and nothing that
// reaches the outside world itself.
func TestEndpointsKnowOnlyTheDomain(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "akk/endpoints" && p != "akk/domain" && p != "github.com/coder/quartz" {
			t.Errorf("endpoints depend on %s", p)
		}
	}
	out, err = exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := map[string]bool{"database/sql": true, "net/http": true, "os/exec": true, "net": true}
	for _, p := range strings.Fields(string(out)) {
		if banned[p] {
			t.Errorf("endpoints depend on %s", p)
		}
	}
}
