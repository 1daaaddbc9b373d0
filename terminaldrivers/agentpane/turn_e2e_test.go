package agentpane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// pollEvery is how often the tests call Progress, as the domain does.
const pollEvery = 50 * time.Millisecond

// TestE2ETurn drives a Turn through every pinned agent version with the
// Adapter alone: a plain request to completion, a multi-line and a
// long request (which Claude Code and Codex collapse into a placeholder),
// a request refused on a busy pane (nothing typed, the model asked nothing
// more), an interrupt of a slow reply, and an API error. On the version's
// shared pane (world_test.go), its last user: the last step replaces the
// agent. The versions run in parallel, the steps in sequence (the error
// comes late: Claude Code sends a failed prompt again with the next).
func TestE2ETurn(t *testing.T) {
	for _, a := range agenttest.RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e, x, term, dirty := sharedPane(t, a)
			dirty() // its last step replaces the agent and stops the server
			r := &run{t: t, e: e, x: x, id: term.ID}
			steps := []struct {
				name string
				f    func(r *run)
			}{
				{"plain", stepPlain},
				{"multi_line", stepMultiLine},
				{"long", stepLong},
				{"tall", stepTall},
				{"too_tall", stepTooTall},
				{"tool_steps", stepToolSteps},
				{"edits", stepEdits},
				{"busy_then_interrupt", stepBusyInterrupt},
				{"api_error", stepAPIError},
				{"quiet_interrupt", stepQuietInterrupt},
				{"gone", stepGone},
			}
			for _, s := range steps {
				if !t.Run(s.name, func(t *testing.T) { s.f(r.with(t)) }) {
					return
				}
			}
		})
	}
}

type run struct {
	t  *testing.T
	e  *agenttest.Env
	x  *Adapter
	id string
	// start is the mark of the step's request, for capturing its records.
	start domain.DurableMark
}

func (r *run) with(t *testing.T) *run {
	c := *r
	c.t, c.e = t, r.e.WithT(t)
	return &c
}

// ready observes the terminal until it is send-ready.
func (r *run) ready() domain.Terminal {
	r.t.Helper()
	deadline := time.Now().Add(agenttest.TurnTimeout)
	for {
		term, err := r.x.Observe(context.Background(), r.id)
		if err != nil {
			r.t.Fatalf("observe: %v", err)
		}
		if term.SendReady() {
			return term
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("terminal not send-ready: %s composer empty %v\n%s", term.ScreenState, term.ComposerEmpty, r.e.Capture())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// submit marks the record, submits text and checks it was entered.
func (r *run) submit(term domain.Terminal, text string) domain.DurableMark {
	r.t.Helper()
	ctx := context.Background()
	mark, err := r.x.Mark(ctx, term)
	if err != nil {
		r.t.Fatalf("mark: %v", err)
	}
	start := time.Now()
	stage, err := r.x.Submit(ctx, term, text)
	for deadline := start.Add(agenttest.TurnTimeout); stage == domain.SubmitNothing && errors.Is(err, ErrNotReady) && time.Now().Before(deadline); {
		// Refused before any key: the pane was seen ready, then drawn
		// busy again before the submit's own look (Codex redraws after
		// an error's turn ends). Nothing was typed: wait for ready again.
		seen, _ := r.x.Observe(ctx, r.id)
		r.t.Logf("%s: submit refused, nothing typed (%v; now %s, title %q); waiting for the pane to be ready again", r.e.Agent.Name(), err, seen.ScreenState, seen.Title)
		term = r.ready()
		start = time.Now()
		stage, err = r.x.Submit(ctx, term, text)
	}
	took := time.Since(start)
	if err != nil || stage != domain.SubmitEntered {
		r.t.Fatalf("submit: stage %s, err %v; screen:\n%s", stage, err, r.e.Capture())
	}
	r.t.Logf("%s: submit of %d bytes took %s", r.e.Agent.Name(), len(text), took.Round(time.Millisecond))
	r.start = mark
	return mark
}

// follow polls Progress every pollEvery until cond holds, and reports how
// long after the ending record was written Progress first saw it.
func (r *run) follow(term domain.Terminal, mark domain.DurableMark, text string, what string, cond func(domain.TurnProgress) bool) domain.TurnProgress {
	r.t.Helper()
	deadline := time.Now().Add(agenttest.TurnTimeout)
	var accepted bool
	for {
		p, err := r.x.Progress(context.Background(), term, mark, text)
		if err != nil {
			r.t.Fatalf("progress: %v", err)
		}
		seen := time.Now()
		mark = p.Mark
		if p.Accepted && !accepted {
			accepted = true
			r.t.Logf("%s: accepted, thread %s turn %s", r.e.Agent.Name(), p.NativeThreadID, p.NativeTurnID)
		}
		if cond(p) {
			if p.Ended() {
				r.captureRecords(p.Mark, text)
			}
			if m, err := decodeMark(p.Mark); err == nil && !m.EndedAt.IsZero() && len(m.Files) == 1 {
				// The record's own time is when the agent made it; the
				// file's modification time is when it reached the disk.
				if st, err := os.Stat(m.Files[0].Path); err == nil {
					r.t.Logf("%s: %s seen %s after the record's time, %s after the file's last write", r.e.Agent.Name(), what,
						seen.Sub(m.EndedAt).Round(time.Millisecond), seen.Sub(st.ModTime()).Round(time.Millisecond))
				}
			}
			return p
		}
		if p.Ended() {
			r.t.Fatalf("turn ended otherwise than %s: %+v", what, p)
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting for %s; last progress %+v; screen:\n%s", what, p, r.e.Capture())
		}
		r.wait(mark)
	}
}

// wait waits for the next poll, or less when a followed file changes
// (Changed), as a monitor would.
func (r *run) wait(mark domain.DurableMark) {
	changed, stop, err := r.x.Changed(mark)
	if err != nil {
		time.Sleep(pollEvery)
		return
	}
	defer stop()
	select {
	case <-changed:
	case <-time.After(pollEvery):
	}
}

func completed(p domain.TurnProgress) bool { return p.Completed }

// complete submits text and follows it to completion with the fake
// model's default reply.
func (r *run) complete(text string) {
	r.t.Helper()
	term := r.ready()
	mark := r.submit(term, text)
	p := r.follow(term, mark, text, "completion", completed)
	if !p.Accepted || p.NativeThreadID == "" || p.NativeTurnID == "" {
		r.t.Errorf("completed without acceptance or native ids: %+v", p)
	}
	// The fake model replies to what it was asked: the request, or, for a
	// collapsed paste in Claude Code 2.1.328, the request wrapped in tags.
	asked := r.lastAsked()
	if !strings.Contains(asked, text) {
		r.t.Errorf("the model was asked %q, not the request", asked)
	}
	if want := fakemodel.DefaultReply(asked); p.FinalMessage != want || p.LatestText != want {
		r.t.Errorf("final message %q, latest text %q, want %q", p.FinalMessage, p.LatestText, want)
	}
	if p.LastActivity.IsZero() {
		r.t.Errorf("no last activity: %+v", p)
	}
}

// lastAsked is the user text of the latest request that played a scenario.
func (r *run) lastAsked() string {
	reqs := r.e.Model.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if !reqs[i].Aux {
			return reqs[i].UserText
		}
	}
	return ""
}

func stepPlain(r *run) { r.complete("a plain request") }

func stepMultiLine(r *run) { r.complete("first line of the request\nsecond line of the request") }

// stepLong sends a request the agent collapses into a placeholder: over
// three lines for Claude Code, over 1000 characters for Codex.
func stepLong(r *run) {
	var b strings.Builder
	for i := range 30 {
		b.WriteString("line of a long request, number ")
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(" of thirty\n")
	}
	b.WriteString("the end")
	r.complete(b.String())
}

// stepTall sends fifteen short lines: Claude Code collapses them, Codex
// shows them all in a composer that pushes its first row far up.
func stepTall(r *run) {
	var lines []string
	for i := range 15 {
		lines = append(lines, "short line "+string(rune('a'+i)))
	}
	r.complete(strings.Join(lines, "\n"))
}

// stepTooTall sends thirty short lines: Claude Code collapses them; Codex
// would show them taller than half the pane, so nothing is sent.
func stepTooTall(r *run) {
	var lines []string
	for i := range 30 {
		lines = append(lines, "short line "+string(rune('a'+i%26)))
	}
	text := strings.Join(lines, "\n")
	if r.e.Agent.Kind == agenttest.KindClaude {
		r.complete(text)
		return
	}
	term := r.ready()
	stage, err := r.x.Submit(context.Background(), term, text)
	if stage != domain.SubmitNothing || !errors.Is(err, ErrRequestTooTall) {
		r.t.Fatalf("stage %s, err %v", stage, err)
	}
	if after := r.ready(); !after.ComposerEmpty {
		r.t.Errorf("the composer is not empty after a refused request")
	}
}

// stepToolSteps runs a task of two shell calls (approved as a person
// would, where the agent asks) and a final answer: Progress neither
// completes on the tool calls nor takes an earlier message as the final.
func stepToolSteps(r *run) {
	ctx := context.Background()
	term := r.ready()
	text := "Do two steps " + fakemodel.Marker(fakemodel.ScenarioSteps, "n", "2")
	mark := r.submit(term, text)
	deadline := time.Now().Add(agenttest.TurnTimeout)
	var p domain.TurnProgress
	approvals := 0
	for !p.Ended() {
		var err error
		p, err = r.x.Progress(ctx, term, mark, text)
		if err != nil {
			r.t.Fatal(err)
		}
		mark = p.Mark
		if now, err := r.x.Observe(ctx, r.id); err == nil && now.ScreenState == domain.ScreenAwaitingApproval {
			r.e.Settle()
			r.e.Press("Enter") // 1. Yes
			approvals++
			time.Sleep(500 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out; progress %+v; screen:\n%s", p, r.e.Capture())
		}
		time.Sleep(pollEvery)
	}
	r.captureRecords(p.Mark, text)
	want := "Tool results received:"
	if !p.Completed || !strings.HasPrefix(p.FinalMessage, want) || !strings.Contains(p.FinalMessage, "akk-step-2") {
		r.t.Errorf("progress %+v, want completion with %q", p, want)
	}
	r.t.Logf("%s: %d approvals; final message %q", r.e.Agent.Name(), approvals, p.FinalMessage)
}

// stepEdits has the agent edit two files (one new, one changed) and checks
// that Progress reports each change, read from the record, with its diff.
func stepEdits(r *run) {
	ctx := context.Background()
	if err := os.WriteFile(filepath.Join(r.e.ProjectDir, fakemodel.EditOldFile), []byte(fakemodel.EditOldContent), 0o644); err != nil {
		r.t.Fatal(err)
	}
	term := r.ready()
	text := "Edit two files " + fakemodel.Marker(fakemodel.ScenarioEdit, "dir", r.e.ProjectDir)
	mark := r.submit(term, text)
	deadline := time.Now().Add(agenttest.TurnTimeout)
	var p domain.TurnProgress
	var changes []domain.FileChange
	for !p.Ended() {
		var err error
		p, err = r.x.Progress(ctx, term, mark, text)
		if err != nil {
			r.t.Fatal(err)
		}
		mark = p.Mark
		changes = append(changes, p.Changes...)
		if now, err := r.x.Observe(ctx, r.id); err == nil && now.ScreenState == domain.ScreenAwaitingApproval {
			r.e.Settle()
			r.e.Press("Enter") // 1. Yes
			time.Sleep(500 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out; progress %+v; screen:\n%s", p, r.e.Capture())
		}
		time.Sleep(pollEvery)
	}
	r.captureRecords(p.Mark, text)
	if !p.Completed {
		r.t.Fatalf("progress %+v, want completion", p)
	}
	got, err := os.ReadFile(filepath.Join(r.e.ProjectDir, fakemodel.EditOldFile))
	if err != nil || string(got) != fakemodel.EditOldAfter {
		r.t.Fatalf("the old file reads %q (%v), want %q", got, err, fakemodel.EditOldAfter)
	}
	wantChanges(r.t, changes)
}

// wantChanges checks the edit scenario's two changes, in order: the new
// file created, then "two" changed to "TWO" in the old one.
func wantChanges(t testing.TB, changes []domain.FileChange) {
	t.Helper()
	if len(changes) != 2 {
		t.Fatalf("%d changes, want 2: %+v", len(changes), changes)
	}
	if c := changes[0]; c.Path != fakemodel.EditNewFile || c.Op != domain.FileCreated ||
		!strings.Contains(c.Diff, "--- /dev/null\n+++ b/"+fakemodel.EditNewFile+"\n") || !strings.Contains(c.Diff, "\n+alpha\n+beta\n") {
		t.Errorf("first change %+v, want %s created with +alpha +beta", c, fakemodel.EditNewFile)
	}
	if c := changes[1]; c.Path != fakemodel.EditOldFile || c.Op != domain.FileUpdated ||
		!strings.Contains(c.Diff, "--- a/"+fakemodel.EditOldFile+"\n+++ b/"+fakemodel.EditOldFile+"\n") || !strings.Contains(c.Diff, "\n one\n-two\n+TWO\n three\n") {
		t.Errorf("second change %+v, want %s's two changed to TWO", c, fakemodel.EditOldFile)
	}
}

func stepBusyInterrupt(r *run) {
	ctx := context.Background()
	term := r.ready()
	slow := "Take your time " + fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "40")
	mark := r.submit(term, slow)
	mark = r.follow(term, mark, slow, "acceptance", func(p domain.TurnProgress) bool { return p.Accepted }).Mark
	wctx, cancel := context.WithTimeout(ctx, agenttest.TurnTimeout)
	defer cancel()
	if _, err := r.e.Model.WaitRequest(wctx, func(q fakemodel.Request) bool { return q.Scenario == fakemodel.ScenarioSlow }); err != nil {
		r.t.Fatal(err)
	}
	time.Sleep(time.Second) // the first words stream

	busy, err := r.x.Observe(ctx, r.id)
	if err != nil {
		r.t.Fatal(err)
	}
	if busy.SendReady() {
		r.t.Fatalf("a pane streaming a reply reads send-ready:\n%s", r.e.Capture())
	}
	before := len(r.e.Model.Requests())
	stage, err := r.x.Submit(ctx, busy, "must never be typed")
	if stage != domain.SubmitNothing || !errors.Is(err, ErrNotReady) {
		r.t.Fatalf("submit on a busy pane: stage %s, err %v", stage, err)
	}
	if s := r.e.Capture(); strings.Contains(s, "must never be typed") {
		r.t.Fatalf("text typed into a busy pane:\n%s", s)
	}

	start := time.Now()
	if err := r.x.Interrupt(ctx, busy); err != nil {
		r.t.Fatal(err)
	}
	r.follow(term, mark, slow, "the interrupt", func(p domain.TurnProgress) bool { return p.Interrupted })
	r.t.Logf("%s: interrupt recorded %s after the key", r.e.Agent.Name(), time.Since(start).Round(time.Millisecond))
	r.ready()
	for _, q := range r.e.Model.Requests()[before:] {
		if !q.Aux && strings.Contains(q.UserText, "must never be typed") {
			r.t.Errorf("the model was asked %q", q.UserText)
		}
	}
}

func stepAPIError(r *run) {
	term := r.ready()
	text := "Fail please " + fakemodel.Marker(fakemodel.ScenarioError, "status", "400")
	mark := r.submit(term, text)
	p := r.follow(term, mark, text, "the failure", func(p domain.TurnProgress) bool { return p.Failed })
	if !strings.Contains(p.FailureReason, "400") && !strings.Contains(p.FailureReason, "Fake model error") {
		r.t.Errorf("failure reason %q", p.FailureReason)
	}
	r.t.Logf("%s: failure reason %q", r.e.Agent.Name(), p.FailureReason)
}

// stepQuietInterrupt interrupts a reply before its first word. Codex
// records the abort; Claude Code records nothing and puts the request back
// in the composer, so the end is read from its session state.
func stepQuietInterrupt(r *run) {
	ctx := context.Background()
	term := r.ready()
	text := "Take your time quietly " + fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "40", "lead", "false")
	mark := r.submit(term, text)
	mark = r.follow(term, mark, text, "acceptance", func(p domain.TurnProgress) bool { return p.Accepted }).Mark
	wctx, cancel := context.WithTimeout(ctx, agenttest.TurnTimeout)
	defer cancel()
	if _, err := r.e.Model.WaitRequest(wctx, func(q fakemodel.Request) bool {
		return q.Scenario == fakemodel.ScenarioSlow && q.Params["lead"] == "false"
	}); err != nil {
		r.t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	if err := r.x.Interrupt(ctx, term); err != nil {
		r.t.Fatal(err)
	}
	r.follow(term, mark, text, "the quiet interrupt", func(p domain.TurnProgress) bool { return p.Interrupted })
	r.t.Logf("%s: quiet interrupt proven %s after the key", r.e.Agent.Name(), time.Since(start).Round(time.Millisecond))
	after, err := r.x.Observe(ctx, r.id)
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Logf("%s: after the quiet interrupt the screen is %s, composer empty %v", r.e.Agent.Name(), after.ScreenState, after.ComposerEmpty)
}

// stepGone replaces the agent with a shell in the same pane, then stops the
// tmux server: the terminal id names neither, and nothing is sent.
func stepGone(r *run) {
	ctx := context.Background()
	term, err := r.x.Observe(ctx, r.id)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.e.Tmux("respawn-pane", "-k", "-t", r.e.Target(), "bash", "--norc", "--noprofile"); err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.x.Observe(ctx, r.id); !errors.Is(err, domain.ErrTerminalGone) {
		r.t.Errorf("observe after the agent was replaced: %v", err)
	}
	if stage, err := r.x.Submit(ctx, term, "must never be typed"); stage != domain.SubmitNothing || !errors.Is(err, domain.ErrTerminalGone) {
		r.t.Errorf("submit to a replaced agent: %s, %v", stage, err)
	}
	if _, err := r.x.Mark(ctx, term); !errors.Is(err, domain.ErrTerminalGone) {
		r.t.Errorf("mark of a replaced agent: %v", err)
	}
	if err := r.x.Interrupt(ctx, term); !errors.Is(err, domain.ErrTerminalGone) {
		r.t.Errorf("interrupt of a replaced agent: %v", err)
	}
	// An Adapter that never saw the id lists every server to find it.
	if _, err := New(r.x.disc, Config{}).Observe(ctx, r.id); !errors.Is(err, domain.ErrTerminalGone) {
		r.t.Errorf("observe of an unknown id: %v", err)
	}
	if _, err := r.e.Tmux("kill-server"); err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.x.Observe(ctx, r.id); !errors.Is(err, domain.ErrTerminalGone) {
		r.t.Errorf("observe after the server stopped: %v", err)
	}
}
