package proc

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// testdata/proc was recorded from a tmux server (3112) with a shell pane
// (3113), Claude Code 2.1.267 run as the pane's process (3123), Codex 0.155.1
// under its Node wrapper (3134 -> 3236) and Codex 0.169.0 (3140 -> 3255)
// with its managed app-server daemon (3537), paths rewritten.
var recorded = FS{Root: "testdata/proc"}

func TestParseStat(t *testing.T) {
	s, err := ParseStat([]byte("3236 (co) de) (x) S 3134 3134 3134 34819 3134 4194304 1 2 3 4 5 6 7 8 20 0 1 0 13068 1 2"))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PID: 3236, Comm: "co) de) (x", PPID: 3134, PGRP: 3134, Session: 3134, TTY: 34819, TPGID: 3134, StartTicks: 13068}
	if s != want {
		t.Fatalf("ParseStat = %+v\nwant %+v", s, want)
	}
	for _, bad := range []string{"", "12 x S 1", "12 (x) S 1 2 3", "x (y) S 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q): no error", bad)
		}
	}
}

func TestSnapshotWalksToTheAgent(t *testing.T) {
	tab, err := recorded.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Descendants(3140, 3); !reflect.DeepEqual(got, []int{3140, 3255, 3537}) {
		t.Fatalf("Descendants(3140) = %v", got)
	}
	if got := tab.Descendants(3140, 1); !reflect.DeepEqual(got, []int{3140, 3255}) {
		t.Fatalf("Descendants(3140, depth 1) = %v", got)
	}
	if got := tab.Descendants(99999, 3); got != nil {
		t.Fatalf("Descendants(missing) = %v", got)
	}
	wrapper, _ := tab.Stat(3134)
	native, _ := tab.Stat(3236)
	daemon, _ := tab.Stat(3537)
	if !wrapper.Foreground() || !native.Foreground() {
		t.Error("Codex wrapper and native binary: not in the pane's foreground group")
	}
	if daemon.Foreground() {
		t.Error("app-server daemon: in a foreground group")
	}
	if native.StartTicks != 13068 || native.PPID != 3134 {
		t.Errorf("native stat %+v", native)
	}
	if n := len(tab.All()); n != 8 {
		t.Errorf("All: %d processes, want 8", n)
	}
}

func TestProcessDetails(t *testing.T) {
	exe, err := recorded.Exe(3123)
	if err != nil || !strings.HasSuffix(exe, "/@anthropic-ai/claude-code/bin/claude.exe") {
		t.Fatalf("Exe(claude) = %q, %v", exe, err)
	}
	cwd, err := recorded.Cwd(3255)
	if err != nil || cwd != "/home/dev/proj-0.169.0" {
		t.Fatalf("Cwd = %q, %v", cwd, err)
	}
	argv, err := recorded.Cmdline(3537)
	if err != nil || len(argv) < 3 || argv[1] != "app-server" || !slices.Contains(argv, "--managed-daemon") {
		t.Fatalf("Cmdline(daemon) = %q, %v", argv, err)
	}
	env, err := recorded.Environ(3236, "HOME", "CODEX_HOME", "TMUX_PANE")
	if err != nil || !reflect.DeepEqual(env, map[string]string{"HOME": "/home/dev/home-0.155.1", "TMUX_PANE": "%3"}) {
		t.Fatalf("Environ = %v, %v", env, err)
	}
	files, err := recorded.OpenFiles(3236)
	if err != nil {
		t.Fatal(err)
	}
	var rollouts []string
	for _, f := range files {
		if strings.Contains(f, "/sessions/") && strings.HasSuffix(f, ".jsonl") {
			rollouts = append(rollouts, f)
		}
	}
	if len(rollouts) != 1 || !strings.HasSuffix(rollouts[0], "-01a22e24-7b86-7263-9cb6-dcc377eb327e.jsonl") {
		t.Fatalf("rollouts open by Codex 0.155.1: %q", rollouts)
	}
	if id, err := recorded.BootID(); err != nil || id == "" {
		t.Fatalf("BootID = %q, %v", id, err)
	}
	if _, err := recorded.Exe(424242); !os.IsNotExist(err) {
		t.Fatalf("Exe of a gone process: %v", err)
	}
}

// The live /proc of this test process: its own incarnation is readable.
func TestLiveSelf(t *testing.T) {
	live := FS{}
	pid := os.Getpid()
	s, err := live.Stat(pid)
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if s.PID != pid || s.StartTicks == 0 || s.PPID != os.Getppid() {
		t.Fatalf("own stat %+v", s)
	}
	tab, err := live.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := tab.Stat(pid); !ok || got.StartTicks != s.StartTicks {
		t.Fatalf("snapshot lacks this process: %+v %v", got, ok)
	}
	exe, _ := os.Executable()
	if got, err := live.Exe(pid); err != nil || got != exe {
		t.Fatalf("Exe = %q, %v; want %q", got, err, exe)
	}
}
