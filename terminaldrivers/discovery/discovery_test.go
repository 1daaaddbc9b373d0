package discovery

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
)

const (
	claudeSessionID = "c4574185-b4da-4732-8ac6-a358e5d2aa18"
	codexThreadID   = "01a22e24-7b86-7263-9cb6-dcc377eb327e"
)

// scene builds a machine with one tmux server holding every kind of pane
// discovery must tell apart, and returns the server's socket.
func scene(t testing.TB) (*machine, string) {
	m := newMachine(t)
	sock := m.path("tmux-1000/default")
	bash := m.write("usr/bin/bash", "binary")
	node := m.write("usr/bin/node", "binary")
	claude267, claude328, claude999 := m.install("claude", "2.1.267"), m.install("claude", "2.1.328"), m.install("claude", "2.1.999")
	codex155, codex169 := m.install("codex", "0.155.1"), m.install("codex", "0.169.0")
	home := func(name string) string { return m.path("home/" + name) }

	// %0: a shell.
	m.process(spec{pid: 100, ppid: 1, pgrp: 100, tty: 34816, tpgid: 100, start: 1000, comm: "bash", exe: bash, cwd: "/srv/p", argv: []string{"-bash"}})
	m.pane(sock, "%0", 100, "/srv/p", "main", "shell", "devbox", "$ ls\n")

	// %1: Claude Code 2.1.267 is the pane's process, idle.
	m.process(spec{pid: 200, ppid: 1, pgrp: 200, tty: 34817, tpgid: 200, start: 2000, comm: "claude", exe: claude267, cwd: "/srv/a", argv: []string{"claude"}, env: map[string]string{"HOME": home("a")}})
	claudeSession(m, home("a"), 200, 2000, claudeSessionID, "2.1.267", "idle")
	m.pane(sock, "%1", 200, "/srv/a", "main", "claude", "✳ Claude Code", fixture(t, "claude", "2.1.267", "idle-fresh"))

	// %2: a shell that started Claude Code 2.1.328, now asking for approval.
	m.process(spec{pid: 300, ppid: 1, pgrp: 300, tty: 34818, tpgid: 301, start: 3000, comm: "bash", exe: bash, cwd: "/srv/b", argv: []string{"-bash"}})
	m.process(spec{pid: 301, ppid: 300, pgrp: 301, tty: 34818, tpgid: 301, start: 3001, comm: "claude", exe: claude328, cwd: "/srv/b", argv: []string{"claude", "--resume"}, env: map[string]string{"HOME": home("b")}})
	claudeSession(m, home("b"), 301, 3001, "35c0e4c0-71f4-408f-bd75-71a1af08471e", "2.1.328", "busy")
	m.pane(sock, "%2", 300, "/srv/b", "main", "claude2", "⠂ Fix the flaky test", fixture(t, "claude", "2.1.328", "approval-bash"))

	// %3: Codex 0.155.1 under its Node wrapper, working, rollout open.
	rollout := m.write("home/c/.codex/sessions/2026/11/30/rollout-2026-11-30T20-27-52-"+codexThreadID+".jsonl",
		`{"type":"session_meta","payload":{"id":"`+codexThreadID+`"}}`+"\n"+`{"type":"event_msg","payload":{"type":"task_started","turn_id":"t"}}`+"\n")
	m.process(spec{pid: 400, ppid: 1, pgrp: 400, tty: 34819, tpgid: 400, start: 4000, comm: "node", exe: node, cwd: "/srv/c", argv: []string{"node", "/usr/bin/codex"}, env: map[string]string{"HOME": home("c")}})
	m.process(spec{pid: 401, ppid: 400, pgrp: 400, tty: 34819, tpgid: 400, start: 4001, comm: "codex", exe: codex155, cwd: "/srv/c", argv: []string{codex155}, env: map[string]string{"HOME": home("c")}, fds: []string{rollout, m.path("home/c/.codex/state_5.sqlite")}})
	m.pane(sock, "%3", 400, "/srv/c", "main", "codex", "⠴ c", fixture(t, "codex", "0.155.1", "working-slow-reply"))

	// %4: Codex 0.169.0 with its managed app-server daemon, idle.
	daemonExe := m.write("home/d/.codex/packages/app-server-daemon/releases/0.169.0-x86_64-unknown-linux-musl/bin/codex", "binary")
	m.process(spec{pid: 500, ppid: 1, pgrp: 500, tty: 34820, tpgid: 500, start: 5000, comm: "node", exe: node, cwd: "/srv/d", argv: []string{"node", "/usr/bin/codex"}, env: map[string]string{"CODEX_HOME": home("d/.codex")}})
	m.process(spec{pid: 501, ppid: 500, pgrp: 500, tty: 34820, tpgid: 500, start: 5001, comm: "codex", exe: codex169, cwd: "/srv/d", argv: []string{codex169}, env: map[string]string{"CODEX_HOME": home("d/.codex")}})
	m.process(spec{pid: 502, ppid: 501, pgrp: 502, tty: 0, tpgid: -1, start: 5002, comm: "codex", exe: daemonExe, cwd: "/srv/d", argv: []string{daemonExe, "app-server", "--listen", "unix://", "--managed-daemon"}, env: map[string]string{"CODEX_HOME": home("d/.codex")}})
	m.pane(sock, "%4", 500, "/srv/d", "main", "codex2", "d", fixture(t, "codex", "0.169.0", "idle-fresh"))

	// %5: an unprofiled Claude Code version.
	m.process(spec{pid: 600, ppid: 1, pgrp: 600, tty: 34821, tpgid: 600, start: 6000, comm: "claude", exe: claude999, cwd: "/srv/e", argv: []string{"claude"}, env: map[string]string{"HOME": home("e")}})
	m.pane(sock, "%5", 600, "/srv/e", "main", "new", "✳ Claude Code", fixture(t, "claude", "2.1.328", "idle-fresh"))

	// %6: a shell with Claude Code in the background (not the foreground).
	m.process(spec{pid: 700, ppid: 1, pgrp: 700, tty: 34822, tpgid: 700, start: 7000, comm: "bash", exe: bash, cwd: "/srv/f", argv: []string{"-bash"}})
	m.process(spec{pid: 701, ppid: 700, pgrp: 701, tty: 34822, tpgid: 700, start: 7001, comm: "claude", exe: claude267, cwd: "/srv/f", argv: []string{"claude"}, env: map[string]string{"HOME": home("f")}})
	m.pane(sock, "%6", 700, "/srv/f", "main", "bg", "devbox", "$ \n")

	// %7: Claude Code in print mode: a command, not a conversation.
	m.process(spec{pid: 800, ppid: 1, pgrp: 800, tty: 34823, tpgid: 800, start: 8000, comm: "claude", exe: claude267, cwd: "/srv/g", argv: []string{"claude", "-p", "summarise"}, env: map[string]string{"HOME": home("g")}})
	m.pane(sock, "%7", 800, "/srv/g", "main", "print", "devbox", "")

	// %8: a pane whose process is gone.
	m.pane(sock, "%8", 900, "/srv/h", "main", "gone", "devbox", "")
	return m, sock
}

func TestDiscover(t *testing.T) {
	m, sock := scene(t)
	d, err := New(m.config(sock, sock, m.path("tmux-1000/stale")))
	if err != nil {
		t.Fatal(err)
	}
	terms, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var panes []string
	for _, x := range terms {
		panes = append(panes, x.Pane.PaneID)
	}
	if want := []string{"%1", "%2", "%3", "%4", "%5"}; !slices.Equal(panes, want) {
		t.Fatalf("listed panes %v, want %v (each agent pane once; shells, background, print mode and gone panes not at all)", panes, want)
	}
	byPane := map[string]domain.Terminal{}
	for _, x := range terms {
		byPane[x.Pane.PaneID] = x
		if x.Provider != domain.ProviderTmux || x.Pane.Socket != sock || !strings.HasPrefix(x.ID, "term_") || x.Process.BootID == "" {
			t.Errorf("%s: provider/locator/id %+v", x.Pane.PaneID, x)
		}
	}
	type want struct {
		kind                 domain.AgentKind
		version, profile     string
		project, title       string
		pid                  int
		screen               domain.ScreenState
		empty                bool
		identity             domain.IdentityState
		thread               string
		activity             domain.ActivityState
		warnings             int
		sendReady, watchable bool
	}
	for pane, w := range map[string]want{
		"%1": {domain.AgentClaude, "2.1.267", "claude-2.1.267", "/srv/a", "Claude Code", 200, domain.ScreenIdle, true, domain.IdentityResolved, claudeSessionID, domain.ActivityIdle, 0, true, false},
		"%2": {domain.AgentClaude, "2.1.328", "claude-2.1.328", "/srv/b", "Fix the flaky test", 301, domain.ScreenAwaitingApproval, false, domain.IdentityResolved, "35c0e4c0-71f4-408f-bd75-71a1af08471e", domain.ActivityWorking, 0, false, true},
		"%3": {domain.AgentCodex, "0.155.1", "codex-0.155.1", "/srv/c", "c", 401, domain.ScreenWorking, true, domain.IdentityResolved, codexThreadID, domain.ActivityWorking, 0, false, true},
		"%4": {domain.AgentCodex, "0.169.0", "codex-0.169.0", "/srv/d", "d", 501, domain.ScreenIdle, true, domain.IdentityAmbiguous, "", domain.ActivityUnknown, 1, true, false},
		// An unknown version is read with its nearest lower profile.
		"%5": {domain.AgentClaude, "2.1.999", "claude-" + claude.Profiles[len(claude.Profiles)-1].Version, "/srv/e", "Claude Code", 600, domain.ScreenIdle, true, domain.IdentityUnavailable, "", domain.ActivityUnknown, 2, true, false},
	} {
		x := byPane[pane]
		got := want{x.Agent.Kind, x.Agent.Version, x.Agent.Profile, x.Project, x.Title, x.Process.PID, x.ScreenState, x.ComposerEmpty, x.NativeIdentity, x.NativeThreadID, x.DurableActivity, len(x.Warnings), x.SendReady(), x.Watchable()}
		if got != w {
			t.Errorf("%s:\n got %+v\nwant %+v\nwarnings %q", pane, got, w, x.Warnings)
		}
	}
	if w := byPane["%5"].Warnings; !slices.ContainsFunc(w, func(s string) bool {
		return strings.Contains(s, "compatibility: Claude Code 2.1.999 has no profile of its own")
	}) || !byPane["%5"].Agent.Compatibility {
		t.Errorf("unprofiled warnings %q", w)
	}

	// Listing types nothing: only list-panes and, per server, one tmux
	// process capturing every agent pane once.
	captures, captured := 0, 0
	for _, c := range m.tmuxCalls() {
		switch {
		case strings.Contains(c, " list-panes "):
		case strings.Contains(c, " capture-pane "):
			captures++
			captured += strings.Count(c, "capture-pane ")
		default:
			t.Errorf("listing ran %q", c)
		}
	}
	if servers := 1; captures != servers || captured != len(terms) {
		t.Errorf("%d capture processes for %d panes, want 1 for %d", captures, captured, len(terms))
	}
}

func TestTerminalIDFollowsTheProcessIncarnation(t *testing.T) {
	m, sock := scene(t)
	d, err := New(m.config(sock))
	if err != nil {
		t.Fatal(err)
	}
	ids := func() map[string]string {
		terms, err := d.Discover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, x := range terms {
			out[x.Pane.PaneID] = x.ID
		}
		return out
	}
	first, second := ids(), ids()
	for pane, id := range first {
		if second[pane] != id {
			t.Errorf("%s: id changed between two listings: %s then %s", pane, id, second[pane])
		}
	}
	// Claude Code in %2 is restarted from its shell: same pane, new process.
	m.kill(301)
	m.process(spec{pid: 302, ppid: 300, pgrp: 302, tty: 34818, tpgid: 302, start: 3100, comm: "claude", exe: m.path("opt/claude@2.1.328/node_modules/@anthropic-ai/claude-code/bin/claude.exe"), cwd: "/srv/b", argv: []string{"claude"}, env: map[string]string{"HOME": m.path("home/b")}})
	third := ids()
	if third["%2"] == "" || third["%2"] == first["%2"] {
		t.Errorf("%%2 after restart: id %q, before %q", third["%2"], first["%2"])
	}
	if third["%1"] != first["%1"] {
		t.Error("%1: id changed though its agent did not restart")
	}
}

func TestDiagnose(t *testing.T) {
	m, sock := scene(t)
	stale := m.path("tmux-1000/stale")
	d, err := New(m.config(sock, stale))
	if err != nil {
		t.Fatal(err)
	}
	diag, err := d.Diagnose(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !diag.Tmux.Found || diag.Tmux.Version != "3.3a" {
		t.Errorf("tmux %+v", diag.Tmux)
	}
	if len(diag.Servers) != 2 || diag.Servers[0].Panes != 9 || diag.Servers[1].Problem == "" {
		t.Errorf("servers %+v", diag.Servers)
	}
	if len(diag.Supported) != len(claude.Profiles)+len(codex.Profiles) {
		t.Errorf("supported %+v", diag.Supported)
	}
	if len(diag.Agents) != 5 || !diag.Ready() {
		t.Errorf("agents %+v ready=%v", diag.Agents, diag.Ready())
	}
	problems := strings.Join(diag.Problems(), "\n")
	if !strings.Contains(problems, "2.1.999") || !strings.Contains(problems, stale) {
		t.Errorf("problems:\n%s", problems)
	}

	none, err := New(Config{Tmux: m, OnlyExtraSockets: true, Proc: m.config().Proc})
	if err != nil {
		t.Fatal(err)
	}
	if terms, err := none.Discover(context.Background()); err != nil || len(terms) != 0 {
		t.Errorf("no servers: %v, %v", terms, err)
	}
}

func TestSocketsFromTheUsersSocketDir(t *testing.T) {
	m, _ := scene(t)
	dir := t.TempDir()
	live := filepath.Join(dir, "default")
	l, err := net.Listen("unix", live)
	if err != nil {
		t.Skipf("cannot make a unix socket here: %v", err)
	}
	defer l.Close()
	for _, name := range []string{"dead-1", "dead-2"} {
		dead, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, name), Net: "unix"})
		if err != nil {
			t.Fatal(err)
		}
		dead.SetUnlinkOnClose(false)
		dead.Close()
	}
	d, err := New(Config{Tmux: m, SocketDir: dir, ExtraSockets: []string{"/run/extra", live}, Proc: m.config().Proc})
	if err != nil {
		t.Fatal(err)
	}
	got, stale, err := d.sockets()
	if err != nil || !slices.Equal(got, []string{live, "/run/extra"}) || stale != 2 {
		t.Fatalf("sockets = %v, %d stale, %v", got, stale, err)
	}
	diag, err := d.Diagnose(context.Background())
	if err != nil || diag.StaleSockets != 2 || len(diag.Servers) != 2 {
		t.Fatalf("Diagnose: %d stale, servers %+v, %v", diag.StaleSockets, diag.Servers, err)
	}
	// Where it looked, for a person whose agent is not found.
	if !slices.Equal(diag.Searched, []string{dir + " (this user's tmux sockets)", "/run/extra", live}) {
		t.Fatalf("searched %q", diag.Searched)
	}
	empty, err := New(Config{Tmux: m, SocketDir: t.TempDir(), Proc: m.config().Proc})
	if err != nil {
		t.Fatal(err)
	}
	diag, err = empty.Diagnose(context.Background())
	if p := strings.Join(diag.Problems(), "\n"); err != nil || !strings.Contains(p, "no tmux server found in "+diag.Searched[0]) || !strings.Contains(p, "--tmux-sockets") {
		t.Fatalf("no server: %q %v", p, err)
	}
}

func TestObserveOnePane(t *testing.T) {
	m, sock := scene(t)
	d, err := New(m.config(sock))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	listed, err := d.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := len(m.tmuxCalls())
	x, err := d.Observe(ctx, domain.PaneLocator{Socket: sock, PaneID: "%2"})
	if err != nil {
		t.Fatal(err)
	}
	if x.ID != listed[1].ID || x.ScreenState != domain.ScreenAwaitingApproval {
		t.Errorf("Observe(%%2) = %s %s, listed %s", x.ID, x.ScreenState, listed[1].ID)
	}
	if calls := m.tmuxCalls()[before:]; len(calls) != 2 {
		t.Errorf("Observe ran %q, want one list-panes and one capture", calls)
	}
	for _, pane := range []string{"%0", "%6", "%8", "%99"} {
		if _, err := d.Observe(ctx, domain.PaneLocator{Socket: sock, PaneID: pane}); !errors.Is(err, ErrPaneGone) {
			t.Errorf("Observe(%s): %v, want ErrTerminalGone", pane, err)
		}
	}
	if _, err := d.Observe(ctx, domain.PaneLocator{Socket: m.path("tmux-1000/none"), PaneID: "%1"}); !errors.Is(err, ErrPaneGone) {
		t.Errorf("Observe on a dead server: %v, want ErrTerminalGone", err)
	}
	m.kill(301)
	m.process(spec{pid: 302, ppid: 300, pgrp: 302, tty: 34818, tpgid: 302, start: 3100, comm: "claude", exe: m.path("opt/claude@2.1.328/node_modules/@anthropic-ai/claude-code/bin/claude.exe"), cwd: "/srv/b", argv: []string{"claude"}, env: map[string]string{"HOME": m.path("home/b")}})
	again, err := d.Observe(ctx, domain.PaneLocator{Socket: sock, PaneID: "%2"})
	if err != nil || again.ID == x.ID {
		t.Errorf("Observe after a restart: %s, %v; before %s", again.ID, err, x.ID)
	}
	if _, err := d.Find(ctx, x.ID); !errors.Is(err, ErrPaneGone) || !errors.Is(err, domain.ErrTerminalGone) {
		t.Errorf("Find(the id before the restart): %v, want ErrPaneGone", err)
	}
	if got, err := d.Find(ctx, again.ID); err != nil || got.Pane.PaneID != "%2" {
		t.Errorf("Find(the id after the restart) = %+v, %v", got.Pane, err)
	}
}
