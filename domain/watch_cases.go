package domain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// WatchCases are Watches of tasks AKK did not send (and a Send's Watch,
// which follows its Turn). They hold only their ports.
type WatchCases struct {
	basics
	*inputGate
	turns     *turns        // the panes' observer, locks and monitors (UsePanes)
	watchTerm WatchTerminal // the panes' (UsePanes)
	backend   BackendThreads
	ledger    *turnLedger
	endpoints *endpointRegistry
	nat       *NativeCases
	hosts     *HostCases
	viaTurns  turnRenewals
}

// turnRenewals are the Turn actions a Send's Watch takes through its
// Turn.
type turnRenewals interface {
	Renew(ctx context.Context, id string) (ActionResult, error)
	Recover(ctx context.Context, id string) (ActionResult, error)
}

// UseBackendThreads wires a backend in: a Watch of a pane whose records
// cannot name its task asks it before any probe.
func (s *WatchCases) UseBackendThreads(b BackendThreads) { s.backend = b }

func (s *WatchCases) watchData(w Watch) map[string]any {
	d := map[string]any{"watch_id": w.ID, "terminal_id": w.TerminalID, "conversation": w.Conversation,
		"state": string(w.State), "watch_mode": w.Mode, "confidence": w.Confidence()}
	if w.FinalMessage != "" {
		d["final_message"] = w.FinalMessage
	}
	if w.Reason != "" {
		d["reason"] = w.Reason
	}
	return d
}

func (s *WatchCases) watchTransition(ctx context.Context, w Watch, typ string, webhook bool) (Watch, error) {
	w.UpdatedAt = s.clock.Now().UTC()
	if w.State != WatchActive && w.EndedAt.IsZero() {
		w.EndedAt = w.UpdatedAt
	}
	err := s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.UpdateWatch(ctx, w); err != nil {
			return err
		}
		if typ == "" {
			return nil
		}
		_, err := s.emitLocked(ctx, tx, Event{Type: typ, HostID: w.HostID, Conversation: w.Conversation, Subject: w.ID,
			Data: s.watchData(w)}, webhook)
		return err
	})
	if err != nil {
		return w, err
	}
	w.Revision++
	s.ledger.nudge(w.ID)
	return w, nil
}

func countHost(ws []Watch, host string) int {
	n := 0
	for _, w := range ws {
		if w.HostID == host {
			n++
		}
	}
	return n
}

// StartWatch observes the task running in a terminal.
func (s *WatchCases) StartWatch(ctx context.Context, in NewWatchInput) (Watch, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return Watch{}, err
	}
	if s.turns == nil || s.watchTerm == nil {
		return Watch{}, E(CodeUnavailable, "watches are not configured")
	}
	if err := s.validate(in); err != nil {
		return Watch{}, err
	}
	ep := s.endpoints.of(ParseEndpoint(in.TerminalID))
	a, err := ep.WatchTarget(ctx, in.TerminalID)
	if err != nil {
		return Watch{}, err
	}
	if err := s.mayWatch(ctx, p, in.TerminalID, a.What); err != nil {
		return Watch{}, err
	}
	if a, err = ep.AnchorWatch(ctx, a); err != nil {
		return Watch{}, err
	}
	if !a.Exact {
		if a, err = s.threadAnchor(ctx, p, a, in); err != nil {
			return Watch{}, err
		}
	}
	now := s.clock.Now().UTC()
	w := Watch{ID: s.ids.New("watch"), HostID: p.HostID, Conversation: p.Conversation, TerminalID: in.TerminalID,
		Endpoint: a.Ref, Mode: WatchModeActivity, State: WatchActive, Mark: a.Mark, NativeTurnID: a.NativeTurnID, SeenActivity: true,
		HardTimeout: s.turns.cfg.DefaultHard, CreatedAt: now, UpdatedAt: now, Revision: 1}
	if a.Exact {
		w.Mode = WatchModeExact
	}
	return s.beginWatch(ctx, w, in)
}

// beginWatch stores a new Watch (its hard timeout the request's, when it
// names one) and starts its monitor.
func (s *WatchCases) beginWatch(ctx context.Context, w Watch, in NewWatchInput) (Watch, error) {
	if in.HardTimeoutMinutes > 0 {
		w.HardTimeout = time.Duration(in.HardTimeoutMinutes) * time.Minute
	}
	if err := s.insertWatch(ctx, w); err != nil {
		return Watch{}, err
	}
	s.startWatchMonitor(w.ID)
	return w, nil
}

// mayWatch refuses a new Watch of endpoint (a "terminal" or a "thread")
// that another controller's Turn holds (its task and final message are not
// this caller's to read), or one over the caller's limit.
func (s *WatchCases) mayWatch(ctx context.Context, p Principal, endpoint, what string) error {
	if holding, err := s.holdingTurn(ctx, endpoint); err == nil {
		if !p.CanSeeHost(holding.HostID) {
			return E(CodeConflictActiveTurn, "a Turn of another controller holds this "+what)
		}
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	if active, err := s.store.ActiveWatches(ctx); err != nil {
		return err
	} else if n := countHost(active, p.HostID); n >= MaxActiveWatchesPerHost {
		return E(CodeWatchLimit, fmt.Sprintf("this controller has %d active Watches, the most it may have; unwatch one first", n))
	}
	return nil
}

// threadAnchor anchors a Watch its endpoint could not anchor exactly on
// the agent's thread, when it can be named: by the agent's backend (no
// input), or by the probe in.Identify asks for; else it keeps a's mark.
func (s *WatchCases) threadAnchor(ctx context.Context, p Principal, a WatchAnchor, in NewWatchInput) (WatchAnchor, error) {
	if m, ok := s.backendAnchor(ctx, a.Term); ok {
		a.Mark, a.Exact = m, true
		return a, nil
	}
	if !in.Identify {
		return a, nil
	}
	var err error
	if a.Mark, a.Exact, err = s.identifiedAnchor(ctx, p, a.Term, a.Mark); err != nil {
		return WatchAnchor{}, err
	}
	return a, nil
}

// backendAnchor anchors a Watch of a Codex pane whose records cannot name
// its task on the thread the agent's backend names, with no input: the pane
// works before the backend is asked and still works, the same process,
// after; the thread's record holds an open task.
func (s *WatchCases) backendAnchor(ctx context.Context, term Terminal) (DurableMark, bool) {
	anchor, ok := s.watchTerm.(ThreadAnchor)
	if s.backend == nil || !ok || !term.Agent.ThreadProbe || term.NativeIdentity != IdentityAmbiguous || term.ScreenState != ScreenWorking {
		return "", false
	}
	thread, ok, err := s.backend.ForegroundThread(ctx, term)
	if err != nil || !ok {
		return "", false
	}
	after, err := s.turns.term.Observe(ctx, term.ID)
	if err != nil || after.Process != term.Process || after.ScreenState != ScreenWorking {
		return "", false
	}
	m, exact, err := anchor.AnchorWatchThread(ctx, after, thread)
	if err != nil || !exact {
		return "", false
	}
	return m, true
}

// identifiedAnchor anchors a Watch of a Codex pane whose records cannot
// name its task: under the terminal's lock, the closed status probe once
// into the working pane's empty composer names the foreground thread, and
// the Watch anchors on that thread's open task. A probe that cannot start
// is refused with no key; one that sent keys and proved no card keeps the
// best-effort mark (observation stays read-only).
func (s *WatchCases) identifiedAnchor(ctx context.Context, p Principal, term Terminal, mark DurableMark) (DurableMark, bool, error) {
	anchor, ok := s.watchTerm.(ThreadAnchor)
	if !term.Agent.ThreadProbe || s.nat.native == nil || !ok {
		return "", false, E(CodeManualRequired, "identify is a Codex probe; this pane's Watch needs none or cannot have one")
	}
	unlock := s.turns.lockTerminal(term.ID)
	defer unlock()
	now, err := s.turns.term.Observe(ctx, term.ID)
	if errors.Is(err, ErrTerminalGone) {
		return "", false, E(CodeTerminalNotFound, "no live pane runs terminal "+term.ID)
	}
	if err != nil {
		return "", false, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	if now.Agent.Compatibility || !now.Agent.Profiled() {
		return "", false, E(CodeManualRequired, "the probe runs only on a version's own profile")
	}
	if now.ScreenState != ScreenWorking || !now.ComposerEmpty {
		return "", false, E(CodeTerminalNotIdle, fmt.Sprintf("the probe needs a working pane with an empty composer (screen %s)", now.ScreenState))
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := s.nat.native.WorkingStatusCard(seq, now)
	if rerr := refusedBeforeInput(stage, err, "the status plan"); rerr != nil {
		return "", false, rerr
	}
	if err != nil || stage != AnswerVerified || st.NativeThreadID == "" {
		s.nat.noteNativeUncertain(seq, p, term.ID, "watch_identify", err)
		return mark, false, nil
	}
	m, exact, err := anchor.AnchorWatchThread(seq, now, st.NativeThreadID)
	if err != nil {
		return mark, false, nil
	}
	return m, exact, nil
}

func (s *WatchCases) startWatchMonitor(id string) {
	// Watches share the monitor registry of Turns (ids never collide).
	s.turns.startMonitorFunc(id, s.watchMonitor)
}

// watchMonitor follows one Watch. It never sends input.
func (s *WatchCases) watchMonitor(ctx context.Context, id string) {
	w, err := s.store.Watch(ctx, id)
	for err != nil {
		if !waitForStore(ctx, s.clock, slog.With("watch_id", id), err) {
			return
		}
		w, err = s.store.Watch(ctx, id)
	}
	log := slog.With("watch_id", w.ID)
	src, why := s.endpoints.of(w.Endpoint).WatchSource(ctx, w)
	if why != "" {
		// Out of reach: decided as its monitor would, on a source that
		// observes nothing more.
		m := &watchFollow{s: s, src: spentWatchSource{}, log: log, w: w}
		m.decide(ctx, s.clock.Now().UTC(), Observation{Lost: EndpointUnreachable, Why: why})
		return
	}
	runMonitor(ctx, &watchFollow{s: s, src: src, log: log, w: w})
}

// insertWatch stores a new Watch with its watch.started event.
func (s *WatchCases) insertWatch(ctx context.Context, w Watch) error {
	return s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertWatch(ctx, w); err != nil {
			return err
		}
		_, err := s.emitLocked(ctx, tx, Event{Type: "watch.started", HostID: w.HostID, Conversation: w.Conversation,
			Subject: w.ID, Data: s.watchData(w)}, false)
		return err
	})
}

func (s *WatchCases) ownedWatch(ctx context.Context, id string) (Watch, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return Watch{}, err
	}
	w, err := s.store.Watch(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && !p.CanSeeHost(w.HostID)) {
		return Watch{}, E(CodeWatchNotFound, "no watch "+id)
	}
	return w, err
}

func (s *WatchCases) applyWatchProgress(w Watch, p TurnProgress) (Watch, string, bool) {
	if p.LatestText != "" {
		w.LatestText, _ = s.ledger.cutGraphemes(s.turns.redactText(p.LatestText), ProgressLimit)
	}
	if p.NativeTurnID != "" {
		w.NativeTurnID = p.NativeTurnID
	}
	switch {
	case p.Completed:
		w.State, w.FinalMessage = WatchCompleted, s.turns.redactText(p.FinalMessage)
		return w, "watch.completed", true
	case p.Failed:
		w.State, w.Reason = WatchFailed, boundText(s.turns.redact, p.FailureReason, FailureReasonLimit)
		return w, "watch.failed", true
	case p.Interrupted:
		w.State, w.Reason = WatchFailed, "the task was interrupted"
		return w, "watch.failed", true
	}
	return w, "", false
}
