package agenttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

func TestAgentsDir(t *testing.T) {
	t.Setenv("AKK_AGENTS_DIR", "")
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got := AgentsDir(); got != "/x/cache/akk/agents" {
		t.Errorf("with XDG_CACHE_HOME: %s", got)
	}
	t.Setenv("AKK_AGENTS_DIR", "/y/agents")
	if got := AgentsDir(); got != "/y/agents" {
		t.Errorf("with AKK_AGENTS_DIR: %s", got)
	}
}

func TestPinnedAgents(t *testing.T) {
	t.Setenv("AKK_AGENTS_DIR", "/y/agents")
	agents, err := PinnedAgents()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, a := range agents {
		kinds[a.Kind]++
		if a.Dir != filepath.Join("/y/agents", a.Kind+"@"+a.Version) || a.Package == "" {
			t.Errorf("agent %+v", a)
		}
	}
	if kinds[KindClaude] == 0 || kinds[KindCodex] == 0 || len(kinds) != 2 {
		t.Errorf("pinned kinds %v, want claude and codex only", kinds)
	}
}

// TestStopProcessesUnder starts processes that belong to a home (by HOME, by
// a program path under it) and one that does not, and checks that cleanup
// finds and stops exactly the first two.
func TestStopProcessesUnder(t *testing.T) {
	home, other := t.TempDir(), t.TempDir()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	link := filepath.Join(home, "sleep")
	if err := os.Symlink(sleep, link); err != nil {
		t.Fatal(err)
	}
	start := func(prog, homeDir string) int {
		cmd := exec.Command(prog, "300")
		cmd.Env = []string{"HOME=" + homeDir}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { _ = cmd.Wait() }() // reap, so a stopped one leaves /proc
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		return cmd.Process.Pid
	}
	byHome, byPath, outside := start(sleep, home), start(link, other), start(sleep, other)
	var found []int
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		// Until exec, a child still shows the test's own environ and cmdline.
		if found = ProcessesUnder(home); slices.Contains(found, byHome) && slices.Contains(found, byPath) {
			break
		}
	}
	if !slices.Contains(found, byHome) || !slices.Contains(found, byPath) || slices.Contains(found, outside) {
		t.Fatalf("ProcessesUnder = %v; want %d and %d in, %d out", found, byHome, byPath, outside)
	}
	if err := stopProcessesUnder(home, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if left := ProcessesUnder(home); len(left) > 0 {
		t.Errorf("still running: %v", left)
	}
	if err := syscall.Kill(outside, 0); err != nil {
		t.Errorf("the process outside the home was stopped: %v", err)
	}
}
