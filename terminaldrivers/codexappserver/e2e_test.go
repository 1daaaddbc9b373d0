package codexappserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
	"akk/terminaldrivers/codex"
)

// daemonAgents are the pinned Codex versions whose TUI hands its threads
// to a managed app-server daemon.
func daemonAgents(t *testing.T) []agenttest.Agent {
	t.Helper()
	var out []agenttest.Agent
	for _, a := range agenttest.RequireAgents(t, "codex") {
		if slices.Contains(codex.DaemonVersions(), a.Version) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		t.Fatal("no pinned Codex runs a managed app-server daemon")
	}
	return out
}

// tuiDaemon starts the agent's TUI in tmux and connects to the managed
// daemon it starts; the connection ends with the test.
func tuiDaemon(ctx context.Context, t *testing.T, a agenttest.Agent) (*agenttest.Env, *Client) {
	t.Helper()
	e := agenttest.New(t, a, agenttest.Options{})
	e.StartReady()
	sock := SocketPath(e.CodexHome)
	for deadline := time.Now().Add(agenttest.StartTimeout); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no control socket at %s", sock)
		}
	}
	c, err := Dial(ctx, sock, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return e, c
}

// follower reads one connection's messages.
type follower struct {
	t  *testing.T
	ch chan Message
}

// statusActive waits for thread to turn active (a notification every
// client hears).
func (f follower) statusActive(what, thread string, timeout time.Duration) {
	f.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m := <-f.ch:
			var ev struct {
				ThreadID string       `json:"threadId"`
				Status   ThreadStatus `json:"status"`
			}
			if m.Method == "thread/status/changed" && json.Unmarshal(m.Params, &ev) == nil && ev.ThreadID == thread && ev.Status.Type == "active" {
				return
			}
		case <-deadline:
			f.t.Fatalf("%s: thread %s not active within %s", what, thread, timeout)
		}
	}
}

// finalOf waits for the turn's completion and returns its status and its
// last agent message (from the items completed on the way).
func (f follower) finalOf(what, thread, turnID string, timeout time.Duration) (status, final string) {
	f.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m := <-f.ch:
			switch m.Method {
			case "item/completed":
				var ev ItemEvent
				if json.Unmarshal(m.Params, &ev) == nil && ev.ThreadID == thread && ev.TurnID == turnID && ev.Item.Type == "agentMessage" {
					final = ev.Item.Text
				}
			case "turn/completed":
				var ev TurnEvent
				if json.Unmarshal(m.Params, &ev) == nil && ev.ThreadID == thread && ev.Turn.ID == turnID {
					if f := ev.Turn.FinalMessage(); f != "" {
						final = f
					}
					return ev.Turn.Status, final
				}
			}
		case <-deadline:
			f.t.Fatalf("%s: turn %s not completed within %s", what, turnID, timeout)
		}
	}
}

// The client against each daemon the real TUI started in tmux, with the
// fake model: the TUI's thread is listed exactly, a turn the human types in
// the pane is followed from start to its final message, a turn AKK starts
// runs once (one model call) and shows in the pane, an interrupt ends a
// turn, and a killed daemon ends the connection.
func TestE2EAppServer(t *testing.T) {
	agenttest.RequireTmux(t)
	for _, a := range daemonAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			e, c := tuiDaemon(ctx, t, a)
			if home, _ := filepath.EvalSymlinks(e.CodexHome); c.Info.CodexHome != e.CodexHome && c.Info.CodexHome != home {
				t.Fatalf("daemon serves %q, want %q", c.Info.CodexHome, e.CodexHome)
			}

			ids, err := c.LoadedThreads(ctx)
			if err != nil || len(ids) != 1 {
				t.Fatalf("loaded threads = %v, %v; want the TUI's one", ids, err)
			}
			thread := ids[0]
			th, err := c.ReadThread(ctx, thread, false)
			if err != nil {
				t.Fatal(err)
			}
			project, _ := filepath.EvalSymlinks(e.ProjectDir)
			if (th.Cwd != e.ProjectDir && th.Cwd != project) || th.CLIVersion != a.Version || th.ID != thread {
				t.Fatalf("thread = %+v, want cwd %s and version %s", th, e.ProjectDir, a.Version)
			}

			f := follower{t: t, ch: make(chan Message, 1024)}
			stop := c.Subscribe(f.ch)
			defer stop()

			// A turn the human types in the pane. A thread with no turn yet
			// has no rollout and cannot be followed; every client hears it
			// turn active, then follows it and reads which turn runs.
			human := "Say hello to the person at the pane"
			e.Submit(human)
			f.statusActive("human turn", thread, agenttest.TurnTimeout)
			for deadline := time.Now().Add(agenttest.TurnTimeout); ; time.Sleep(50 * time.Millisecond) {
				_, err := c.Follow(ctx, thread)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("follow the thread once its turn runs: %v", err)
				}
			}
			th, err = c.ReadThread(ctx, thread, true)
			if err != nil || len(th.Turns) == 0 {
				t.Fatalf("read the followed thread: %+v, %v", th, err)
			}
			running := th.Turns[len(th.Turns)-1]
			status, final := running.Status, running.FinalMessage()
			if status == "inProgress" {
				status, final = f.finalOf("human turn", thread, running.ID, agenttest.TurnTimeout)
			}
			if status != "completed" || !strings.Contains(final, fakemodel.ReplyToken(human)) {
				t.Fatalf("human turn ended %s with %q, want completed with %s", status, final, fakemodel.ReplyToken(human))
			}
			e.WaitIdle(agenttest.TurnTimeout)

			// A turn AKK starts on the same thread.
			sent := "Say hello to the controller through the backend"
			turn, err := c.StartTurn(ctx, thread, sent, "msg-backend-1", "", "")
			if err != nil {
				t.Fatal(err)
			}
			status, final = f.finalOf("backend turn", thread, turn.ID, agenttest.TurnTimeout)
			if status != "completed" || !strings.Contains(final, fakemodel.ReplyToken(sent)) {
				t.Fatalf("backend turn ended %s with %q", status, final)
			}
			e.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken(sent)) // the pane shows it as if typed there
			calls := 0
			for _, r := range e.Requests() {
				if !r.Aux && r.UserText == sent {
					calls++
				}
			}
			if calls != 1 {
				t.Fatalf("the backend turn made %d model calls, want 1", calls)
			}
			e.WaitIdle(agenttest.TurnTimeout)

			// Interrupt a slow turn.
			slow := "Take your time " + fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "40")
			turn, err = c.StartTurn(ctx, thread, slow, "msg-backend-2", "", "")
			if err != nil {
				t.Fatal(err)
			}
			e.WaitModelRequest("the slow turn", agenttest.TurnTimeout, func(r fakemodel.Request) bool { return r.UserText == slow })
			if err := c.InterruptTurn(ctx, thread, turn.ID); err != nil {
				t.Fatal(err)
			}
			if status, _ := f.finalOf("interrupted turn", thread, turn.ID, agenttest.TurnTimeout); status != "interrupted" {
				t.Fatalf("interrupted turn ended %s", status)
			}
			e.WaitIdle(agenttest.TurnTimeout)

			// The daemon killed mid-turn ends the connection: never a
			// completion.
			turn, err = c.StartTurn(ctx, thread, slow+" again", "msg-backend-3", "", "")
			if err != nil {
				t.Fatal(err)
			}
			e.WaitModelRequest("the second slow turn", agenttest.TurnTimeout, func(r fakemodel.Request) bool { return r.UserText == slow+" again" })
			e.KillCodexDaemon()
			select {
			case <-c.Done():
			case <-time.After(agenttest.TurnTimeout):
				t.Fatal("the connection outlived its daemon")
			}
			for {
				select {
				case m := <-f.ch:
					if m.Method == "turn/completed" {
						var ev TurnEvent
						if json.Unmarshal(m.Params, &ev) == nil && ev.Turn.ID == turn.ID {
							t.Fatalf("a killed daemon's turn completed: %s", m.Params)
						}
					}
					continue
				default:
				}
				break
			}
			if err := c.Call(ctx, "thread/loaded/list", map[string]any{}, nil); !errors.Is(err, ErrClosed) {
				t.Fatalf("a call after the daemon died: %v, want ErrClosed", err)
			}
		})
	}
}
