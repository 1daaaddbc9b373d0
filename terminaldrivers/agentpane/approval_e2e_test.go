package agentpane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// TestE2EApproval answers real permission prompts on every pinned version,
// each agent in its own isolated tmux server, on the version's shared pane
// (world_test.go, started once for the package's tests); the steps run
// in sequence in its pane: a shell command approved once (it runs once and
// the agent finishes), one rejected (it never runs and the agent waits at
// its composer), one approved after a person moved the highlight onto a
// persistent row (still the one-time yes), and a stale fingerprint (zero
// keys reach the pane).
func TestE2EApproval(t *testing.T) {
	for _, a := range agenttest.RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e, ap, term, _ := sharedPane(t, a)
			s := &session{t: t, e: e, ap: ap, term: term}

			var rejected domain.ApprovalPrompt
			steps := []struct {
				name string
				run  func(s *session)
			}{
				{"approve_once", func(s *session) { s.approveOnce() }},
				{"reject", func(s *session) { rejected = s.reject() }},
				{"approve_once_highlight_moved", func(s *session) { s.approveMoved() }},
				{"prompt_changed", func(s *session) { s.changed(rejected) }},
			}
			for _, st := range steps {
				if !t.Run(st.name, func(t *testing.T) { st.run(s.with(t)) }) {
					return
				}
			}
		})
	}
}

type session struct {
	t    *testing.T
	e    *agenttest.Env
	ap   *Adapter
	term domain.Terminal
}

func (s *session) with(t *testing.T) *session {
	c := *s
	c.t, c.e = t, s.e.WithT(t)
	return &c
}

// ask types a task that makes the agent ask to run cmd, and waits for the
// answerable prompt, read twice to see its fingerprint hold.
func (s *session) ask(cmd string) domain.ApprovalPrompt {
	s.t.Helper()
	s.e.Submit("Run this command please " + fakemodel.Marker(fakemodel.ScenarioBash, "cmd", cmd))
	ctx := context.Background()
	deadline := time.Now().Add(agenttest.TurnTimeout)
	for {
		p, err := s.ap.Prompt(ctx, s.term)
		if err != nil {
			s.t.Fatal(err)
		}
		if p.Present && strings.Contains(p.CommandExcerpt, cmd) {
			if !p.Answerable || p.Kind != "shell_command" || !slices.Equal(p.Decisions, []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject}) {
				s.t.Fatalf("prompt %+v\n%s", p, s.e.Capture())
			}
			time.Sleep(500 * time.Millisecond) // a person reads it
			again, err := s.ap.Prompt(ctx, s.term)
			if err != nil || again.Fingerprint != p.Fingerprint {
				s.t.Fatalf("the fingerprint of an unchanged prompt moved (%v):\n%s", err, s.e.Capture())
			}
			return p
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no answerable prompt for %q; last %+v\n%s", cmd, p, s.e.Capture())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (s *session) answer(p domain.ApprovalPrompt, d domain.ApprovalDecision) {
	s.t.Helper()
	start := time.Now()
	stage, err := s.ap.Answer(context.Background(), s.term, p.Fingerprint, d)
	s.t.Logf("%s: Answer(%s) = %s in %s", s.e.Agent.Name(), d, stage, time.Since(start).Round(time.Millisecond))
	if stage != domain.AnswerVerified || err != nil {
		s.t.Fatalf("Answer(%s) = %s, %v\n%s", d, stage, err, s.e.Capture())
	}
}

// results counts the model requests that carry a tool result holding out.
func (s *session) results(out string) int {
	n := 0
	for _, r := range s.e.Model.Requests() {
		if slices.ContainsFunc(r.ToolResults, func(x string) bool { return strings.Contains(x, out) }) {
			n++
		}
	}
	return n
}

func (s *session) approveOnce() {
	const out = "akk-approved-1"
	p := s.ask("touch " + out + " && echo " + out)
	s.answer(p, domain.ApproveOnce)
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.TurnTimeout)
	defer cancel()
	if _, err := s.e.Model.WaitRequest(ctx, func(r fakemodel.Request) bool {
		return slices.ContainsFunc(r.ToolResults, func(x string) bool { return strings.Contains(x, out) })
	}); err != nil {
		s.t.Fatalf("the command's result never reached the model: %v\n%s", err, s.e.Capture())
	}
	s.e.WaitForText(agenttest.TurnTimeout, "<<<")
	s.e.WaitIdle(agenttest.TurnTimeout)
	if n := s.results(out); n != 1 {
		s.t.Errorf("the command's result reached the model %d times, want once", n)
	}
	if _, err := os.Stat(filepath.Join(s.e.ProjectDir, out)); err != nil {
		s.t.Errorf("the approved command did not run: %v", err)
	}
}

func (s *session) reject() domain.ApprovalPrompt {
	const out = "akk-rejected-2"
	p := s.ask("touch " + out + " && echo " + out)
	before := len(s.e.Model.Requests())
	s.answer(p, domain.Reject)
	// The agent gives the turn back and asks what to do instead.
	want := map[string]string{agenttest.KindClaude: "What should Claude do instead?", agenttest.KindCodex: "Conversation interrupted"}[s.e.Agent.Kind]
	screen := s.e.WaitForText(agenttest.TurnTimeout, want)
	s.e.WaitIdle(agenttest.TurnTimeout)
	time.Sleep(time.Second) // a late tool result would show by now
	if n := s.results(out); n != 0 {
		s.t.Errorf("the rejected command's output reached the model %d times", n)
	}
	if _, err := os.Stat(filepath.Join(s.e.ProjectDir, out)); err == nil {
		s.t.Error("the rejected command ran")
	}
	for _, r := range s.e.Model.Requests()[before:] {
		if !r.Aux && r.Scenario == fakemodel.ScenarioToolResult {
			s.t.Errorf("the agent went on after the rejection: %+v", r)
		}
	}
	s.t.Logf("%s after reject:\n%s", s.e.Agent.Name(), bottom(screen, 8))
	return p
}

// approveMoved: a person moved the highlight onto a persistent row; the
// prompt is read again (a new fingerprint) and approve_once still chooses
// the one-time yes, never the highlighted row.
func (s *session) approveMoved() {
	const out = "akk-moved-3"
	p := s.ask("touch " + out + " && echo " + out)
	s.e.Press("Down")
	var moved domain.ApprovalPrompt
	deadline := time.Now().Add(5 * time.Second)
	for {
		var err error
		if moved, err = s.ap.Prompt(context.Background(), s.term); err != nil {
			s.t.Fatal(err)
		}
		if moved.Fingerprint != p.Fingerprint || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !moved.Answerable || moved.Fingerprint == p.Fingerprint {
		s.t.Fatalf("after Down: %+v\n%s", moved, s.e.Capture())
	}
	if stage, err := s.ap.Answer(context.Background(), s.term, p.Fingerprint, domain.ApproveOnce); stage != domain.AnswerNothing || !errors.Is(err, domain.ErrPromptChanged) {
		s.t.Fatalf("answer to the prompt before the move: %s, %v", stage, err)
	}
	s.answer(moved, domain.ApproveOnce)
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.TurnTimeout)
	defer cancel()
	if _, err := s.e.Model.WaitRequest(ctx, func(r fakemodel.Request) bool {
		return slices.ContainsFunc(r.ToolResults, func(x string) bool { return strings.Contains(x, out) })
	}); err != nil {
		s.t.Fatalf("the command's result never reached the model: %v\n%s", err, s.e.Capture())
	}
	s.e.WaitIdle(agenttest.TurnTimeout)
}

// changed answers a prompt with fingerprints it does not have: the one of
// the prompt rejected before, and its own under another process
// incarnation. No key may reach the pane.
func (s *session) changed(stale domain.ApprovalPrompt) {
	// The same command prefix and folder as the step before: had a
	// persistent row been chosen there, this would not ask.
	p := s.ask("touch akk-moved-3 && echo akk-changed-4")
	other := s.term
	other.Process.StartTicks++
	requests := s.e.Model.Played()
	screenBefore := bottom(s.e.Capture(), 12)
	for _, c := range []struct {
		name string
		term domain.Terminal
		fp   string
	}{
		{"the previous prompt's fingerprint", s.term, stale.Fingerprint},
		{"another process incarnation", other, p.Fingerprint},
	} {
		for _, d := range []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject} {
			stage, err := s.ap.Answer(context.Background(), c.term, c.fp, d)
			if stage != domain.AnswerNothing || !errors.Is(err, domain.ErrPromptChanged) {
				s.t.Fatalf("%s, %s: %s, %v", c.name, d, stage, err)
			}
		}
	}
	time.Sleep(time.Second)
	now, err := s.ap.Prompt(context.Background(), s.term)
	if err != nil || now.Fingerprint != p.Fingerprint {
		s.t.Fatalf("the prompt changed after refused answers (%v):\n%s", err, s.e.Capture())
	}
	if after := bottom(s.e.Capture(), 12); after != screenBefore {
		s.t.Errorf("the pane changed after refused answers:\n%s\n---\n%s", screenBefore, after)
	}
	if n := s.e.Model.Played(); n != requests {
		s.t.Errorf("the model saw %d new requests after refused answers", n-requests)
	}
	if n := s.results("akk-changed-4"); n != 0 {
		s.t.Error("the command ran")
	}
	// The prompt is still there, and still answers to its own fingerprint.
	s.answer(p, domain.Reject)
}

func bottom(screen string, n int) string {
	rows := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	return strings.Join(rows[max(0, len(rows)-n):], "\n")
}
