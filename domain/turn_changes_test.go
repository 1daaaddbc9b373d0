package domain

import (
	"strings"
	"testing"
)

func TestBoundDiff(t *testing.T) {
	d := "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-" + strings.Repeat("a", 40) + "\n+b\n"
	if got, cut := boundDiff(d, len(d)); got != d || cut {
		t.Fatalf("a diff within the bound: %q %v", got, cut)
	}
	got, cut := boundDiff(d, 30)
	if !cut || got != "--- a/x\n+++ b/x\n@@ -1 +1 @@\n" {
		t.Fatalf("cut after a whole line: %q %v", got, cut)
	}
	if got, cut := boundDiff(strings.Repeat("x", 50), 10); got != "" || !cut {
		t.Fatalf("one long line: %q %v", got, cut)
	}
}
