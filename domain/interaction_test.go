package domain_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"akk/domain"
)

type fakeSteps struct {
	mu      sync.Mutex
	step    domain.InteractionStep
	answers [][]domain.StepAnswer
	next    domain.InteractionStep
	stage   domain.AnswerStage // what an answer proves; "" is AnswerVerified
}

func (f *fakeSteps) Step(context.Context, domain.Terminal) (domain.InteractionStep, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.step, nil
}

func (f *fakeSteps) AnswerStep(_ context.Context, _ domain.Terminal, fp string, a []domain.StepAnswer) (domain.AnswerStage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fp != f.step.Fingerprint {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	f.answers = append(f.answers, a)
	if f.stage != "" {
		return f.stage, errors.New("not proven")
	}
	f.step = f.next
	return domain.AnswerVerified, nil
}

func (f *fakeSteps) set(fn func(*fakeSteps)) { f.mu.Lock(); fn(f); f.mu.Unlock() }
func (f *fakeSteps) count() int              { f.mu.Lock(); defer f.mu.Unlock(); return len(f.answers) }

func colorStep(fp string, idx, total int) domain.InteractionStep {
	return domain.InteractionStep{Present: true, Answerable: true, Kind: "questionnaire", Index: idx, Total: total,
		FreeTextLimit: 200, Fingerprint: fp, Questions: []domain.StepQuestion{{Key: "0", Header: "Color", Prompt: "Which color?",
			Required: true, ResponseKind: domain.SingleSelect, Options: []domain.StepOption{
				{Key: "0", Label: "Red"}, {Key: "1", Label: "Blue"}, {Key: "2", Label: "Type something.", TakesText: true}}}}}
}

func interactionTurn(t *testing.T) (*world, *fakeTerm, *fakeSteps, string) {
	ft := &fakeTerm{term: idleTerminal()}
	w := newWorld(t, "", ft)
	fs := &fakeSteps{step: colorStep("fp-1", 1, 2), next: colorStep("fp-2", 2, 2)}
	w.useParts(t, fs)
	return w, ft, fs, sendToQuestion(t, w, ft, "ask me")
}

// sendToQuestion sends a request and brings its Turn to a questionnaire.
func sendToQuestion(t *testing.T, w *world, ft *fakeTerm, request string) string {
	t.Helper()
	// A Turn waiting on a person outlives an offer's expiry (the world's
	// default inactivity limit is short).
	// The new Turn's record holds nothing yet: a pane's record is read
	// from the Turn's mark, the fake's has no marks, so an earlier Turn's
	// completion must not be left in it for the new monitor to read.
	ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{} })
	r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: request, InactivityMinutes: 10})
	if err != nil {
		t.Fatal(err)
	}
	ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true} })
	w.waitState(t, r.Turn.ID, domain.TurnWorking)
	ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenAwaitingInteraction })
	w.waitState(t, r.Turn.ID, domain.TurnAwaitingInteraction)
	return r.Turn.ID
}

func answer(in domain.Interaction, option int, text *string) domain.RespondInteractionInput {
	q := in.Questions[0]
	return domain.RespondInteractionInput{InteractionID: in.InteractionID, Answers: []domain.InteractionAnswer{{
		QuestionID: q.QuestionID, ResponseKind: q.ResponseKind, SelectedOptionIDs: []string{q.Options[option].OptionID}, Text: text}}}
}

func TestInteractionStepByStepWithOpaqueIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, ft, fs, id := interactionTurn(t)
		// The webhook carried the projection (and no keys).
		ns, _ := w.store.NotificationsAbout(context.Background(), id)
		if len(ns) != 2 || ns[1].Type != "turn.interaction_required" {
			t.Fatalf("notifications %+v", ns)
		}
		in, err := w.svc.TurnInteraction(w.host, id)
		if err != nil || in.Schema != domain.InteractionSchema || in.Version != 1 || len(in.Questions) != 1 || len(in.Questions[0].Options) != 3 {
			t.Fatalf("projection %+v %v", in, err)
		}
		for _, o := range in.Questions[0].Options {
			if o.OptionID == "0" || o.OptionID == "1" || strings.Contains(o.OptionID, o.Label) {
				t.Fatalf("option id %q is not opaque", o.OptionID)
			}
		}
		// Refusals before any key: another conversation, an index, a label, another host.
		chat2 := domain.WithPrincipal(context.Background(), domain.Principal{HostID: mustPrincipal(t, w).HostID, Conversation: "chat-2"})
		if _, err := w.svc.RespondInteraction(chat2, id, answer(in, 1, nil)); code(err) != domain.CodeOfferExpired {
			t.Fatalf("another conversation: %v", err)
		}
		bad := answer(in, 1, nil)
		bad.Answers[0].SelectedOptionIDs = []string{"1"}
		if _, err := w.svc.RespondInteraction(w.host, id, bad); code(err) != domain.CodeValidationFailed {
			t.Fatalf("a menu index as id: %v", err)
		}
		bad.Answers[0].SelectedOptionIDs = []string{"Blue"}
		if _, err := w.svc.RespondInteraction(w.host, id, bad); code(err) != domain.CodeValidationFailed {
			t.Fatalf("a label as id: %v", err)
		}
		long := strings.Repeat("x", 201)
		if _, err := w.svc.RespondInteraction(w.host, id, answer(in, 2, &long)); code(err) != domain.CodeValidationFailed {
			t.Fatalf("free text over the limit: %v", err)
		}
		spaced := " padded "
		if _, err := w.svc.RespondInteraction(w.host, id, answer(in, 2, &spaced)); code(err) != domain.CodeValidationFailed {
			t.Fatalf("untrimmed free text: %v", err)
		}
		if _, err := w.svc.RespondInteraction(w.other, id, answer(in, 1, nil)); code(err) != domain.CodeTurnNotFound {
			t.Fatalf("another host: %v", err)
		}
		if fs.count() != 0 {
			t.Fatal("a refused response typed")
		}
		// The second option, then the monitor announces step 2 with a new id.
		if _, err := w.svc.RespondInteraction(w.host, id, answer(in, 1, nil)); err != nil {
			t.Fatal(err)
		}
		if got := fs.answers[0][0]; got.QuestionKey != "0" || got.OptionKeys[0] != "1" {
			t.Fatalf("resolved answer %+v", got)
		}
		// Replay of the consumed step.
		if _, err := w.svc.RespondInteraction(w.host, id, answer(in, 1, nil)); err == nil {
			t.Fatal("a replay was accepted")
		}
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking })
		w.waitState(t, id, domain.TurnWorking)
		// The answer made the Turn working before the monitor looked: the
		// next step must not be shown before it has seen the agent at work,
		// or that late look would take the Turn off the step again.
		w.lookedAgain(t, ft, 4)
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenAwaitingInteraction })
		w.waitState(t, id, domain.TurnAwaitingInteraction)
		in2, err := w.svc.TurnInteraction(w.host, id)
		if err != nil || in2.InteractionID == in.InteractionID || in2.Step.Index != 2 {
			t.Fatalf("second step %+v %v", in2, err)
		}
		text := "Green, please"
		if _, err := w.svc.RespondInteraction(w.host, id, answer(in2, 2, &text)); err != nil {
			t.Fatal(err)
		}
		if got := fs.answers[1][0]; got.Text != text || got.OptionKeys[0] != "2" {
			t.Fatalf("free text answer %+v", got)
		}
		if fs.count() != 2 {
			t.Fatalf("%d answers", fs.count())
		}
	})
}

// A multi-select is answered with any non-empty subset of its offered
// options; an empty, repeated, unknown or free-text selection, or text, is
// refused with no key and the step stays answerable.
func TestMultiSelectAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, fs, id := interactionTurn(t)
		fs.set(func(f *fakeSteps) {
			f.step.Questions[0].ResponseKind = domain.MultiSelect
			f.step.Questions[0].Options = append(f.step.Questions[0].Options[:2], domain.StepOption{Key: "3", Label: "Green"})
		})
		in, err := w.svc.TurnInteraction(w.host, id)
		if err != nil || in.ManualRequired || !in.Capabilities.MultiSelect || in.Questions[0].ResponseKind != domain.MultiSelect {
			t.Fatalf("projection %+v %v", in, err)
		}
		q := in.Questions[0]
		pick := func(text *string, ids ...string) domain.RespondInteractionInput {
			return domain.RespondInteractionInput{InteractionID: in.InteractionID, Answers: []domain.InteractionAnswer{{
				QuestionID: q.QuestionID, ResponseKind: domain.MultiSelect, SelectedOptionIDs: ids, Text: text}}}
		}
		words := "words"
		for name, bad := range map[string]domain.RespondInteractionInput{
			"none":     pick(nil),
			"twice":    pick(nil, q.Options[0].OptionID, q.Options[0].OptionID),
			"unknown":  pick(nil, q.Options[0].OptionID, "opt_nope"),
			"a number": pick(nil, "2"),
			"text":     pick(&words, q.Options[0].OptionID),
		} {
			if _, err := w.svc.RespondInteraction(w.host, id, bad); code(err) != domain.CodeValidationFailed {
				t.Errorf("%s: %v", name, err)
			}
		}
		if fs.count() != 0 {
			t.Fatal("a refused selection was typed")
		}
		if _, err := w.svc.RespondInteraction(w.host, id, pick(nil, q.Options[2].OptionID, q.Options[0].OptionID)); err != nil {
			t.Fatal(err)
		}
		if fs.count() != 1 || strings.Join(fs.answers[0][0].OptionKeys, ",") != "3,0" {
			t.Fatalf("answers %+v", fs.answers)
		}
	})
}

// A questionnaire offer lives 5 minutes: the projection says until when,
// an answer after that is refused with no key, and reading the step again
// makes a fresh offer for the same step.
func TestInteractionOfferExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, fs, id := interactionTurn(t)
		in, err := w.svc.TurnInteraction(w.host, id)
		if err != nil {
			t.Fatal(err)
		}
		if in.ExpiresAt == nil || in.ExpiresAt.Sub(w.now()) < 4*time.Minute || in.ExpiresAt.Sub(w.now()) > domain.OfferTTL {
			t.Fatalf("expires_at %v", in.ExpiresAt)
		}
		w.Advance(domain.OfferTTL + time.Second)
		if _, err := w.svc.RespondInteraction(w.host, id, answer(in, 1, nil)); code(err) != domain.CodeOfferExpired {
			t.Fatalf("an expired offer: %v", err)
		}
		if fs.count() != 0 {
			t.Fatal("an expired offer typed")
		}
		again, err := w.svc.TurnInteraction(w.host, id)
		if err != nil || again.InteractionID != in.InteractionID {
			t.Fatalf("read again: %+v %v", again, err)
		}
		if _, err := w.svc.RespondInteraction(w.host, id, answer(again, 1, nil)); err != nil {
			t.Fatal(err)
		}
		if fs.count() != 1 {
			t.Fatalf("%d answers", fs.count())
		}
	})
}

// One text rule, applied before the offer is used: text the pane could
// not show as typed (U+00A0, a zero-width space, a tab) is refused with
// no key, and the same step stays answerable.
func TestInteractionTextRuleBeforeTheOffer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, fs, id := interactionTurn(t)
		in, err := w.svc.TurnInteraction(w.host, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"Green\u00a0please", "Green\u200bplease", "Green\tplease", "Green\x7f",
			"Green\u202eesaelp", "\ufeffGreen", "Green \u2066please\u2069", "Green\u200dplease"} {
			if _, err := w.svc.RespondInteraction(w.host, id, answer(in, 2, &bad)); code(err) != domain.CodeValidationFailed {
				t.Fatalf("%q: %v", bad, err)
			}
			if why := domain.FreeTextProblem(bad, 200); why == "" {
				t.Fatalf("%q passes the rule", bad)
			}
		}
		if fs.count() != 0 {
			t.Fatal("refused text typed")
		}
		good := "Green, please — très vert"
		if _, err := w.svc.RespondInteraction(w.host, id, answer(in, 2, &good)); err != nil {
			t.Fatalf("the same step after refusals: %v", err)
		}
		if fs.count() != 1 || fs.answers[0][0].Text != good {
			t.Fatalf("answers %+v", fs.answers)
		}
	})
}

// The fence is per occurrence: the same step asked again after a proven
// answer, in the same Turn or in a later Turn of the same pane, is a new
// interaction, answerable; the earlier interaction's id is spent.
func TestInteractionSameStepInALaterTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, ft, fs, id := interactionTurn(t)
		fs.set(func(f *fakeSteps) { f.next = colorStep("fp-1", 1, 2) }) // the agent asks the same again
		in, err := w.svc.TurnInteraction(w.host, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.RespondInteraction(w.host, id, answer(in, 1, nil)); err != nil {
			t.Fatal(err)
		}
		w.waitState(t, id, domain.TurnAwaitingInteraction)
		again, err := w.svc.TurnInteraction(w.host, id)
		if err != nil || again.ManualRequired || again.InteractionID == in.InteractionID {
			t.Fatalf("the same step asked again in its Turn: %+v %v", again, err)
		}
		if _, err := w.svc.RespondInteraction(w.host, id, answer(in, 1, nil)); code(err) != domain.CodeOfferExpired {
			t.Fatalf("the spent interaction id: %v", err)
		}
		fs.set(func(f *fakeSteps) { f.next = domain.InteractionStep{} })
		if _, err := w.svc.RespondInteraction(w.host, id, answer(again, 0, nil)); err != nil {
			t.Fatal(err)
		}
		// The Turn ends; a new Turn in the same pane asks the same questions.
		ft.set(func(f *fakeTerm) {
			f.term.ScreenState = domain.ScreenIdle
			f.progress = domain.TurnProgress{Accepted: true, Completed: true, FinalMessage: "ok"}
		})
		w.waitState(t, id, domain.TurnCompleted)
		fs.set(func(f *fakeSteps) { f.step = colorStep("fp-1", 1, 2) })
		second := sendToQuestion(t, w, ft, "ask me again")
		in2, err := w.svc.TurnInteraction(w.host, second)
		if err != nil || in2.ManualRequired || in2.InteractionID == in.InteractionID {
			t.Fatalf("the same step in a later Turn: %+v %v", in2, err)
		}
		if _, err := w.svc.RespondInteraction(w.host, second, answer(in2, 0, nil)); err != nil {
			t.Fatal(err)
		}
		if fs.count() != 3 {
			t.Fatalf("%d answers", fs.count())
		}
	})
}

type secretRedactor struct{}

func (secretRedactor) Redact(s string) string {
	return strings.ReplaceAll(s, "sk-live-SECRET", "[REDACTED]")
}

// Questionnaire headers, prompts and labels are redacted in the projection
// and in the interaction_required event and webhook.
func TestInteractionTextIsRedacted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorldRedacting(t, "", ft, secretRedactor{})
		step := colorStep("fp-s", 1, 1)
		step.Questions[0].Header = "Key sk-live-SECRET"
		step.Questions[0].Prompt = "Use sk-live-SECRET?"
		step.Questions[0].Options[0].Label = "Yes, sk-live-SECRET"
		fs := &fakeSteps{step: step, next: step}
		w.useParts(t, fs)
		id := sendToQuestion(t, w, ft, "ask me")
		in, err := w.svc.TurnInteraction(w.host, id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(in)
		// Events carry what webhooks deliver.
		evs, err := w.svc.EventsAfter(context.Background(), domain.Principal{Operator: true}, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		nb, _ := json.Marshal(evs)
		for what, x := range map[string]string{"projection": string(b), "events": string(nb)} {
			if strings.Contains(x, "sk-live-SECRET") {
				t.Fatalf("the %s leaks the secret: %s", what, x)
			}
		}
		if !strings.Contains(string(b), "[REDACTED]") || !strings.Contains(string(nb), "[REDACTED]") {
			t.Fatalf("projection %s / webhooks %s", b, nb)
		}
	})
}

// An async question advertises its delivery modes: the answer steers by
// default, queue_next_turn queues typed text only, and a blocking
// questionnaire refuses the field; refusals send nothing.
func TestAsyncQuestionDeliveryModes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, fs, id := interactionTurn(t)
		blocking, err := w.svc.TurnInteraction(w.host, id)
		if err != nil || len(blocking.DeliveryModes) != 0 {
			t.Fatalf("blocking %+v %v", blocking, err)
		}
		in := answer(blocking, 0, nil)
		in.DeliveryMode = domain.DeliverySteerCurrentTurn
		if _, err := w.svc.RespondInteraction(w.host, id, in); code(err) != domain.CodeValidationFailed {
			t.Fatalf("delivery_mode on a blocking questionnaire: %v", err)
		}
		fs.set(func(f *fakeSteps) {
			f.step.Kind = domain.KindAsyncQuestion
			f.step.Fingerprint = "fp-async"
			f.step.DeliveryModes = []string{domain.DeliverySteerCurrentTurn, domain.DeliveryQueueNextTurn}
			f.step.Questions[0].Options = append(f.step.Questions[0].Options, domain.StepOption{Key: "t", Label: "Other", TakesText: true})
			f.step.FreeTextLimit = 50
		})
		async, err := w.svc.TurnInteraction(w.host, id)
		if err != nil || async.Kind != domain.KindAsyncQuestion || len(async.DeliveryModes) != 2 {
			t.Fatalf("async %+v %v", async, err)
		}
		choice := answer(async, 0, nil)
		choice.DeliveryMode = domain.DeliveryQueueNextTurn
		if _, err := w.svc.RespondInteraction(w.host, id, choice); code(err) != domain.CodeValidationFailed {
			t.Fatalf("a queued choice: %v", err)
		}
		if fs.count() != 0 {
			t.Fatal("a refused answer was typed")
		}
		text := "Teal"
		queued := answer(async, len(async.Questions[0].Options)-1, &text)
		queued.DeliveryMode = domain.DeliveryQueueNextTurn
		if _, err := w.svc.RespondInteraction(w.host, id, queued); err != nil {
			t.Fatal(err)
		}
		if fs.count() != 1 || !fs.answers[0][0].Queue || fs.answers[0][0].Text != text {
			t.Fatalf("answers %+v", fs.answers)
		}
	})
}

// An async question is asked while the Turn works: it is announced with
// the Turn still working, answered there, and an unproven answer leaves the
// Turn followed (working) with an uncertain, fenced result.
func TestAsyncQuestionWhileWorking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		step := colorStep("fp-async", 1, 1)
		step.Kind = domain.KindAsyncQuestion
		step.DeliveryModes = []string{domain.DeliverySteerCurrentTurn, domain.DeliveryQueueNextTurn}
		fs := &fakeSteps{stage: domain.AnswerSent}
		w.useParts(t, fs)
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "work and ask", InactivityMinutes: 10})
		if err != nil {
			t.Fatal(err)
		}
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true} })
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		if _, err := w.svc.TurnInteraction(w.host, r.Turn.ID); code(err) != domain.CodeNoInteraction {
			t.Fatalf("no async question on screen yet: %v", err)
		}
		fs.set(func(f *fakeSteps) { f.step = step })
		ft.set(func(f *fakeTerm) { f.term.ScreenState, f.term.AsyncQuestion = domain.ScreenWorking, true })
		w.waitAnnounced(t, r.Turn.ID)
		in, err := w.svc.TurnInteraction(w.host, r.Turn.ID)
		if err != nil || in.Kind != domain.KindAsyncQuestion {
			t.Fatalf("projection %+v %v", in, err)
		}
		res, err := w.svc.RespondInteraction(w.host, r.Turn.ID, answer(in, 0, nil))
		if err != nil || res.Outcome != domain.OutcomeUncertain || !res.DoNotRetry || res.Turn.State != domain.TurnWorking {
			t.Fatalf("unproven async answer: %+v %v", res, err)
		}
		again, err := w.svc.TurnInteraction(w.host, r.Turn.ID)
		if err != nil || !again.ManualRequired {
			t.Fatalf("the unproven step is not fenced: %+v %v", again, err)
		}
	})
}

// An async step the monitor could not announce, because the Turn changed
// under it (as when the respond that opened the step wrote the Turn), is
// announced at the next look, never dropped.
func TestAsyncStepAnnouncedAfterAConflict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		fs := &fakeSteps{stage: domain.AnswerSent}
		svc, cs := conflictService(t, w, ft, nil, fs)
		r, err := svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "work and ask", InactivityMinutes: 10})
		if err != nil {
			t.Fatal(err)
		}
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true} })
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		step := colorStep("fp-async", 1, 1)
		step.Kind = domain.KindAsyncQuestion
		step.DeliveryModes = []string{domain.DeliverySteerCurrentTurn, domain.DeliveryQueueNextTurn}
		cs.armed.Store(true) // the announcement's write meets a conflict
		fs.set(func(f *fakeSteps) { f.step = step })
		ft.set(func(f *fakeTerm) { f.term.ScreenState, f.term.AsyncQuestion = domain.ScreenWorking, true })
		w.waitAnnounced(t, r.Turn.ID)
		if cs.armed.Load() {
			t.Fatal("no write met the conflict")
		}
	})
}

// waitAnnounced waits until the Turn's newest notification announces a
// step.
func (w *world) waitAnnounced(t *testing.T, turnID string) {
	t.Helper()
	w.until(t, func() string {
		ns, _ := w.store.NotificationsAbout(context.Background(), turnID)
		if len(ns) > 0 && ns[len(ns)-1].Type == "turn.interaction_required" {
			return ""
		}
		return fmt.Sprintf("never announced: %+v", ns)
	})
}
