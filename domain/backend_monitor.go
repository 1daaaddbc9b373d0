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
func (s *ThreadCases) followBackend(ctx context.Context, ref EndpointRef, turnID string) (<-chan Observation, string) {
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
// end, one event of the daemon per round, decided as every transport's
// rounds are (decideTurn). It never sends input. A daemon that cannot be
// reached, or goes away before the turn ends, stalls the Turn (renew or
// recover when it is back).
func (s *ThreadCases) backendTurnFollower(ctx context.Context, t Turn) follower {
	m := &backendTurnFollow{s: s, log: slog.With("turn_id", t.ID), followState: followState{t: t, mark: t.Mark}}
	if t.NativeTurnID == "" {
		m.observe(ctx, Observation{Lost: EndpointUnreachable, Why: "the daemon's id of the turn was not recorded; recover or close the turn"})
		return nil
	}
	events, why := s.followBackend(ctx, EndpointRef{Kind: t.Endpoint.Kind, ID: t.NativeThreadID}, t.NativeTurnID)
	if why != "" {
		m.observe(ctx, Observation{Lost: EndpointUnreachable, Why: why})
		return nil
	}
	m.events = events
	m.hard = s.clock.NewTimer(s.clock.Until(t.HardDeadline()), "turn", "hard")
	return m
}

// backendTurnFollow is a backend Turn's monitor: what every Turn's
// monitor carries (the Turn as last stored), and the daemon's next event.
type backendTurnFollow struct {
	s   *ThreadCases
	log *slog.Logger
	followState
	events <-chan Observation
	hard   *quartz.Timer
	next   *Observation // what the next round decides on
}

func (m *backendTurnFollow) live() bool { return m.t.State.Monitored() }

func (m *backendTurnFollow) close() { m.hard.Stop() }

// round accepts a dispatching Turn (the daemon started it), then decides
// on what the last wait received.
func (m *backendTurnFollow) round(ctx context.Context) monitorStep {
	if m.t.State == TurnDispatching {
		accepted := TurnProgress{Accepted: true, LastActivity: m.s.clock.Now().UTC()}
		if m.observe(ctx, Observation{Record: &accepted}) == stepStop {
			return stepStop
		}
	}
	o := m.next
	if o == nil {
		return stepWait
	}
	m.next = nil
	return m.observe(ctx, *o)
}

// wait receives the daemon's next observation, or the hard deadline (a round on
// the monitor's clock), or a channel closed before the turn ended (the
// daemon out of reach).
func (m *backendTurnFollow) wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-m.hard.C:
		m.next = &Observation{Clock: true}
	case o, open := <-m.events:
		if !open {
			m.next = &Observation{Lost: EndpointUnreachable,
				Why: "the thread's " + m.s.daemonName(m.t.Endpoint.Kind) + " stopped answering before the turn ended"}
			break
		}
		o = o.received(m.s.clock.Now().UTC())
		m.next = &o
	}
	return true
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

// observe decides what o means for the Turn and stores it. A revision
// conflict (an answer or a close wrote the Turn meanwhile) decides the
// same observation again on the Turn as stored: the daemon sends each
// event once, and an end dropped here would leave the Turn to stall on a
// channel that has closed. The store out of reach: the monitor keeps what
// it holds and, after storeRetry, writes it again.
func (m *backendTurnFollow) observe(ctx context.Context, o Observation) monitorStep {
	if o.Lost != EndpointThere && ctx.Err() != nil {
		return stepStop // akkd stops: the next start follows on
	}
	for {
		if step := m.decide(ctx, o); step != stepAgain {
			return step
		}
	}
}

// decide is one try of observe: stepAgain after a revision conflict, with
// m.t read again, or after the store came back.
func (m *backendTurnFollow) decide(ctx context.Context, o Observation) monitorStep {
	s := m.s
	if cur, err := s.store.Turn(ctx, m.t.ID); err == nil {
		m.t = cur // closed or cancelled meanwhile
	}
	if !m.t.State.Monitored() {
		return stepStop
	}
	m.mark = m.t.Mark
	r := s.monitors.decideTurn(m.followState, turnRound{now: s.clock.Now().UTC(), seen: o})
	if !r.changed {
		return stepWait
	}
	run := transitionRun{s.ledger, s.ac}
	stored, auto, err := run.store(ctx, r.next, r.typ, r.webhook, m.questionExtra(ctx, r.next, r.typ))
	if err != nil {
		if m.reread(ctx, err) || waitForStore(ctx, s.clock, m.log, err) {
			return stepAgain
		}
		if ctx.Err() == nil {
			m.log.Error("monitor: backend turn", "err", err)
		}
		return stepStop
	}
	m.t, m.lastPersist = stored, r.now
	if auto {
		if cur, _, err := run.autoAnswer(ctx, m.t); err == nil {
			m.t = cur
		}
	}
	return stepWait
}

// questionExtra is the public projection of the question a
// turn.interaction_required event announces, nil when none.
func (m *backendTurnFollow) questionExtra(ctx context.Context, next Turn, typ string) map[string]any {
	s := m.s
	if typ != "turn.interaction_required" {
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
