package discovery

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agenttest"
)

// BenchmarkLookPane is one monitor's look at a working pane: a scale
// stand-in (a recorded Claude Code working) in its own tmux server, looked
// at as a monitor looks (LookPane), capturing through the session's control
// client (control) or with a tmux process (exec).
func BenchmarkLookPane(b *testing.B) {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.Skip("no tmux")
	}
	dir := b.TempDir()
	s := agenttest.InstallStandin(b, dir, agenttest.KindClaude)
	proj := filepath.Join(dir, "project")
	os.MkdirAll(proj, 0o755)
	name := "akk-look-bench-" + filepath.Base(dir)
	tm := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", name}, args...)...).CombinedOutput()
		if err != nil {
			b.Fatalf("tmux %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	tm("-f", "/dev/null", "new-session", "-d", "-s", "look", "-x", "120", "-y", "40", "-c", proj, "--",
		"env", "HOME="+filepath.Join(dir, "home"), "AKK_STANDIN_DIR="+s.Recording, s.Entry)
	b.Cleanup(func() { exec.Command("tmux", "-L", name, "kill-server").Run() })
	sock := tm("display-message", "-p", "#{socket_path}")
	pane := tm("display-message", "-p", "#{pane_id}")
	ctx := context.Background()
	for _, mode := range []string{"exec", "control"} {
		b.Run(mode, func(b *testing.B) {
			d, err := New(Config{ExtraSockets: []string{sock}, OnlyExtraSockets: true, NoControl: mode == "exec"})
			if err != nil {
				b.Fatal(err)
			}
			defer d.CloseScreens()
			loc := domain.PaneLocator{Socket: sock, PaneID: pane}
			for {
				t, found, err := d.LookPane(ctx, loc)
				if err != nil {
					b.Fatal(err)
				}
				if found && t.ScreenState == domain.ScreenWorking {
					break
				}
			}
			if _, stop, ok := d.ScreenChanged(ctx, loc); ok {
				stop()
			} else if mode == "control" {
				b.Fatal("no control client")
			}
			b.ResetTimer()
			for range b.N {
				if _, _, err := d.LookPane(ctx, loc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
