package domain

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/coder/quartz"
)

// followBackend follows a native turn of a loaded thread through its
// daemon; why says what kept it from being followed.
func (s *ThreadCases) followBackend(ctx context.Context, ref EndpointRef, turnID string) (<-chan BackendEvent, string) {
	tt, ok := s.threadsOf(ref.Kind)
	if !ok {
		return nil, "no " + string(ref.Kind) + " transport is configured"
	}
	th, err := s.backendThread(ctx, ref)
	if err != nil {
		return nil, "the thread's " + tt.Name + " cannot be reached: " + errMessage(err)
	}
	events, err := tt.calls.Follow(ctx, th, turnID)
	if err != nil {
		return nil, "the thread's " + tt.Name + " cannot be followed: " + err.Error()
	}
	return events, ""
}

// backendTurnFollower follows a backend Turn through its daemon to its
// end, one event of the daemon per round. It never sends input. A daemon
// that cannot be reached, or goes away before the turn ends, stalls the
// Turn (renew or recover when it is back).
func (s *ThreadCases) backendTurnFollower(ctx context.Context, t Turn) follower {
	m := &backendTurnFollow{s: s, log: slog.With("turn_id", t.ID), t: t}
	if t.NativeTurnID == "" {
		m.stall(ctx, "the daemon's id of the turn was not recorded; recover or close the turn")
		return nil
	}
	events, why := s.followBackend(ctx, EndpointRef{Kind: t.Endpoint.Kind, ID: t.NativeThreadID}, t.NativeTurnID)
	if why != "" {
		m.stall(ctx, why)
		return nil
	}
	m.events = events
	m.hard = s.clock.NewTimer(s.clock.Until(t.HardDeadline()), "turn", "hard")
	return m
}

// backendTurnFollow is a backend Turn's monitor: the Turn as last stored,
// and the daemon's next event.
type backendTurnFollow struct {
	s      *ThreadCases
	log    *slog.Logger
	t      Turn
	events <-chan BackendEvent
	hard   *quartz.Timer
	ev     *BackendEvent // the event the next round folds in
}

func (m *backendTurnFollow) live() bool { return m.t.State.Monitored() }

func (m *backendTurnFollow) close() { m.hard.Stop() }

// round accepts a dispatching Turn (the daemon started it), then folds in
// the event the last wait received.
func (m *backendTurnFollow) round(ctx context.Context) monitorStep {
	if !m.accept(ctx) {
		return stepStop
	}
	ev := m.ev
	if ev == nil {
		return stepWait
	}
	m.ev = nil
	return m.event(ctx, *ev)
}

// wait receives the daemon's next event; the hard deadline, or a channel
// closed before the turn ended, stalls the Turn.
func (m *backendTurnFollow) wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-m.hard.C:
		m.stall(ctx, "the hard deadline passed before the turn ended")
		return false
	case ev, open := <-m.events:
		if !open {
			m.stall(ctx, "the thread's "+m.s.daemonName(m.t.Endpoint.Kind)+" stopped answering before the turn ended")
			return false
		}
		m.ev = &ev
		return true
	}
}

// reread takes the Turn as stored into m.t after err, a revision conflict
// (an answer, a close or a cancel wrote it meanwhile), so the caller tries
// its write again on it; false for any other error, or when the Turn
// cannot be read.
func (m *backendTurnFollow) reread(ctx context.Context, err error) bool {
	if !errors.Is(err, ErrRevisionConflict) {
		return false
	}
	for {
		cur, e2 := m.s.store.Turn(ctx, m.t.ID)
		if e2 == nil {
			m.t = cur
			return true
		}
		if !waitForStore(ctx, m.s.clock, m.log, e2) {
			return false
		}
	}
}

// storeRetry is how long a monitor waits before it writes again to a store
// out of reach.
const storeRetry = 500 * time.Millisecond

// storeDown: err says the store is out of reach. The monitor keeps what it
// holds (the daemon says each event once) and, after storeRetry, writes it
// again; false when err is another error or akkd stops meanwhile.
func (m *backendTurnFollow) storeDown(ctx context.Context, err error) bool {
	return waitForStore(ctx, m.s.clock, m.log, err)
}

// waitForStore: err says the store is out of reach; it waits storeRetry
// and says true (write again), or false for another error or when ctx
// ends meanwhile.
func waitForStore(ctx context.Context, clock Clock, log *slog.Logger, err error) bool {
	if ErrorCode(err) != CodeStoreUnavailable || ctx.Err() != nil {
		return false
	}
	log.Warn("monitor: the store is out of reach; writing again shortly", "err", err)
	t := clock.NewTimer(storeRetry, "monitor", "store")
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// stall stalls the Turn for why, unless akkd stops.
func (m *backendTurnFollow) stall(ctx context.Context, why string) {
	if ctx.Err() != nil {
		return // akkd stops: the next start follows on
	}
	for {
		if !m.t.State.Monitored() {
			return // it ended meanwhile
		}
		next := m.t
		next.State, next.FailureReason = TurnStalled, why
		_, err := m.s.ledger.transition(ctx, next, "turn.stalled", true)
		if m.reread(ctx, err) || m.storeDown(ctx, err) {
			continue // stall the Turn as stored, if it is still followed
		}
		if err != nil && ctx.Err() == nil {
			m.log.Error("monitor: stall backend turn", "err", err)
		}
		return
	}
}

// accept records a dispatching Turn as accepted: the daemon started it.
// false: the monitor ends.
func (m *backendTurnFollow) accept(ctx context.Context) bool {
	if m.t.State != TurnDispatching {
		return true
	}
	s := m.s
	for {
		next := m.t
		now := s.clock.Now().UTC()
		next.State, next.AcceptedAt, next.LastActivityAt = TurnWorking, now, now
		t, err := s.ledger.transition(ctx, next, "turn.accepted", true)
		if err == nil {
			m.t = t
			return true
		}
		if m.reread(ctx, err) {
			// Accept the Turn as stored, if it still waits to be.
			if m.t.State != TurnDispatching {
				return m.t.State.Monitored()
			}
			continue
		}
		if m.storeDown(ctx, err) {
			continue
		}
		if ctx.Err() == nil {
			m.log.Error("monitor: accept backend turn", "err", err)
		}
		return false
	}
}

// event folds one event of the daemon into the Turn and stores it. A
// revision conflict (an answer or a close wrote the Turn meanwhile) folds
// the same event again into the Turn as stored: the daemon sends each
// event once, and an end dropped here would leave the Turn to stall on a
// channel that has closed.
func (m *backendTurnFollow) event(ctx context.Context, ev BackendEvent) monitorStep {
	for {
		if step := m.fold(ctx, ev); step != stepAgain {
			return step
		}
	}
}

// fold is one try of event: stepAgain after a revision conflict, with
// m.t read again.
func (m *backendTurnFollow) fold(ctx context.Context, ev BackendEvent) monitorStep {
	s := m.s
	if cur, err := s.store.Turn(ctx, m.t.ID); err == nil {
		m.t = cur // closed or cancelled meanwhile
	}
	if !m.t.State.Monitored() {
		return stepStop
	}
	next, typ, webhook := s.backendTurnEvent(m.t, ev, s.clock.Now().UTC())
	run := transitionRun{s.ledger, s.ac}
	stored, auto, err := run.store(ctx, next, typ, webhook, m.questionExtra(ctx, ev, next))
	if err != nil {
		if m.reread(ctx, err) || m.storeDown(ctx, err) {
			return stepAgain
		}
		if ctx.Err() == nil {
			m.log.Error("monitor: backend turn", "err", err)
		}
		return stepStop
	}
	m.t = stored
	if auto {
		if cur, _, err := run.autoAnswer(ctx, m.t); err == nil {
			m.t = cur
		}
	}
	return stepWait
}

// questionExtra is the public projection of the question a
// turn.interaction_required event announces, nil when none.
func (m *backendTurnFollow) questionExtra(ctx context.Context, ev BackendEvent, next Turn) map[string]any {
	s := m.s
	if ev.Kind != BackendQuestion {
		return nil
	}
	// The callback carries the public projection only.
	tt, ok := s.threadsOf(m.t.Endpoint.Kind)
	if !ok {
		return nil
	}
	if st, ok := tt.calls.Question(m.t.NativeTurnID); ok {
		if key, err := s.ic.stepKey(ctx, next, st); err == nil {
			if in, _, err := s.ic.project(ctx, next, tt.Agent, st, key); err == nil {
				return map[string]any{"interaction": in}
			}
		}
	}
	return nil
}

// backendTurnEvent is the transition of t for the daemon's event ev, read
// at now; typ is "" when it moves no state (the activity is still stored).
func (s *ThreadCases) backendTurnEvent(t Turn, ev BackendEvent, now time.Time) (next Turn, typ string, webhook bool) {
	next = t
	next.LastActivityAt = now
	switch ev.Kind {
	case BackendProgress:
		next.LatestText = boundText(s.turns.redact, ev.Text, ProgressLimit)
	case BackendChanges:
		// The daemon sends a patch's files as it applies them: now is when.
		for _, c := range s.ledger.storedChanges(ev.Changes) {
			if c.At.IsZero() || c.At.Year() <= 1 {
				c.At = now
			}
			next.NewChanges = append(next.NewChanges, c)
		}
	case BackendApproval:
		if t.State == TurnAwaitingApproval {
			break // the same request, handed again to a follower after a restart
		}
		next.State, typ, webhook = TurnAwaitingApproval, "turn.approval_required", true
		next.FailureReason = ""
	case BackendQuestion:
		if t.State == TurnAwaitingInteraction {
			break // the same question, handed again after a restart
		}
		next.State, typ, webhook = TurnAwaitingInteraction, "turn.interaction_required", true
	case BackendResolved:
		if t.State == TurnAwaitingApproval || t.State == TurnAwaitingInteraction {
			next.State, typ = TurnWorking, "turn.working"
		}
	case BackendCompleted:
		next.State, typ, webhook = TurnCompleted, "turn.completed", true
		next.FinalMessage = s.ledger.redact(ev.Text)
	case BackendInterrupted:
		next.State, typ, webhook = TurnCancelled, "turn.cancelled", true
	case BackendFailed:
		next.State, typ, webhook = TurnFailed, "turn.failed", true
		next.FailureReason = boundText(s.turns.redact, ev.Text, 500)
	case BackendGone:
		next.State, typ, webhook = TurnStalled, "turn.stalled", true
		next.FailureReason = "the thread's " + s.daemonName(t.Endpoint.Kind) + " went away before the turn ended: " + ev.Text
	}
	return next, typ, webhook
}
