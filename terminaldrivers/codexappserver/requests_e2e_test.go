package codexappserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// waitRequest waits for the daemon to ask this connection method about
// thread, skipping everything else.
func (f follower) waitRequest(what, method, thread string, timeout time.Duration) Message {
	f.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m := <-f.ch:
			if !m.IsRequest() || m.Method != method {
				continue
			}
			if a, ok := ParseCommandApproval(m); ok && a.ThreadID == thread {
				return m
			}
			if r, ok := ParseUserInput(m); ok && r.ThreadID == thread {
				return m
			}
			f.t.Fatalf("%s: a %s request that does not parse, or for another thread: %s", what, method, m.Params)
		case <-deadline:
			f.t.Fatalf("%s: no %s request within %s", what, method, timeout)
		}
	}
}

// waitResolved waits for the daemon to say req needs no answer any more.
func (f follower) waitResolved(what string, req Message, timeout time.Duration) {
	f.t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case m := <-f.ch:
			if r, ok := ParseResolved(m); ok && r.Resolves(req) {
				return
			}
		case <-deadline:
			f.t.Fatalf("%s: request %s not resolved within %s", what, req.ID, timeout)
		}
	}
}

// The daemon's server requests, answered through the client, against each
// daemon the real TUI started in tmux, with the fake model: a command a
// person's turn asks to run (AKK follows the thread after the pane shows
// the prompt) is approved once through AKK, the pane's own prompt closes
// and the command runs; a command a turn AKK started asks to
// run is declined and never runs; a question the agent asks in a person's
// Plan-mode turn is answered through AKK with one of its options, which
// reaches the model, and the pane's question closes. Answers the request
// does not offer send nothing.
func TestE2EAppServerRequests(t *testing.T) {
	agenttest.RequireTmux(t)
	for _, a := range daemonAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			e, c := tuiDaemon(ctx, t, a)
			ids, err := c.LoadedThreads(ctx)
			if err != nil || len(ids) != 1 {
				t.Fatalf("loaded threads = %v, %v; want the TUI's one", ids, err)
			}
			thread := ids[0]
			f := follower{t: t, ch: make(chan Message, 1024)}
			stop := c.Subscribe(f.ch)
			defer stop()

			// A person's turn asks to run a command. AKK follows the
			// thread only once the pane shows the prompt, and is asked
			// too: following a thread hands the new subscriber the
			// requests still pending.
			probe := filepath.Join(e.ProjectDir, "akk-approval-probe")
			human := "Run the probe " + fakemodel.Marker(fakemodel.ScenarioBash)
			e.Submit(human)
			f.statusActive("the person's turn", thread, agenttest.TurnTimeout)
			e.WaitFor("the pane's own approval prompt", agenttest.TurnTimeout, func(s string) bool { return agenttest.ApprovalPrompt(a.Kind, s) })
			for deadline := time.Now().Add(agenttest.TurnTimeout); ; time.Sleep(50 * time.Millisecond) {
				if _, err := c.Follow(ctx, thread); err == nil {
					break
				} else if time.Now().After(deadline) {
					t.Fatalf("follow the thread once its turn runs: %v", err)
				}
			}
			req := f.waitRequest("the person's command", MethodCommandApproval, thread, agenttest.TurnTimeout)
			ap, _ := ParseCommandApproval(req)
			if ap.Command == nil || !strings.Contains(*ap.Command, "akk-approval-probe") {
				t.Fatalf("the approval names %v, want the probe command", ap.Command)
			}
			// Nothing but a one-time decision is sent.
			if err := c.DecideCommand(ctx, req, Decision("acceptForSession")); !errors.Is(err, ErrNotAnswerable) {
				t.Fatalf("a persistent grant: %v, want ErrNotAnswerable", err)
			}
			if err := c.DecideCommand(ctx, req, ApproveOnce); err != nil {
				t.Fatal(err)
			}
			f.waitResolved("the approved command", req, agenttest.TurnTimeout)
			e.WaitFor("the pane's prompt closed", agenttest.TurnTimeout, func(s string) bool { return !agenttest.ApprovalPrompt(a.Kind, s) })
			status, final := f.finalOf("the person's turn", thread, ap.TurnID, agenttest.TurnTimeout)
			if status != "completed" || !strings.Contains(final, "akk-bash-ran") {
				t.Fatalf("the approved turn ended %s with %q, want the command's output", status, final)
			}
			if _, err := os.Stat(probe); err != nil {
				t.Fatalf("the approved command did not run: %v", err)
			}
			e.WaitIdle(agenttest.TurnTimeout)

			// A turn AKK starts asks to run a command; AKK declines it.
			if err := os.Remove(probe); err != nil {
				t.Fatal(err)
			}
			sent := "Run the probe once more " + fakemodel.Marker(fakemodel.ScenarioBash)
			turn, err := c.StartTurn(ctx, thread, sent, "msg-requests-1", "", "")
			if err != nil {
				t.Fatal(err)
			}
			req = f.waitRequest("AKK's command", MethodCommandApproval, thread, agenttest.TurnTimeout)
			if ap, _ = ParseCommandApproval(req); ap.TurnID != turn.ID {
				t.Fatalf("the approval is of turn %s, want %s", ap.TurnID, turn.ID)
			}
			if err := c.DecideCommand(ctx, req, Decline); err != nil {
				t.Fatal(err)
			}
			f.waitResolved("the declined command", req, agenttest.TurnTimeout)
			if status, _ := f.finalOf("AKK's turn", thread, turn.ID, agenttest.TurnTimeout); status != "completed" {
				t.Fatalf("the declined turn ended %s", status)
			}
			if _, err := os.Stat(probe); !os.IsNotExist(err) {
				t.Fatalf("the declined command ran: %v", err)
			}
			e.WaitIdle(agenttest.TurnTimeout)

			// A person's Plan-mode turn asks a question; AKK answers it.
			e.PlanMode()
			ask := "Ask me first " + fakemodel.Marker(fakemodel.ScenarioAsk)
			e.Submit(ask)
			req = f.waitRequest("the question", MethodUserInput, thread, agenttest.TurnTimeout)
			ui, _ := ParseUserInput(req)
			q := fakemodel.Questions[0]
			if len(ui.Questions) != 1 || ui.Questions[0].ID != q.ID || ui.Questions[0].Question != q.Question || len(ui.Questions[0].Options) != len(q.Options) {
				t.Fatalf("the question reads %+v, want %+v", ui.Questions, q)
			}
			e.WaitFor("the pane's own question", agenttest.TurnTimeout, func(s string) bool { return agenttest.Questionnaire(a.Kind, s) })
			for _, bad := range []map[string]Answer{
				{q.ID: {Option: "Purple"}},
				{"other-question": {Option: q.Options[1].Label}},
				{q.ID: {Option: q.Options[1].Label, Text: "both"}},
				{q.ID: {Text: "non\u00a0breaking"}},
			} {
				if err := c.AnswerUserInput(ctx, req, bad); !errors.Is(err, ErrNotAnswerable) {
					t.Fatalf("answer %+v: %v, want ErrNotAnswerable", bad, err)
				}
			}
			if err := c.AnswerUserInput(ctx, req, map[string]Answer{q.ID: {Option: q.Options[1].Label}}); err != nil {
				t.Fatal(err)
			}
			f.waitResolved("the answered question", req, agenttest.TurnTimeout)
			e.WaitFor("the pane's question closed", agenttest.TurnTimeout, func(s string) bool { return !agenttest.Questionnaire(a.Kind, s) })
			got := e.WaitModelRequest("the answer reaches the model", agenttest.TurnTimeout, func(r fakemodel.Request) bool {
				return len(r.ToolResults) > 0 && r.UserText == ask
			})
			if !strings.Contains(strings.Join(got.ToolResults, "\n"), q.Options[1].Label) || strings.Contains(strings.Join(got.ToolResults, "\n"), q.Options[0].Label) {
				t.Fatalf("the model got %q, want the answer %s", got.ToolResults, q.Options[1].Label)
			}
			if status, _ := f.finalOf("the question's turn", thread, ui.TurnID, agenttest.TurnTimeout); status != "completed" {
				t.Fatalf("the question's turn ended %s", status)
			}
		})
	}
}
