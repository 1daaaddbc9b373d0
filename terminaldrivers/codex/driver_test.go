package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/proc"
)

// The /proc tree recorded by the proc package: Codex 0.155.1 (wrapper 3134,
// TUI 3236 holding its rollout) and 0.169.0 (wrapper 3140, TUI 3255, managed
// daemon 3537 holding the rollout).
var recorded = proc.FS{Root: "../proc/testdata/proc"}

func TestMatchExeAndIsTUI(t *testing.T) {
	d := Driver{}
	for exe, want := range map[string]bool{
		"/opt/agents/codex@0.155.1/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex": true,
		"/usr/local/bin/codex (deleted)": true,
		"/usr/bin/node":                  false,
		"/usr/bin/codex-code-mode-host":  false,
	} {
		if got := d.MatchExe(exe); got != want {
			t.Errorf("MatchExe(%s) = %v", exe, got)
		}
	}
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"codex"}, true},
		{[]string{"codex", "--model", "gpt-5"}, true},
		{[]string{"codex", "resume", "--last"}, true},
		{[]string{"codex", "fix the tests"}, true},
		{[]string{"codex", "exec", "fix"}, false},
		{[]string{"codex", "app-server", "--listen", "unix://", "--managed-daemon"}, false},
		{nil, false},
	} {
		if got := d.IsTUI(c.argv); got != c.want {
			t.Errorf("IsTUI(%q) = %v", c.argv, got)
		}
	}
}

func TestInstalledVersion(t *testing.T) {
	dir := t.TempDir()
	plat := filepath.Join(dir, "node_modules", "@openai", "codex-linux-x64")
	bin := filepath.Join(plat, "vendor", "x86_64-unknown-linux-musl", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(path, body string) {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(bin, "codex")
	write(filepath.Join(plat, "package.json"), `{"name":"@openai/codex","version":"0.155.1-linux-x64"}`)
	if v, err := (Driver{}).InstalledVersion(exe); err != nil || v != "0.155.1" {
		t.Fatalf("platform package: %q, %v", v, err)
	}
	write(filepath.Join(filepath.Dir(bin), "codex-package.json"), `{"layoutVersion":1,"version":"0.169.0"}`)
	if v, err := (Driver{}).InstalledVersion(exe); err != nil || v != "0.169.0" {
		t.Fatalf("codex-package.json: %q, %v", v, err)
	}
	if _, err := (Driver{}).InstalledVersion(exe + agent.Deleted); err == nil {
		t.Fatal("a replaced binary's version was read from its successor's package")
	}
	if _, err := (Driver{}).InstalledVersion("/usr/local/bin/codex"); err == nil {
		t.Fatal("no package: no error")
	}
}

func TestInspect(t *testing.T) {
	table, err := recorded.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	process := func(pid int, home string) agent.Process {
		s, _ := table.Stat(pid)
		return agent.Process{Stat: s, Env: map[string]string{"HOME": home}}
	}
	cases := []struct {
		name    string
		p       agent.Process
		version string
		want    domain.IdentityState
		thread  string
	}{
		{"0.155.1 holding its rollout", process(3236, "/home/dev/home-0.155.1"), "0.155.1", domain.IdentityResolved, "01a22e24-7b86-7263-9cb6-dcc377eb327e"},
		{"0.155.1 before its first turn", process(3134, "/home/dev/home-0.155.1"), "0.155.1", domain.IdentityVerifiedAbsent, ""},
		{"0.169.0 served by its daemon", process(3255, "/home/dev/home-0.169.0"), "0.169.0", domain.IdentityAmbiguous, ""},
		{"0.169.0 without a daemon", process(3255, "/home/dev/elsewhere"), "0.169.0", domain.IdentityUnavailable, ""},
		{"unprofiled version holding nothing", process(3134, "/home/dev/home-0.155.1"), "0.170.0", domain.IdentityUnavailable, ""},
		{"no environment", agent.Process{Stat: proc.Stat{PID: 3236}}, "0.155.1", domain.IdentityUnavailable, ""},
		{"gone process", process(3236, "/home/dev/home-0.155.1"), "0.155.1", domain.IdentityUnavailable, ""},
	}
	cases[len(cases)-1].p.Stat.PID = 424242
	for _, c := range cases {
		n := Driver{}.Inspect(recorded, table, c.p, c.version)
		if n.Identity != c.want || n.ThreadID != c.thread {
			t.Errorf("%s: %s %q, want %s %q (warnings %q)", c.name, n.Identity, n.ThreadID, c.want, c.thread, n.Warnings)
		}
		if n.Identity != domain.IdentityResolved && n.Identity != domain.IdentityVerifiedAbsent && len(n.Warnings) == 0 {
			t.Errorf("%s: %s without a warning", c.name, n.Identity)
		}
	}
	if pid := ManagedDaemon(recorded, table, "/home/dev/home-0.169.0/.codex"); pid != 3537 {
		t.Errorf("ManagedDaemon = %d, want 3537", pid)
	}
	if pid := ManagedDaemon(recorded, table, "/home/dev/home-0.155.1/.codex"); pid != 0 {
		t.Errorf("ManagedDaemon of a home without one = %d", pid)
	}
}

func TestRolloutActivity(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "rollout.jsonl")
	meta := `{"type":"session_meta","payload":{"id":"x","base_instructions":{"text":"` + strings.Repeat("long ", 100) + `"}}}`
	started := `{"type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}`
	item := `{"type":"event_msg","payload":{"type":"item_completed","turn_id":"t1"}}`
	complete := `{"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1"}}`
	aborted := `{"type":"event_msg","payload":{"type":"turn_aborted","turn_id":"t1"}}`
	settings := `{"type":"event_msg","payload":{"type":"thread_settings_applied"}}`
	for _, c := range []struct {
		name  string
		lines []string
		want  domain.ActivityState
	}{
		{"no turn yet", []string{meta}, domain.ActivityIdle},
		{"turn running", []string{meta, started, item}, domain.ActivityWorking},
		{"turn complete", []string{meta, started, item, complete, settings}, domain.ActivityIdle},
		{"turn interrupted", []string{meta, started, aborted}, domain.ActivityIdle},
		{"next turn running", []string{meta, started, complete, settings, started}, domain.ActivityWorking},
	} {
		if err := os.WriteFile(path, []byte(strings.Join(c.lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := RolloutActivity(path); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	// A record still being written is not read.
	if err := os.WriteFile(path, []byte(meta+"\n"+started+"\n"+complete[:20]), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := RolloutActivity(path); got != domain.ActivityWorking {
		t.Errorf("partial last record: %s", got)
	}
	if got := RolloutActivity(filepath.Join(dir, "missing.jsonl")); got != domain.ActivityUnknown {
		t.Errorf("missing rollout: %s", got)
	}
}
