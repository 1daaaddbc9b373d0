package discovery

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
)

// withoutProfiles is a driver whose versions all lack a profile.
type withoutProfiles struct{ agent.Driver }

func (withoutProfiles) Profiles() []agent.Profile { return nil }

// TestE2EDiscover lists real panes of every pinned agent version, each in
// its own isolated tmux server, plus a plain shell pane, and follows them
// through what a human does: a slow task typed by hand (working), a
// questionnaire (awaiting_interaction), a permission prompt
// (awaiting_approval), and an agent restart (a new terminal id). One agent start per version, plus one restart per kind; the
// steps run in sequence.
func TestE2EDiscover(t *testing.T) {
	agents := agenttest.RequireAgents(t)
	model := fakemodel.New(fakemodel.Options{})
	if err := model.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })

	envs := map[string]*agenttest.Env{} // by socket path
	var order []*agenttest.Env
	for _, a := range agents {
		e := agenttest.New(t, a, agenttest.Options{Model: model})
		e.Start()
		order = append(order, e)
	}
	var sockets []string
	for _, e := range order {
		e.WaitReady(agenttest.StartTimeout)
		envs[e.SocketPath()] = e
		sockets = append(sockets, e.SocketPath())
	}
	// A plain shell beside the first agent: not a conversation.
	if _, err := order[0].Tmux("new-window", "-d", "-n", "shell", "bash", "--noprofile", "--norc"); err != nil {
		t.Fatal(err)
	}

	d, err := New(Config{ExtraSockets: sockets, OnlyExtraSockets: true})
	if err != nil {
		t.Fatal(err)
	}
	list := func(t *testing.T) map[string]domain.Terminal {
		t.Helper()
		// How long a listing takes is measured by the scale benchmark
		// (make bench-scale), not asserted here: a busy machine is slow.
		terms, err := d.Discover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		bySocket := map[string]domain.Terminal{}
		for _, x := range terms {
			if _, dup := bySocket[x.Pane.Socket]; dup {
				t.Fatalf("two terminals listed for the server %s: %+v", x.Pane.Socket, terms)
			}
			bySocket[x.Pane.Socket] = x
		}
		return bySocket
	}

	// Claude Code 2.1.328 may offer to make auto mode the default some time
	// after its composer first shows: discovery must call that a startup
	// dialog, and a human answers it.
	first := list(t)
	for sock, x := range first {
		if x.ScreenState == domain.ScreenStartupDialog {
			t.Logf("%s: startup dialog listed; answering it", envs[sock].Agent.Name())
			envs[sock].WaitReady(agenttest.StartTimeout)
			first = list(t)
		}
	}
	t.Run("idle", func(t *testing.T) {
		if len(first) != len(order) {
			t.Fatalf("listed %d terminals, want %d (one per agent, the shell pane not at all): %+v", len(first), len(order), first)
		}
		for sock, e := range envs {
			x, ok := first[sock]
			if !ok {
				t.Errorf("%s: not listed", e.Agent.Name())
				continue
			}
			want := domain.Agent{Kind: domain.AgentKind(e.Agent.Kind), Version: e.Agent.Version, Profile: e.Agent.Kind + "-" + e.Agent.Version,
				ThreadProbe: e.Agent.Kind == string(domain.AgentCodex)}
			if x.Agent != want || x.Project != e.ProjectDir || x.ScreenState != domain.ScreenIdle || !x.ComposerEmpty || !x.SendReady() {
				t.Errorf("%s: %s", e.Agent.Name(), describe(x))
			}
			if x.Pane.PaneID == "" || x.Process.PID == 0 || x.Process.StartTicks == 0 {
				t.Errorf("%s: no pane or process incarnation: %s", e.Agent.Name(), describe(x))
			}
			wantIdentity := map[string]domain.IdentityState{
				"claude@2.1.267": domain.IdentityResolved, "claude@2.1.328": domain.IdentityResolved,
				"codex@0.155.1": domain.IdentityVerifiedAbsent, "codex@0.169.0": domain.IdentityAmbiguous,
			}[e.Agent.Name()]
			if wantIdentity != "" && x.NativeIdentity != wantIdentity {
				t.Errorf("%s: native identity %s, want %s (%q)", e.Agent.Name(), x.NativeIdentity, wantIdentity, x.Warnings)
			}
		}
		again := list(t)
		for sock, x := range first {
			if again[sock].ID != x.ID {
				t.Errorf("%s: terminal id %s then %s across two listings", envs[sock].Agent.Name(), x.ID, again[sock].ID)
			}
		}
	})

	// waitFor lists until the agent's terminal satisfies cond.
	waitFor := func(t *testing.T, e *agenttest.Env, what string, cond func(domain.Terminal) bool) domain.Terminal {
		t.Helper()
		deadline := time.Now().Add(agenttest.TurnTimeout)
		var last domain.Terminal
		for time.Now().Before(deadline) {
			last = list(t)[e.SocketPath()]
			if cond(last) {
				return last
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("%s: never %s; last %s\n%s", e.Agent.Name(), what, describe(last), e.Capture())
		return last
	}

	// The versions run side by side, each in its own server; the steps of
	// one version run in sequence in its pane.
	t.Run("steps", func(t *testing.T) {
		for _, e := range order {
			t.Run(e.Agent.Name(), func(t *testing.T) {
				t.Parallel()
				e := e.WithT(t)
				t.Run("human typed slow task is working", func(t *testing.T) {
					e := e.WithT(t)
					// Half the time thinking, then one word a second.
					e.Submit("Take your time " + fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "8"))
					// The screen may show the agent at work a moment before its
					// record has the turn: wait for both (the reply takes 8 s).
					durable := map[string]domain.ActivityState{"claude@2.1.267": domain.ActivityWorking, "claude@2.1.328": domain.ActivityWorking, "codex@0.155.1": domain.ActivityWorking, "codex@0.169.0": domain.ActivityUnknown}
					want := durable[e.Agent.Name()]
					x := waitFor(t, e, "working, on screen and in its record", func(x domain.Terminal) bool {
						return x.ScreenState == domain.ScreenWorking && (want == "" || x.DurableActivity == want)
					})
					if x.SendReady() || !x.Watchable() {
						t.Errorf("working terminal: send ready %v, watchable %v", x.SendReady(), x.Watchable())
					}
					// While the reply streams, Codex 0.169.0 shows no busy row. A
					// listing taken before a capture that shows the reply unfinished
					// was taken while it streamed.
					e.WaitForText(agenttest.TurnTimeout, "slow-2")
					x = list(t)[e.SocketPath()]
					if screen := e.Capture(); !strings.Contains(screen, "done.") {
						t.Logf("listed while the reply streamed: %s", x.ScreenState)
						if x.ScreenState != domain.ScreenWorking || x.SendReady() {
							t.Errorf("while the reply streams: %s\n%s", describe(x), screen)
						}
					}
					x = waitFor(t, e, "send ready after the reply", domain.Terminal.SendReady)
					identity := map[string]domain.IdentityState{"claude@2.1.267": domain.IdentityResolved, "claude@2.1.328": domain.IdentityResolved, "codex@0.155.1": domain.IdentityResolved, "codex@0.169.0": domain.IdentityAmbiguous}
					if want := identity[e.Agent.Name()]; want != "" && x.NativeIdentity != want {
						t.Errorf("native identity after a turn: %s, want %s", x.NativeIdentity, want)
					}
					if x.NativeIdentity == domain.IdentityResolved && x.NativeThreadID == "" {
						t.Error("resolved identity without a thread id")
					}
				})
				t.Run("questionnaire awaits interaction", func(t *testing.T) {
					e := e.WithT(t)
					if e.Agent.Kind == agenttest.KindCodex {
						// request_user_input is offered in Plan mode only.
						e.PlanMode()
					}
					e.Submit("Ask me first " + fakemodel.Marker(fakemodel.ScenarioAsk))
					x := waitFor(t, e, "awaiting interaction", func(x domain.Terminal) bool { return x.ScreenState == domain.ScreenAwaitingInteraction })
					if x.SendReady() {
						t.Error("questionnaire: send ready")
					}
					e.Settle()
					e.Press("Enter") // the first option
					waitFor(t, e, "send ready after the answer", domain.Terminal.SendReady)
					if e.Agent.Kind == agenttest.KindCodex {
						e.DefaultMode() // back to Default mode
					}
				})
				t.Run("permission prompt awaits approval", func(t *testing.T) {
					e := e.WithT(t)
					e.Submit("Run the probe " + fakemodel.Marker(fakemodel.ScenarioBash))
					x := waitFor(t, e, "awaiting approval", func(x domain.Terminal) bool { return x.ScreenState == domain.ScreenAwaitingApproval })
					if x.SendReady() || !x.Watchable() {
						t.Errorf("approval prompt: send ready %v, watchable %v", x.SendReady(), x.Watchable())
					}
					e.Settle()
					e.Press("Escape")
					waitFor(t, e, "idle after declining", func(x domain.Terminal) bool { return x.ScreenState == domain.ScreenIdle })
					if e.Agent.Kind == agenttest.KindClaude {
						e.Press("C-u")
					}
					waitFor(t, e, "send ready again", domain.Terminal.SendReady)
				})
			})
		}
	})

	t.Run("unprofiled versions are listed, never send ready", func(t *testing.T) {
		bare, err := New(Config{ExtraSockets: sockets, OnlyExtraSockets: true, Drivers: []agent.Driver{withoutProfiles{claude.Driver{}}, withoutProfiles{codex.Driver{}}}})
		if err != nil {
			t.Fatal(err)
		}
		terms, err := bare.Discover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(terms) != len(order) {
			t.Fatalf("listed %d terminals, want %d", len(terms), len(order))
		}
		for _, x := range terms {
			e := envs[x.Pane.Socket]
			if x.Agent.Profile != domain.ProfileUnprofiled || x.Agent.Version != e.Agent.Version || x.ScreenState != domain.ScreenUnknown || x.SendReady() || len(x.Warnings) == 0 {
				t.Errorf("%s without a profile: %s", e.Agent.Name(), describe(x))
			}
		}
	})

	t.Run("agent started from a shell", func(t *testing.T) {
		var e *agenttest.Env
		for _, c := range order {
			if c.Agent.Kind == agenttest.KindClaude {
				e = c.WithT(t)
				break
			}
		}
		if e == nil {
			t.Skip("no Claude Code version pinned")
		}
		out, err := e.Tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "-c", e.ProjectDir, "bash", "--noprofile", "--norc")
		if err != nil {
			t.Fatal(err)
		}
		pane := strings.TrimSpace(out)
		cmd := "env " + strings.Join(e.AgentEnv(), " ") + " " + e.Agent.Entry()
		if _, err := e.Tmux("send-keys", "-t", pane, "-l", cmd); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Tmux("send-keys", "-t", pane, "Enter"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(agenttest.StartTimeout)
		for {
			terms, err := d.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var x domain.Terminal
			for _, c := range terms {
				if c.Pane.Socket == e.SocketPath() && c.Pane.PaneID == pane {
					x = c
				}
			}
			if x.ID != "" && x.ScreenState == domain.ScreenIdle {
				if x.Agent.Version != e.Agent.Version || x.Project != e.ProjectDir || x.NativeIdentity != domain.IdentityResolved {
					t.Errorf("agent under a shell: %s", describe(x))
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("agent started from a shell never listed idle; last %s", describe(x))
			}
			time.Sleep(300 * time.Millisecond)
		}
		if _, err := e.Tmux("kill-pane", "-t", pane); err != nil {
			t.Fatal(err)
		}
	})

	// Restart one agent of each kind in its pane: same pane, new process
	// incarnation, new terminal id.
	restarted := map[string]bool{}
	for _, e := range order {
		if restarted[e.Agent.Kind] {
			continue
		}
		restarted[e.Agent.Kind] = true
		t.Run(e.Agent.Name()+"/restart", func(t *testing.T) {
			e := e.WithT(t)
			before := list(t)[e.SocketPath()]
			args := append([]string{"respawn-pane", "-k", "-t", e.Target(), "env"}, e.AgentEnv()...)
			if _, err := e.Tmux(append(args, e.Agent.Entry())...); err != nil {
				t.Fatal(err)
			}
			e.WaitReady(agenttest.StartTimeout)
			after := waitFor(t, e, "listed again", func(x domain.Terminal) bool { return x.ID != "" && x.ScreenState == domain.ScreenIdle })
			if after.Pane != before.Pane {
				t.Errorf("pane changed across the restart: %+v then %+v", before.Pane, after.Pane)
			}
			if after.Process == before.Process || after.ID == before.ID {
				t.Errorf("restarted agent kept its incarnation or terminal id: %s then %s", describe(before), describe(after))
			}
		})
	}
}

func describe(x domain.Terminal) string {
	return fmt.Sprintf("%s pane %s pid %d agent %s/%s/%s project %s screen %s empty %v identity %s thread %q activity %s warnings %s",
		x.ID, x.Pane.PaneID, x.Process.PID, x.Agent.Kind, x.Agent.Version, x.Agent.Profile, x.Project, x.ScreenState, x.ComposerEmpty,
		x.NativeIdentity, x.NativeThreadID, x.DurableActivity, strings.Join(x.Warnings, "; "))
}
