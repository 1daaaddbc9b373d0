package domain_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"akk/domain"
)

// clearingTerm is fakeTerm with the user-explicit path's clear key.
type clearingTerm struct {
	*fakeTerm
	clears   int
	clearErr error
	pressed  bool
}

func (c *clearingTerm) ClearComposer(context.Context, domain.Terminal) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clears++
	if c.clearErr != nil {
		return c.pressed, c.clearErr
	}
	c.term.ComposerEmpty = true
	return true, nil
}

// clearingPanes is a pane transport with ct's clear key.
type clearingPanes struct {
	panes
	ct *clearingTerm
}

func (p clearingPanes) ClearComposer(ctx context.Context, t domain.Terminal) (bool, error) {
	return p.ct.ClearComposer(ctx, t)
}

// useClearing rewires w's Turns onto ct, timed by cfg, and starts their
// monitors.
func useClearing(t *testing.T, w *world, ct *clearingTerm, cfg domain.TurnConfig) {
	w.redact, w.cfg = nil, cfg
	w.use(t, clearingPanes{panesOf(ct), ct})
}

func draftTerminal() domain.Terminal {
	t := idleTerminal()
	t.ComposerEmpty = false
	return t
}

func TestUserExplicitSendClearsTheDraftOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ct := &clearingTerm{fakeTerm: &fakeTerm{term: draftTerminal()}}
		w := newWorld(t, "", ct.fakeTerm)
		useClearing(t, w, ct, domain.TurnConfig{PollInterval: 5 * time.Millisecond, ScreenInterval: 10 * time.Millisecond})

		// No target: only a send-ready (empty composer) pane qualifies.
		if _, err := w.svc.Send(w.host, domain.SendInput{Request: "hi"}); code(err) != domain.CodeNoSendReadyTerminal {
			t.Fatalf("omitted target: %v", err)
		}
		res, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Turn.DeliveryPath != domain.PathUserExplicit || res.Outcome != domain.OutcomeDone || ct.clears != 1 || len(ct.submits) != 1 {
			t.Fatalf("path %s outcome %s clears %d submits %v", res.Turn.DeliveryPath, res.Outcome, ct.clears, ct.submits)
		}
		if res.Watch.ID == "" || res.Watch.Mode != domain.WatchModeTurn || res.Watch.TurnID != res.Turn.ID {
			t.Fatalf("watch %+v", res.Watch)
		}
		ct.set(func(f *fakeTerm) {
			f.progress = domain.TurnProgress{Accepted: true, Completed: true, FinalMessage: "done", LatestText: "done",
				Actions: []domain.ProgressAction{{Type: "Bash", Status: "completed"}}}
		})
		w.waitState(t, res.Turn.ID, domain.TurnCompleted)
		got, err := w.svc.GetWatch(w.host, res.Watch.ID)
		if err != nil || got.State != domain.WatchCompleted || got.FinalMessage != "done" {
			t.Fatalf("watch after completion: %+v %v", got, err)
		}
		for _, typ := range webhookTypes(t, w, res.Watch.ID) {
			t.Fatalf("a Send's Watch called back on its own: %s", typ)
		}
		st, err := w.svc.Turn(w.host, res.Turn.ID)
		if err != nil || st.WatchID != res.Watch.ID || st.Progress.State != domain.ProgressOK || len(st.Progress.Actions) != 1 {
			t.Fatalf("status %+v %v", st.Progress, err)
		}
	})
}

func TestUserExplicitSendTakesBackABrokenTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ct := &clearingTerm{fakeTerm: &fakeTerm{term: idleTerminal()}}
		w := newWorld(t, "", ct.fakeTerm)
		useClearing(t, w, ct, domain.TurnConfig{PollInterval: 5 * time.Millisecond, ScreenInterval: 10 * time.Millisecond,
			AcceptWindow: 50 * time.Millisecond})
		first, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "first"})
		if err != nil {
			t.Fatal(err)
		}
		// Never accepted: delivery_uncertain, which holds the pane.
		ct.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenIdle })
		w.waitState(t, first.Turn.ID, domain.TurnDeliveryUncertain)
		if _, err := w.svc.Send(w.other, domain.SendInput{TerminalID: "term_a", Request: "other"}); code(err) != domain.CodeConflictActiveTurn {
			t.Fatalf("another host took the pane: %v", err)
		}
		if _, err := w.svc.Send(w.host, domain.SendInput{SessionID: first.Turn.SessionID, Request: "by session"}); code(err) != domain.CodeConflictActiveTurn {
			t.Fatalf("a session send took the pane: %v", err)
		}
		second, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "second"})
		if err != nil {
			t.Fatal(err)
		}
		if second.Turn.DeliveryPath != domain.PathUserExplicit || ct.clears != 0 {
			t.Fatalf("path %s clears %d", second.Turn.DeliveryPath, ct.clears)
		}
		old, _ := w.svc.Turn(w.host, first.Turn.ID)
		if old.Turn.State != domain.TurnClosed || !strings.Contains(old.Turn.FailureReason, second.Turn.ID) {
			t.Fatalf("the broken turn: %s %q", old.Turn.State, old.Turn.FailureReason)
		}
	})
}

func TestUnprovenClearIsUncertainAndTypesNoRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ct := &clearingTerm{fakeTerm: &fakeTerm{term: draftTerminal()}, clearErr: errors.New("still shows text"), pressed: true}
		w := newWorld(t, "", ct.fakeTerm)
		useClearing(t, w, ct, domain.TurnConfig{PollInterval: 5 * time.Millisecond, ScreenInterval: 10 * time.Millisecond})
		res, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != domain.OutcomeUncertain || !res.DoNotRetry || res.Turn.State != domain.TurnDeliveryUncertain || len(ct.submits) != 0 {
			t.Fatalf("%+v submits %v", res, ct.submits)
		}
		// A clear that provably sent nothing leaves no Turn.
		ct2 := &clearingTerm{fakeTerm: &fakeTerm{term: draftTerminal()}, clearErr: errors.New("a draft of 3 rows")}
		w2 := newWorld(t, "", ct2.fakeTerm)
		useClearing(t, w2, ct2, domain.TurnConfig{})
		if _, err := w2.svc.Send(w2.host, domain.SendInput{TerminalID: "term_a", Request: "hi"}); code(err) != domain.CodeTerminalNotIdle {
			t.Fatalf("unclearable draft: %v", err)
		}
		if ts, _ := w2.svc.Turns(w2.host, "", 0); len(ts) != 0 {
			t.Fatalf("a refused send left %d turns", len(ts))
		}
	})
}

func TestProgressBodyBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, "", &fakeTerm{term: idleTerminal()})
		long := strings.Repeat("a", 801)
		p := w.svc.Progress(domain.Turn{LatestText: long, NativeTurnID: "nt"})
		if p.State != domain.ProgressOK || len([]rune(p.Commentary)) != 800 || !p.Truncated || p.NativeTurnID != "nt" || !p.LatestItemAt.IsZero() {
			t.Fatalf("801 code points: %d %+v", len([]rune(p.Commentary)), p)
		}
		// A cut never splits a base letter from its combining accent.
		accented := "x" + strings.Repeat("e\u0301", 400) // 801 code points
		p = w.svc.Progress(domain.Turn{LatestText: accented})
		if n := len([]rune(p.Commentary)); n != 799 || !strings.HasSuffix(p.Commentary, "e\u0301") {
			t.Fatalf("accented cut to %d code points", n)
		}
		// Two actions share the budget; a third is not shown; code is left out.
		acts := []domain.ProgressAction{{Type: "Bash", Status: "completed"}, {Type: "Edit", Status: "in_progress"}, {Type: "x", Status: "failed"}}
		p = w.svc.Progress(domain.Turn{LatestText: long, Actions: acts})
		if len(p.Actions) != 2 || len([]rune(p.Commentary)) != 800-len("Bashcompleted")-len("Editin_progress") {
			t.Fatalf("with actions: %d actions, %d code points", len(p.Actions), len([]rune(p.Commentary)))
		}
		p = w.svc.Progress(domain.Turn{LatestText: "Here:\n```diff\n-secret\n+x\n```\nDone."})
		if strings.Contains(p.Commentary, "secret") || !p.Truncated {
			t.Fatalf("code block shown: %q", p.Commentary)
		}
		if p := w.svc.Progress(domain.Turn{}); p.State != domain.ProgressNone {
			t.Fatalf("empty: %+v", p)
		}
	})
}

func TestFirstAcceptedTurnBindsItsSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		res, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := w.store.Session(context.Background(), res.Turn.SessionID); s.NativeThreadID != "" {
			t.Fatalf("bound before acceptance: %q", s.NativeThreadID)
		}
		ft.set(func(f *fakeTerm) {
			f.progress = domain.TurnProgress{Accepted: true, NativeThreadID: "thread-1", Completed: true, FinalMessage: "ok"}
		})
		w.waitState(t, res.Turn.ID, domain.TurnCompleted)
		if s, _ := w.store.Session(context.Background(), res.Turn.SessionID); s.NativeThreadID != "thread-1" {
			t.Fatalf("session bound to %q", s.NativeThreadID)
		}
		// The pane now shows another native conversation: a session send is
		// refused before input.
		ft.set(func(f *fakeTerm) { f.term = idleTerminal(); f.term.NativeThreadID = "thread-2"; f.submits = nil })
		if _, err := w.svc.Send(w.host, domain.SendInput{SessionID: res.Turn.SessionID, Request: "again"}); code(err) != domain.CodeSessionThreadChanged {
			t.Fatalf("session send to another thread: %v", err)
		}
		if n, _ := ft.counts(); n != 0 {
			t.Fatalf("%d submits", n)
		}
	})
}

func TestListShowsAttentionTurnsWhosePaneIsGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		res, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		l, err := w.svc.List(w.host)
		if err != nil || len(l.Conversations) != 1 || len(l.Unavailable) != 0 {
			t.Fatalf("list: %+v %v", l, err)
		}
		names := map[string]bool{}
		for _, a := range l.Conversations[0].Actions {
			names[a.Name] = true
		}
		if !names["status"] || !names["cancel"] || !names["close"] || names["send"] || len(l.Conversations[0].Watches) != 1 || !names["unwatch"] {
			t.Fatalf("row actions %v, watches %d", names, len(l.Conversations[0].Watches))
		}
		ft.set(func(f *fakeTerm) { f.gone = true })
		w.waitState(t, res.Turn.ID, domain.TurnFailed)
		// A failed Turn needs nothing; an uncertain one does.
		res2 := domain.Turn{}
		ft.set(func(f *fakeTerm) {
			f.gone = false
			f.term = idleTerminal()
			f.stage, f.submitErr = domain.SubmitPasted, errors.New("lost")
		})
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "again"})
		if err != nil || r.Turn.State != domain.TurnDeliveryUncertain {
			t.Fatalf("uncertain send: %+v %v", r, err)
		}
		res2 = r.Turn
		ft.set(func(f *fakeTerm) { f.gone = true })
		l, err = w.svc.List(w.host)
		if err != nil || len(l.Conversations) != 0 || len(l.Unavailable) != 1 || l.Unavailable[0].Turn.ID != res2.ID {
			t.Fatalf("list with the pane gone: %+v %v", l, err)
		}
		names = map[string]bool{}
		for _, a := range l.Unavailable[0].Actions {
			names[a.Name] = true
		}
		if !names["status"] || !names["close"] || names["recover"] || names["cancel"] {
			t.Fatalf("unavailable turn actions %v", names)
		}
		if other, _ := w.svc.List(w.other); len(other.Unavailable) != 0 {
			t.Fatalf("another host sees %d unavailable turns", len(other.Unavailable))
		}
	})
}

// A version read with a borrowed profile: a draft is refused before any
// key, even when the caller names the terminal (the borrowed clear key is
// not proven there).
func TestCompatibilityDraftIsRefusedWithNothingTyped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		term := draftTerminal()
		term.Agent.Compatibility = true
		ct := &clearingTerm{fakeTerm: &fakeTerm{term: term}}
		w := newWorld(t, "", ct.fakeTerm)
		useClearing(t, w, ct, domain.TurnConfig{PollInterval: 5 * time.Millisecond, ScreenInterval: 10 * time.Millisecond})
		_, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "hi"})
		if code(err) != domain.CodeTerminalNotIdle || !strings.Contains(err.Error(), "no profile of its own") {
			t.Fatalf("send over a draft on a borrowed profile: %v", err)
		}
		if ct.clears != 0 || len(ct.submits) != 0 {
			t.Fatalf("keys: clears %d submits %v", ct.clears, ct.submits)
		}
		turns, err := w.svc.Turns(w.host, "", 10)
		if err != nil || len(turns) != 0 {
			t.Fatalf("a refused send left turns %v %v", turns, err)
		}
	})
}
