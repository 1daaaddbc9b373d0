package domain

import (
	"context"
	"log/slog"
)

// Monitors follow every Turn and Watch this daemon runs, one monitor
// each, through the follower its endpoint gives: they resume them after a
// restart, start and wake them, and decide what a pane's look and its
// record's read mean for a Turn. They never send input but to answer for
// a host's auto-approval policy (ApprovalCases.autoApprove). They hold
// only their ports.
type Monitors struct {
	basics
	turns     *turns // the monitors' registry, the panes' observers (UseTurns)
	answers   *answerMarks
	ledger    *turnLedger
	endpoints *endpointRegistry
	watches   *WatchCases
	ac        *ApprovalCases
	ic        *InteractionCases
}

// StartTurnMonitors resumes monitoring of every live Turn (after a
// restart) and keeps ctx as the life of monitors started later.
func (s *Monitors) StartTurnMonitors(ctx context.Context) error {
	tr := s.turns
	if tr == nil {
		return nil
	}
	tr.monMu.Lock()
	tr.monCtx = ctx
	tr.monMu.Unlock()
	live, err := s.store.Turns(ctx, TurnFilter{All: true, Owned: true, Limit: 100000})
	if err != nil {
		return err
	}
	for _, t := range live {
		if t.State.Monitored() {
			s.startMonitor(t.ID)
		}
	}
	if s.watches.watchTerm != nil {
		ws, err := s.store.OwnedActiveWatches(ctx)
		if err != nil {
			return err
		}
		for _, w := range ws {
			if w.TurnID == "" { // a Send's Watch follows its Turn's monitor
				s.watches.startWatchMonitor(w.ID)
			}
		}
	}
	return nil
}

// WaitTurnMonitors waits until every monitor has stopped (after the ctx
// given to StartTurnMonitors ended).
func (s *Monitors) WaitTurnMonitors() {
	if s.turns != nil {
		s.turns.monWG.Wait()
	}
}

func (s *Monitors) startMonitor(turnID string) { s.turns.startMonitorFunc(turnID, s.monitor) }

// startMonitorFunc runs run(ctx, id) as the one monitor of a Turn or Watch.
func (tr *turns) startMonitorFunc(turnID string, run func(context.Context, string)) {
	tr.monMu.Lock()
	defer tr.monMu.Unlock()
	if tr.monCtx == nil || tr.monCtx.Err() != nil {
		return
	}
	if h, running := tr.monitors[turnID]; running && h.ctx.Err() == nil {
		return
	}
	ctx, cancel := context.WithCancel(tr.monCtx)
	h := &monitorHandle{ctx: ctx, cancel: cancel, nudge: make(chan struct{}, 1)}
	ctx = context.WithValue(ctx, nudgeKey{}, h.nudge)
	tr.monitors[turnID] = h
	tr.monWG.Add(1)
	go func() {
		defer tr.monWG.Done()
		defer func() {
			tr.monMu.Lock()
			if tr.monitors[turnID] == h {
				delete(tr.monitors, turnID)
			}
			tr.monMu.Unlock()
			cancel()
		}()
		run(ctx, turnID)
	}()
}

// monitorHandle is one running monitor.
type monitorHandle struct {
	ctx    context.Context
	cancel context.CancelFunc
	nudge  chan struct{} // the record changed: reload it and look at the screen now
}

type nudgeKey struct{}

// nudges returns the nudge channel of the monitor running with ctx.
func nudges(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(nudgeKey{}).(chan struct{})
	return ch
}

func (tr *turns) stopMonitor(turnID string) {
	tr.monMu.Lock()
	h := tr.monitors[turnID]
	tr.monMu.Unlock()
	if h != nil {
		h.cancel()
	}
}

// monitor follows one Turn to a state the monitor does not follow. It never
// sends input.
func (s *Monitors) monitor(ctx context.Context, turnID string) {
	log := slog.With("turn_id", turnID)
	t, err := s.store.Turn(ctx, turnID)
	for err != nil {
		// The store out of reach: the Turn is still to be followed once
		// it answers (a monitor that gave up would leave it working).
		if !waitForStore(ctx, s.clock, log, err) {
			if ctx.Err() == nil {
				log.Error("monitor: load turn", "err", err)
			}
			return
		}
		t, err = s.store.Turn(ctx, turnID)
	}
	if f := s.endpoints.of(t.Endpoint).turnFollower(ctx, t); f != nil {
		runMonitor(ctx, f)
	}
}

// follower is what one monitor follows: a pane's Turn or Watch (rounds of
// looks at the screen and reads of the record, woken by the record, the
// screen and a tick) or a backend Turn or Watch (the daemon's events, one
// per round). Each transport gives one; runMonitor is the only loop.
type follower interface {
	// live says the Turn or Watch is still followed.
	live() bool
	// round observes, decides and stores one transition.
	round(ctx context.Context) monitorStep
	// wait blocks until the next round is due; false: the monitor ends.
	wait(ctx context.Context) bool
	// close releases what the follower waits on.
	close()
}

// monitorStep is how a monitor's round ends.
type monitorStep int

const (
	stepWait  monitorStep = iota // wait, then the next round
	stepAgain                    // the next round at once
	stepStop                     // the monitor ends
)

// runMonitor is every monitor: rounds of f until it is no longer live or
// a round or a wait ends it; no wait after a round that ended it (a
// backend follower's channel closes after the end, which a wait would
// take for the daemon going away). It never sends input.
func runMonitor(ctx context.Context, f follower) {
	defer f.close()
	for f.live() {
		switch f.round(ctx) {
		case stepStop:
			return
		case stepAgain:
			continue
		}
		if !f.live() || !f.wait(ctx) {
			return // a round that ended it waits for nothing more
		}
	}
}

// TerminalChanged tells the monitors following terminalID (its holding
// Turn, its active Watches) that an exact channel opened or ended a prompt
// there: they look again at once. No input.
func (s *Service) TerminalChanged(ctx context.Context, terminalID string) {
	if s.turns == nil {
		return
	}
	if t, err := s.holdingTurn(ctx, terminalID); err == nil {
		s.nudge(t.ID)
	}
	if ws, err := s.store.OwnedActiveWatches(ctx); err == nil {
		for _, w := range ws {
			if w.TerminalID == terminalID {
				s.nudge(w.ID)
			}
		}
	}
}

// monitoring reports whether this daemon's monitor runs the Turn.
func (tr *turns) monitoring(turnID string) bool {
	tr.monMu.Lock()
	defer tr.monMu.Unlock()
	h, ok := tr.monitors[turnID]
	return ok && h.ctx.Err() == nil
}

// resume follows a stalled Turn again, as working (dispatching until its
// request was accepted). No input.
func (s *Monitors) resume(ctx context.Context, t Turn, typ string) (ActionResult, error) {
	t.State = TurnWorking
	if t.AcceptedAt.IsZero() {
		t.State = TurnDispatching
	}
	t.LastActivityAt = s.clock.Now().UTC()
	t.EndedAt, t.FailureReason = zeroTime, ""
	t, err := s.ledger.transition(ctx, t, typ, false)
	if err != nil {
		return ActionResult{}, err
	}
	s.startMonitor(t.ID)
	return ActionResult{Turn: t, Outcome: OutcomeDone}, nil
}
