package domain

import (
	"strings"
	"testing"
)

func TestTerminalIDFor(t *testing.T) {
	pane := PaneLocator{Socket: "/run/tmux/default", PaneID: "%3"}
	inc := Incarnation{BootID: "b1", PID: 4242, StartTicks: 13044}
	id := TerminalIDFor(pane, inc)
	if !strings.HasPrefix(id, "term_") || len(id) != len("term_")+24 {
		t.Fatalf("id %q: want term_ + 24 hex digits", id)
	}
	if again := TerminalIDFor(pane, inc); again != id {
		t.Fatalf("same pane and incarnation gave %q then %q", id, again)
	}
	changes := map[string]func() (PaneLocator, Incarnation){
		"restarted agent (new pid)": func() (PaneLocator, Incarnation) { i := inc; i.PID++; return pane, i },
		"reused pid, new start":     func() (PaneLocator, Incarnation) { i := inc; i.StartTicks++; return pane, i },
		"another boot":              func() (PaneLocator, Incarnation) { i := inc; i.BootID = "b2"; return pane, i },
		"another pane":              func() (PaneLocator, Incarnation) { p := pane; p.PaneID = "%4"; return p, inc },
		"another server":            func() (PaneLocator, Incarnation) { p := pane; p.Socket = "/tmp/other"; return p, inc },
	}
	for name, change := range changes {
		if got := TerminalIDFor(change()); got == id {
			t.Errorf("%s: id did not change", name)
		}
	}
}

func TestTerminalSendReadyAndWatchable(t *testing.T) {
	profiled := Agent{Kind: AgentClaude, Version: "2.1.328", Profile: "claude-2.1.328"}
	unprofiled := Agent{Kind: AgentClaude, Version: "2.1.999", Profile: ProfileUnprofiled}
	cases := []struct {
		name      string
		term      Terminal
		send      bool
		watchable bool
	}{
		{"idle and empty", Terminal{Agent: profiled, ScreenState: ScreenIdle, ComposerEmpty: true}, true, false},
		{"idle with a draft", Terminal{Agent: profiled, ScreenState: ScreenIdle}, false, false},
		{"unprofiled", Terminal{Agent: unprofiled, ScreenState: ScreenIdle, ComposerEmpty: true}, false, false},
		{"no profile at all", Terminal{Agent: Agent{Kind: AgentCodex}, ScreenState: ScreenIdle, ComposerEmpty: true}, false, false},
		{"working", Terminal{Agent: profiled, ScreenState: ScreenWorking, ComposerEmpty: true}, false, true},
		{"approval", Terminal{Agent: profiled, ScreenState: ScreenAwaitingApproval}, false, true},
		{"interaction", Terminal{Agent: profiled, ScreenState: ScreenAwaitingInteraction}, false, false},
		{"startup dialog", Terminal{Agent: profiled, ScreenState: ScreenStartupDialog}, false, false},
		{"unknown", Terminal{Agent: profiled, ScreenState: ScreenUnknown, ComposerEmpty: true}, false, false},
	}
	for _, c := range cases {
		if got := c.term.SendReady(); got != c.send {
			t.Errorf("%s: SendReady = %v, want %v", c.name, got, c.send)
		}
		if got := c.term.Watchable(); got != c.watchable {
			t.Errorf("%s: Watchable = %v, want %v", c.name, got, c.watchable)
		}
	}
}

func TestTerminalDiagnosis(t *testing.T) {
	supported := []Agent{{Kind: AgentCodex, Version: "0.155.1", Profile: "codex-0.155.1"}, {Kind: AgentCodex, Version: "0.169.0", Profile: "codex-0.169.0"}}
	ok := TerminalDiagnosis{
		Tmux:      TmuxStatus{Found: true, Version: "3.3a"},
		Servers:   []TmuxServerStatus{{Socket: "/tmp/tmux-1/default", Panes: 2}},
		Agents:    []AgentPresence{{Agent: supported[0], Panes: 1}},
		Supported: supported,
	}
	if !ok.Ready() || len(ok.Problems()) != 0 {
		t.Fatalf("healthy diagnosis: ready=%v problems=%q", ok.Ready(), ok.Problems())
	}

	stale := ok
	stale.Servers = append([]TmuxServerStatus{}, ok.Servers...)
	stale.Servers = append(stale.Servers, TmuxServerStatus{Socket: "/tmp/tmux-1/old", Problem: "no server running"})
	if !stale.Ready() || len(stale.Problems()) != 1 {
		t.Fatalf("stale socket: ready=%v problems=%q", stale.Ready(), stale.Problems())
	}

	unprofiled := ok
	unprofiled.Agents = []AgentPresence{{Agent: Agent{Kind: AgentCodex, Version: "0.170.0", Profile: ProfileUnprofiled}, Panes: 1}}
	if unprofiled.Ready() {
		t.Fatal("unprofiled agent: Ready")
	}
	if p := unprofiled.Problems(); len(p) != 1 || !strings.Contains(p[0], "0.155.1, 0.169.0") || !strings.Contains(p[0], "0.170.0") {
		t.Fatalf("unprofiled agent problems: %q", p)
	}

	noTmux := TerminalDiagnosis{Tmux: TmuxStatus{Problem: "executable file not found"}}
	if noTmux.Ready() || len(noTmux.Problems()) != 1 {
		t.Fatalf("no tmux: ready=%v problems=%q", noTmux.Ready(), noTmux.Problems())
	}
}
