package agentpane

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// TestE2EInteraction answers questionnaires of every pinned agent version
// with the InteractionTerminal alone, as the domain would: a human types a
// task whose model asks, Step isolates the step, AnswerStep answers it, and
// the fake model must receive exactly that answer. On the version's shared
// pane (world_test.go); the versions run in parallel, the steps in
// sequence. Codex offers request_user_input in Plan mode only: Shift+Tab
// first, as a human, and back to Default mode at the end.
func TestE2EInteraction(t *testing.T) {
	for _, a := range agenttest.RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e, x, term, _ := sharedPane(t, a)
			if a.Kind == agenttest.KindCodex {
				e.PlanMode()
				// Back to Default mode for the next test on this pane (a
				// failed step tears the world down instead).
				defer func() {
					if !t.Failed() {
						e.DefaultMode()
					}
				}()
			}
			r := &stepRun{t: t, e: e, x: x, term: term}
			steps := []struct {
				name string
				f    func(r *stepRun)
			}{
				{"second_option", stepSecondOption},
				{"wrong_fingerprint_then_free_text", stepFreeText},
				{"two_questions", stepTwoQuestions},
				{"refused", stepRefused},
				{"free_text_step", stepFreeTextStep},
			}
			if a.Kind == agenttest.KindClaude {
				steps = append(steps, struct {
					name string
					f    func(r *stepRun)
				}{"multi_select", stepMultiSelect})
			}
			if a.Kind == agenttest.KindCodex {
				steps = append(steps, struct {
					name string
					f    func(r *stepRun)
				}{"unanswered_confirmation", stepUnansweredConfirmation}, struct {
					name string
					f    func(r *stepRun)
				}{"native_other", stepNativeOther})
			}
			for _, s := range steps {
				if !t.Run(s.name, func(t *testing.T) { s.f(r.with(t)) }) {
					return
				}
			}
		})
	}
}

type stepRun struct {
	t    *testing.T
	e    *agenttest.Env
	x    *Adapter
	term domain.Terminal
	seen int // model requests already looked at
}

func (r *stepRun) with(t *testing.T) *stepRun {
	r.t, r.e = t, r.e.WithT(t)
	return r
}

func (r *stepRun) claude() bool { return r.e.Agent.Kind == agenttest.KindClaude }

// ask types a task whose model asks, as a human, and waits for the
// questionnaire to settle on screen.
func (r *stepRun) ask(task string, kv ...string) {
	r.t.Helper()
	r.seen = lastRequestID(r.e)
	r.e.Submit(task + " " + fakemodel.Marker(fakemodel.ScenarioAsk, kv...))
	r.e.WaitFor("the questionnaire", agenttest.TurnTimeout, func(s string) bool {
		return agenttest.Questionnaire(r.e.Agent.Kind, s) && strings.Contains(s, fakemodel.Questions[0].Question)
	})
	r.e.Settle()
}

// step reads the current step and checks its shape.
func (r *stepRun) step(index, total int, kind string, labels ...string) domain.InteractionStep {
	r.t.Helper()
	s, err := r.x.Step(context.Background(), r.term)
	if err != nil {
		r.t.Fatal(err)
	}
	var got []string
	if len(s.Questions) == 1 {
		for _, o := range s.Questions[0].Options {
			got = append(got, o.Label)
		}
	}
	if !s.Present || !s.Answerable || s.Index != index || s.Total != total || len(s.Questions) != 1 ||
		s.Questions[0].ResponseKind != kind || strings.Join(got, "|") != strings.Join(labels, "|") {
		r.t.Fatalf("step: %+v, want %d/%d %s %q; screen:\n%s", s, index, total, kind, labels, r.e.Capture())
	}
	return s
}

// answer answers option label of s, with text, and requires Verified.
func (r *stepRun) answer(s domain.InteractionStep, label, text string) {
	r.t.Helper()
	q := s.Questions[0]
	var key string
	for _, o := range q.Options {
		if o.Label == label {
			key = o.Key
		}
	}
	start := time.Now()
	stage, err := r.x.AnswerStep(context.Background(), r.term, s.Fingerprint, []domain.StepAnswer{{QuestionKey: q.Key, OptionKeys: []string{key}, Text: text}})
	if err != nil || stage != domain.AnswerVerified {
		r.t.Fatalf("answer %q: %s, %v; screen:\n%s", label, stage, err, r.e.Capture())
	}
	r.t.Logf("%s: answered %q in %s", r.e.Agent.Name(), label, time.Since(start).Round(time.Millisecond))
}

// received waits for the model's request that carries the answers and
// requires it to hold every one of want, then for the agent to finish.
func (r *stepRun) received(want ...string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.TurnTimeout)
	defer cancel()
	seen := r.seen
	req, err := r.e.Model.WaitRequest(ctx, func(q fakemodel.Request) bool {
		return q.ID > seen && q.Scenario == fakemodel.ScenarioToolResult && q.Done()
	})
	if err != nil {
		r.t.Fatalf("no answer reached the model: %v; requests %+v", err, r.e.Model.Requests())
	}
	got := strings.Join(req.ToolResults, "\n")
	for _, w := range want {
		if !strings.Contains(got, w) {
			r.t.Errorf("the model received %q, want %q in it", got, w)
		}
	}
	// Codex's record of a skipped question says "(unanswered)", which the
	// harness's idle check takes for a live questionnaire.
	r.e.WaitFor("the idle composer", agenttest.TurnTimeout, func(s string) bool {
		return r.e.Idle(strings.ReplaceAll(s, "? (unanswered)", "?"))
	})
	r.seen = lastRequestID(r.e)
}

// lastRequestID is the id of the last request the fake model recorded
// (ids count from the model's start, also across a shared world's tests).
func lastRequestID(e *agenttest.Env) int {
	reqs := e.Model.Requests()
	if len(reqs) == 0 {
		return 0
	}
	return reqs[len(reqs)-1].ID
}

// untouched requires that nothing reached the agent: the same step on
// screen with the same fingerprint, and no request to the model.
func (r *stepRun) untouched(fp string, requests int) {
	r.t.Helper()
	time.Sleep(500 * time.Millisecond)
	s, err := r.x.Step(context.Background(), r.term)
	if err != nil || s.Fingerprint != fp {
		r.t.Errorf("the step changed after a refused answer: %+v, %v; screen:\n%s", s, err, r.e.Capture())
	}
	if n := r.e.Model.Played(); n != requests {
		r.t.Errorf("the model got %d requests after a refused answer", n-requests)
	}
}

// textOption is the free-text choice: Claude Code's "Type something." row;
// beside Codex's native "None of the above", the derived choice that opens
// its notes.
func (r *stepRun) textOption() string { return "Type something." }

// choices are a question's offered labels: its two options, then Claude
// Code's free-text row, or Codex's native Other and the derived free-text
// choice.
func (r *stepRun) choices(a, b string) []string {
	if r.claude() {
		return []string{a, b, r.textOption()}
	}
	return []string{a, b, "None of the above", r.textOption()}
}

func colors(r *stepRun) []string { return r.choices("Red", "Blue") }

func stepSecondOption(r *stepRun) {
	r.ask("Ask me first")
	total := 1
	s := r.step(1, total, domain.SingleSelect, colors(r)...)
	r.answer(s, "Blue", "")
	if r.claude() {
		r.received(`"Which color should the widget be?"="Blue"`)
	} else {
		r.received(`{"answers":{"color":{"answers":["Blue"]}}}`)
	}
}

// freeText starts with a dash (no tmux flag), and holds shell and JSON
// characters that must arrive as typed.
const freeText = "-teal, like $HOME & 50% of #0a0 {x} [[y]] 'z'"

func stepFreeText(r *stepRun) {
	r.ask("Ask me in words")
	s := r.step(1, 1, domain.SingleSelect, colors(r)...)
	q := s.Questions[0]
	requests := r.e.Model.Played()
	stage, err := r.x.AnswerStep(context.Background(), r.term, s.Fingerprint+"0", []domain.StepAnswer{{QuestionKey: q.Key, OptionKeys: []string{q.Options[1].Key}}})
	if stage != domain.AnswerNothing || !errors.Is(err, domain.ErrPromptChanged) {
		r.t.Fatalf("wrong fingerprint: %s, %v", stage, err)
	}
	r.untouched(s.Fingerprint, requests)
	// As long as the limit allows: it must fit the editor's one row.
	if len(freeText)+2 > s.FreeTextLimit {
		r.t.Fatalf("free text limit %d", s.FreeTextLimit)
	}
	text := freeText + " " + strings.Repeat("x", s.FreeTextLimit-len(freeText)-1)
	r.answer(s, r.textOption(), text)
	if r.claude() {
		r.received(`"Which color should the widget be?"="` + text + `"`)
	} else {
		r.received(`"None of the above","user_note: ` + text + `"`)
	}
}

func stepTwoQuestions(r *stepRun) {
	r.ask("Ask me two things", "questions", "2")
	total := 2
	if r.claude() {
		total = 3 // the review is a step of its own
	}
	s := r.step(1, total, domain.SingleSelect, colors(r)...)
	r.answer(s, "Blue", "")
	s = r.step(2, total, domain.SingleSelect, r.choices("Small", "Large")...)
	if s.Questions[0].Prompt != fakemodel.Questions[1].Question {
		r.t.Errorf("second question %q", s.Questions[0].Prompt)
	}
	r.answer(s, "Small", "")
	if r.claude() {
		s = r.step(3, 3, domain.Confirmation, "Submit answers")
		r.answer(s, "Submit answers", "")
		r.received(`"Which color should the widget be?"="Blue"`, `"Which size should the widget be?"="Small"`)
	} else {
		r.received(`"color":{"answers":["Blue"]}`, `"size":{"answers":["Small"]}`) // in either order
	}
}

// stepRefused: a step the profile does not answer gets no key: the
// free-text editor open, a person typing (Claude Code's focused "Type
// something." row, Codex's notes). The person then finishes it.
func stepRefused(r *stepRun) {
	r.ask("Ask me and let me type")
	if r.claude() {
		r.e.Press("Down", "Down")
		r.e.WaitForText(5*time.Second, "ctrl+g to edit")
	} else {
		r.e.Press("Down", "Down", "Tab")
		r.e.WaitForText(5*time.Second, "Add notes")
	}
	r.e.Type("half typed")
	r.e.WaitForText(5*time.Second, "half typed")
	r.e.Settle()
	s, err := r.x.Step(context.Background(), r.term)
	if err != nil || !s.Present || s.Answerable || s.Fingerprint == "" || !strings.Contains(s.Reason, "a person may be typing") {
		r.t.Fatalf("step: %+v, %v", s, err)
	}
	requests := r.e.Model.Played()
	q := s.Questions[0]
	stage, err := r.x.AnswerStep(context.Background(), r.term, s.Fingerprint, []domain.StepAnswer{{QuestionKey: q.Key, Text: "more words"}})
	if stage != domain.AnswerNothing || !errors.Is(err, domain.ErrDecisionUnavailable) {
		r.t.Fatalf("answering a refused step: %s, %v", stage, err)
	}
	r.untouched(s.Fingerprint, requests)
	r.e.Press("Enter")
	if r.claude() {
		r.received(`"Which color should the widget be?"="half typed"`)
	} else {
		r.received(`"None of the above","user_note: half typed"`)
	}
}

// stepMultiSelect (Claude Code): two of four boxes checked one at a time,
// Tab to the review, submitted; the model gets exactly those two.
func stepMultiSelect(r *stepRun) {
	r.ask("Ask me to pick several", "multi", "true", "options", "4")
	s := r.step(1, 2, domain.MultiSelect, "Red", "Blue", "Green", "Yellow")
	q := s.Questions[0]
	start := time.Now()
	stage, err := r.x.AnswerStep(context.Background(), r.term, s.Fingerprint, []domain.StepAnswer{{QuestionKey: q.Key, OptionKeys: []string{q.Options[3].Key, q.Options[1].Key}}})
	if err != nil || stage != domain.AnswerVerified {
		r.t.Fatalf("multi-select: %s, %v; screen:\n%s", stage, err, r.e.Capture())
	}
	r.t.Logf("%s: checked two boxes in %s", r.e.Agent.Name(), time.Since(start).Round(time.Millisecond))
	s = r.step(2, 2, domain.Confirmation, "Submit answers")
	r.answer(s, "Submit answers", "")
	r.received(`"Which color should the widget be?"="Blue, Yellow"`)
}

// stepFreeTextStep: the free-text choice alone opens its editor (Claude
// Code's focused row, Codex's notes), a step of its own with a new
// fingerprint, answered with text only.
func stepFreeTextStep(r *stepRun) {
	r.ask("Ask me and I will type")
	s := r.step(1, 1, domain.SingleSelect, colors(r)...)
	r.answer(s, r.textOption(), "")
	ed, err := r.x.Step(context.Background(), r.term)
	if err != nil || !ed.Present || !ed.Answerable || ed.Fingerprint == s.Fingerprint || len(ed.Questions) != 1 ||
		ed.Questions[0].ResponseKind != domain.FreeText || len(ed.Questions[0].Options) != 0 || ed.FreeTextLimit < 40 {
		r.t.Fatalf("the editor step: %+v, %v; screen:\n%s", ed, err, r.e.Capture())
	}
	const text = "a deep sea green"
	stage, err := r.x.AnswerStep(context.Background(), r.term, ed.Fingerprint, []domain.StepAnswer{{QuestionKey: ed.Questions[0].Key, Text: text}})
	if err != nil || stage != domain.AnswerVerified {
		r.t.Fatalf("the editor step's answer: %s, %v; screen:\n%s", stage, err, r.e.Capture())
	}
	if r.claude() {
		r.received(`"Which color should the widget be?"="` + text + `"`)
	} else {
		r.received(`"None of the above","user_note: ` + text + `"`)
	}
}

// stepNativeOther (Codex): the native "None of the above" submits its own
// label, with no notes, unlike the derived free-text choice.
func stepNativeOther(r *stepRun) {
	r.ask("Ask me, none fits")
	s := r.step(1, 1, domain.SingleSelect, colors(r)...)
	r.answer(s, "None of the above", "")
	r.received(`{"answers":{"color":{"answers":["None of the above"]}}}`)
}

// stepUnansweredConfirmation: a person skips the first of two questions
// and submits; Codex asks whether to proceed, and AKK proceeds.
func stepUnansweredConfirmation(r *stepRun) {
	r.ask("Ask me two things again", "questions", "2")
	r.e.Press("Right")
	r.e.WaitForText(5*time.Second, fakemodel.Questions[1].Question)
	r.e.Settle()
	s := r.step(2, 2, domain.SingleSelect, r.choices("Small", "Large")...)
	r.answer(s, "Large", "")
	r.e.WaitForText(5*time.Second, "Submit with unanswered questions?")
	r.e.Settle()
	s = r.step(0, 0, domain.Confirmation, "Proceed", "Go back")
	r.answer(s, "Proceed", "")
	r.received(`"color":{"answers":[]}`, `"size":{"answers":["Large"]}`)
}
