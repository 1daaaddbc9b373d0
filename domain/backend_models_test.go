package domain_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"akk/domain"
	"akk/endpoints"
)

// fakeDaemon is one Codex daemon with one idle thread; it records every
// turn/start.
type fakeDaemon struct {
	mu     sync.Mutex
	thread domain.BackendThread
	models []domain.ModelOption
	starts []domain.BackendTurnOptions
	refuse error // a start the daemon refuses, before anything
}

func (b *fakeDaemon) Threads(context.Context, []domain.Terminal) ([]domain.BackendThread, error) {
	return []domain.BackendThread{b.thread}, nil
}
func (b *fakeDaemon) Start(_ context.Context, _ domain.BackendThread, _, _ string, opts domain.BackendTurnOptions) (string, domain.SubmitStage, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.starts = append(b.starts, opts)
	if b.refuse != nil {
		return "", domain.SubmitNothing, b.refuse
	}
	return "turn-1", domain.SubmitEntered, nil
}
func (b *fakeDaemon) Follow(ctx context.Context, _ domain.BackendThread, _ string) (<-chan domain.Observation, error) {
	ch := make(chan domain.Observation)
	go func() { <-ctx.Done(); close(ch) }()
	return ch, nil
}
func (b *fakeDaemon) RunningTurn(context.Context, domain.BackendThread) (string, error) {
	return "", nil
}
func (b *fakeDaemon) Models(context.Context, domain.BackendThread) (domain.ModelState, error) {
	return domain.ModelState{Model: b.thread.Model, Models: b.models}, nil
}
func (b *fakeDaemon) Catalogue(context.Context, domain.BackendThread) ([]domain.ModelOption, error) {
	return b.models, nil
}
func (b *fakeDaemon) Interrupt(context.Context, domain.BackendThread, string) error { return nil }
func (b *fakeDaemon) Prompt(string) (domain.ApprovalPrompt, bool) {
	return domain.ApprovalPrompt{}, false
}
func (b *fakeDaemon) Decide(context.Context, string, string, domain.ApprovalDecision) (domain.AnswerStage, error) {
	return domain.AnswerNothing, nil
}
func (b *fakeDaemon) Question(string) (domain.InteractionStep, bool) {
	return domain.InteractionStep{}, false
}
func (b *fakeDaemon) AnswerQuestion(context.Context, string, string, []domain.StepAnswer) (domain.AnswerStage, error) {
	return domain.AnswerNothing, nil
}

func (b *fakeDaemon) started() []domain.BackendTurnOptions {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]domain.BackendTurnOptions(nil), b.starts...)
}

// A thread whose daemon names no model: a Send that names a catalogue
// model (and one of its efforts) goes; an effort alone cannot be checked
// and is refused with nothing sent, as is a model the catalogue lacks.
// The thread's models read says the daemon gave no model in effect.
func TestBackendSendModelOnAThreadWithNoModel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, "", &fakeTerm{term: idleTerminal()})
		b := &fakeDaemon{thread: domain.BackendThread{ThreadID: "th-1", Status: domain.BackendIdle},
			models: []domain.ModelOption{{Model: "m1", Label: "M1", Efforts: []string{"low", "high"}}}}
		endpoints.UseThreadTransport(w.svc, domain.CodexThreads, b, w.term)
		conv := domain.BackendConversationID("th-1")

		for _, c := range []struct {
			name          string
			model, effort string
			field         string
		}{
			{"effort alone", "", "low", "model"},
			{"unknown model", "m9", "", "model"},
			{"unknown effort", "m1", "xhigh", "reasoning_effort"},
		} {
			_, err := w.svc.Send(w.host, domain.SendInput{ConversationID: conv, Request: "do it", Model: c.model, ReasoningEffort: c.effort})
			if code(err) != domain.CodeValidationFailed {
				t.Fatalf("%s: err %v, want validation_failed", c.name, err)
			}
			if de, ok := err.(*domain.Error); !ok || len(de.Fields) != 1 || de.Fields[0].Field != c.field {
				t.Fatalf("%s: err %#v, want one field error on %s", c.name, err, c.field)
			}
		}
		if got := b.started(); len(got) != 0 {
			t.Fatalf("refused sends started turns: %v", got)
		}
		if _, err := w.svc.Models(w.host, domain.BackendEndpoint("th-1")); code(err) != domain.CodeUnavailable {
			t.Fatalf("models of a thread with no model: err %v, want unavailable", err)
		}

		res, err := w.svc.Send(w.host, domain.SendInput{ConversationID: conv, Request: "do it", Model: "m1", ReasoningEffort: "high"})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.started(); len(got) != 1 || got[0] != (domain.BackendTurnOptions{Model: "m1", Effort: "high"}) {
			t.Fatalf("turn/starts %v, want one with m1/high", got)
		}
		if res.Turn.ID == "" {
			t.Fatal("no Turn")
		}
	})
}

// A start the daemon refuses sends nothing: thread_not_idle in the
// daemon's words, and no Turn kept (the same key may be sent again); one
// it starts is the Turn's native turn, stored with it.
func TestBackendSendRefusedByTheDaemon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, "", &fakeTerm{term: idleTerminal()})
		b := &fakeDaemon{thread: domain.BackendThread{ThreadID: "th-1", Status: domain.BackendIdle},
			refuse: errors.New("thread is busy")}
		endpoints.UseThreadTransport(w.svc, domain.CodexThreads, b, w.term)
		in := domain.SendInput{ConversationID: domain.BackendConversationID("th-1"), Request: "do it", MessageID: "m-1"}

		_, err := w.svc.Send(w.host, in)
		de, ok := err.(*domain.Error)
		if !ok || de.Code != domain.CodeThreadNotIdle || !strings.Contains(de.Message, "nothing was sent: thread is busy") {
			t.Fatalf("refused start: err %v, want thread_not_idle in the daemon's words", err)
		}
		b.mu.Lock()
		b.refuse = nil
		b.mu.Unlock()
		res, err := w.svc.Send(w.host, in)
		if err != nil {
			t.Fatalf("the same key after a refused start: %v", err)
		}
		if res.Outcome != domain.OutcomeDone || res.Turn.SubmitStage != domain.SubmitEntered {
			t.Fatalf("started: %+v", res)
		}
		st, err := w.svc.Turn(w.host, res.Turn.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Turn.NativeTurnID != "turn-1" {
			t.Fatalf("native turn %q, want the daemon's turn-1", st.Turn.NativeTurnID)
		}
		if got := b.started(); len(got) != 2 {
			t.Fatalf("%d starts, want the refused one and the next", len(got))
		}
	})
}

// A thread whose pane is proven: one row for both, with the thread's send
// (and no pane send or watch), the pane's other controls, answering to
// the pane's conversation id too; a thread whose pane is not proven is
// its own row beside the pane's.
func TestBackendRowMergedWithItsPane(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		term := idleTerminal()
		term.Agent = domain.Agent{Kind: domain.AgentCodex, Version: "0.171.0", Profile: "codex-0.171.0", ThreadProbe: true}
		term.NativeIdentity, term.NativeThreadID = domain.IdentityAmbiguous, ""
		term.Warnings = []string{domain.WarnDaemonThread}
		w := newWorld(t, "", &fakeTerm{term: term})
		b := &fakeDaemon{thread: domain.BackendThread{ThreadID: "th-1", Status: domain.BackendIdle, PaneTerminalID: term.ID}}
		endpoints.UseThreadTransport(w.svc, domain.CodexThreads, b, w.term)

		l, err := w.svc.List(w.host)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Conversations) != 1 {
			t.Fatalf("%d rows, want one merged row: %+v", len(l.Conversations), l.Conversations)
		}
		c := l.Conversations[0]
		if c.ID != domain.BackendConversationID("th-1") || c.Backend == nil || c.Terminal.ID != term.ID ||
			c.Terminal.NativeIdentity != domain.IdentityResolved || c.Terminal.NativeThreadID != "th-1" || len(c.Terminal.Warnings) != 0 {
			t.Fatalf("merged row %+v", c)
		}
		var sends []domain.Action
		for _, a := range c.Actions {
			switch a.Name {
			case "send":
				sends = append(sends, a)
			case "watch", "identify_foreground":
				t.Fatalf("merged row offers the pane's %s: %+v", a.Name, a)
			}
		}
		if len(sends) != 1 || sends[0].Body["conversation_id"] != c.ID {
			t.Fatalf("merged row sends %+v, want the thread's only", sends)
		}
		got, err := w.svc.Conversation(w.host, domain.ConversationIDFor(term.ID))
		if err != nil || got.ID != c.ID {
			t.Fatalf("the pane's conversation id: %+v, %v", got, err)
		}

		b.thread.PaneTerminalID = ""
		l, err = w.svc.List(w.host)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Conversations) != 2 || l.Conversations[0].Backend != nil || l.Conversations[1].Terminal.ID != "" {
			t.Fatalf("unproven: rows %+v, want the pane's and the thread's apart", l.Conversations)
		}
	})
}
