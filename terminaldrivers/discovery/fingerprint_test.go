package discovery

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/tmux"
)

// The fingerprint of a real tmux server's panes holds while nothing
// changes, and changes when a pane opens or its title changes.
func TestFingerprintFollowsThePanes(t *testing.T) {
	agenttest.RequireTmux(t)
	sock := filepath.Join(t.TempDir(), "fp")
	r := tmux.ExecRunner{}
	ctx := context.Background()
	if _, err := r.Run(ctx, "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "fp", "-x", "80", "-y", "24", "sleep 600"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = r.Run(context.Background(), "-S", sock, "kill-server") })
	d, err := New(Config{ExtraSockets: []string{sock}, OnlyExtraSockets: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.CloseScreens)
	fp := func() string {
		t.Helper()
		f, err := d.Fingerprint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	// The pane's shell becomes sleep a moment after it opens (its command
	// changes): from then on, nothing changes.
	first := fp()
	for deadline := time.Now().Add(10 * time.Second); ; {
		again := fp()
		if again == first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fingerprint never held still: %s then %s", first, again)
		}
		first = again
		time.Sleep(20 * time.Millisecond)
	}
	for range 5 {
		if again := fp(); again != first {
			t.Fatalf("nothing changed, yet %s then %s", first, again)
		}
	}
	if _, err := r.Run(ctx, "-S", sock, "new-window", "-d", "-t", "fp", "sleep 600"); err != nil {
		t.Fatal(err)
	}
	opened := fp()
	if opened == first {
		t.Fatal("a pane opened and the fingerprint held")
	}
	if _, err := r.Run(ctx, "-S", sock, "select-pane", "-t", "fp:0", "-T", "a new title"); err != nil {
		t.Fatal(err)
	}
	if fp() == opened {
		t.Fatal("a title changed and the fingerprint held")
	}
}
