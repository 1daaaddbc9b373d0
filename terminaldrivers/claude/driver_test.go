package claude

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/proc"
)

func TestMatchExeAndIsTUI(t *testing.T) {
	d := Driver{}
	for exe, want := range map[string]bool{
		"/opt/agents/claude@2.1.267/node_modules/@anthropic-ai/claude-code/bin/claude.exe": true,
		"/home/u/.local/share/claude/versions/2.1.328":                                     true,
		"/home/u/.local/share/claude/versions/2.1.328 (deleted)":                           true,
		"/usr/local/bin/claude": true,
		"/usr/bin/bash":         false,
		"/opt/versions/2.1.328": false,
		"/usr/bin/node":         false,
	} {
		if got := d.MatchExe(exe); got != want {
			t.Errorf("MatchExe(%s) = %v", exe, got)
		}
	}
	for _, c := range []struct {
		argv []string
		want bool
	}{
		{[]string{"claude"}, true},
		{[]string{"claude", "--resume", "abc"}, true},
		{[]string{"claude", "-p", "hi"}, false},
		{[]string{"claude", "--model", "x", "--print"}, false},
		{[]string{"claude", "mcp", "serve"}, false},
		{[]string{"claude", "--version"}, false},
		{nil, false},
	} {
		if got := d.IsTUI(c.argv); got != c.want {
			t.Errorf("IsTUI(%q) = %v", c.argv, got)
		}
	}
}

func TestInstalledVersion(t *testing.T) {
	dir := t.TempDir()
	pkg := filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code")
	if err := os.MkdirAll(filepath.Join(pkg, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@anthropic-ai/claude-code","version":"2.1.328"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(pkg, "bin", "claude.exe")
	if v, err := (Driver{}).InstalledVersion(exe); err != nil || v != "2.1.328" {
		t.Fatalf("npm layout: %q, %v", v, err)
	}
	if _, err := (Driver{}).InstalledVersion(exe + agent.Deleted); err == nil {
		t.Fatal("a replaced binary's version was read from its successor's package")
	}
	if v, err := (Driver{}).InstalledVersion("/home/u/.local/share/claude/versions/2.1.267"); err != nil || v != "2.1.267" {
		t.Fatalf("native installer layout: %q, %v", v, err)
	}
	if _, err := (Driver{}).InstalledVersion("/usr/local/bin/claude"); err == nil {
		t.Fatal("no package: no error")
	}
}

const record = `{"pid":3123,"sessionId":"c4574185-b4da-4732-8ac6-a358e5d2aa18","cwd":"/srv/p","startedAt":1796070488201,"procStart":"13044","version":"2.1.267","kind":"interactive","status":"%s"}`

func TestInspectReadsTheSessionRecordOfThisIncarnation(t *testing.T) {
	home := t.TempDir()
	sessions := filepath.Join(home, ".claude", "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	// The peer secret beside the record is a FIFO here: opening it would
	// block, so a driver that touched it would hang this test.
	if err := syscall.Mkfifo(filepath.Join(sessions, "3123.59a2a52d.key"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := func(status string) {
		b := []byte(fmt.Sprintf(record, status))
		if err := os.WriteFile(filepath.Join(sessions, "3123.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := agent.Process{Stat: proc.Stat{PID: 3123, StartTicks: 13044}, Env: map[string]string{"HOME": home}}
	inspect := func(p agent.Process) agent.Native {
		done := make(chan agent.Native, 1)
		go func() { done <- Driver{}.Inspect(proc.FS{}, nil, p, "") }()
		select {
		case n := <-done:
			return n
		case <-time.After(5 * time.Second):
			t.Fatal("Inspect blocked: it opened the .key file")
			return agent.Native{}
		}
	}

	write("idle")
	n := inspect(p)
	if n.Identity != domain.IdentityResolved || n.ThreadID != "c4574185-b4da-4732-8ac6-a358e5d2aa18" || n.Version != "2.1.267" || n.Activity != domain.ActivityIdle {
		t.Fatalf("idle record: %+v", n)
	}
	write("busy")
	if n := inspect(p); n.Activity != domain.ActivityWorking || n.Identity != domain.IdentityResolved {
		t.Fatalf("busy record: %+v", n)
	}
	write("waiting")
	if n := inspect(p); n.Activity != domain.ActivityUnknown {
		t.Fatalf("unknown status: %+v", n)
	}

	reused := p
	reused.Stat.StartTicks = 99999
	if n := inspect(reused); n.Identity != domain.IdentityUnavailable || n.ThreadID != "" || len(n.Warnings) == 0 {
		t.Fatalf("record of an earlier process with the same pid: %+v", n)
	}

	other := p
	other.Stat.PID = 4000
	if n := inspect(other); n.Identity != domain.IdentityUnavailable || n.ThreadID != "" {
		t.Fatalf("no record: %+v", n)
	}

	configured := agent.Process{Stat: p.Stat, Env: map[string]string{"HOME": "/nonexistent", "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude")}}
	if n := inspect(configured); n.Identity != domain.IdentityResolved {
		t.Fatalf("CLAUDE_CONFIG_DIR: %+v", n)
	}
	if n := inspect(agent.Process{Stat: p.Stat}); n.Identity != domain.IdentityUnavailable || len(n.Warnings) == 0 {
		t.Fatalf("no environment: %+v", n)
	}
}

func TestTranscriptPath(t *testing.T) {
	config := t.TempDir()
	if got := ProjectDir(config, "/tmp/akk.x/proj-2.1.267"); got != filepath.Join(config, "projects", "-tmp-akk-x-proj-2-1-267") {
		t.Fatalf("ProjectDir = %s", got)
	}
	id := "c4574185-b4da-4732-8ac6-a358e5d2aa18"
	if _, ok := TranscriptPath(config, "/srv/p", id); ok {
		t.Fatal("transcript found before it exists")
	}
	want := filepath.Join(ProjectDir(config, "/srv/p"), id+".jsonl")
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(want, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := TranscriptPath(config, "/srv/p", id); !ok || got != want {
		t.Fatalf("TranscriptPath = %s, %v", got, ok)
	}
	if got, ok := TranscriptPath(config, "/elsewhere", id); !ok || got != want {
		t.Fatalf("TranscriptPath from another cwd = %s, %v", got, ok)
	}
}

// TestSessionWaiting: the session record says "waiting" for its session
// (or for any, when the session is not known yet); another status, another
// session, a torn or missing file say no.
func TestSessionWaiting(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "123.json")
	const sid = "0b5a3cd2-6f2e-4c27-9a41-2a5e0b0f6c11"
	for _, c := range []struct {
		body, session string
		want          bool
	}{
		{`{"sessionId":"` + sid + `","status":"waiting"}`, sid, true},
		{`{"sessionId":"` + sid + `","status":"waiting"}`, "", true},
		{`{"sessionId":"` + sid + `","status":"busy"}`, sid, false},
		{`{"sessionId":"` + sid + `","status":"waiting"}`, "1c6b4de3-7a3f-4d38-8b52-3b6f1c1d7d22", false},
		{`{"sessionId":"` + sid + `","status":"wait`, sid, false},
	} {
		if err := os.WriteFile(file, []byte(c.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := sessionWaiting(file, c.session); got != c.want {
			t.Errorf("%s for %q: %v, want %v", c.body, c.session, got, c.want)
		}
	}
	if sessionWaiting(filepath.Join(dir, "none.json"), sid) {
		t.Error("a missing session record says waiting")
	}
}
