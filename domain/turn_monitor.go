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
	turns     *turns // the monitors' registry, the panes' observers (UsePanes)
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
	src, unseenWait, why := s.endpoints.of(t.Endpoint).TurnSource(ctx, t)
	if why != "" {
		s.turnUnreachable(ctx, t, why)
		return
	}
	runMonitor(ctx, s.newTurnFollow(t, src, unseenWait))
}

// turnUnreachable decides t's endpoint out of reach, why, as its monitor
// would: a source that observes nothing more.
func (s *Monitors) turnUnreachable(ctx context.Context, t Turn, why string) {
	m := s.newTurnFollow(t, spentTurnSource{}, false)
	m.decide(ctx, s.clock.Now().UTC(), Observation{Lost: EndpointUnreachable, Why: why})
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
