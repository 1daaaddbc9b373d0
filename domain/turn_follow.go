package domain

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// turnFollow follows a Turn to a state the monitor does not follow,
// whatever its transport: each round takes what the transport observed
// (its turnSource), decides each observation as every Turn's are
// (decideTurnRound) and carries the transition out through one runner
// (transitionRun). It never sends input but for a host's auto-approval
// policy.
type turnFollow struct {
	mons *Monitors
	src  TurnSource
	log  *slog.Logger
	followState
}

// TurnSource is what a followed Turn is observed through: a pane's
// observer (the endpoints package's pane source) or a thread's daemon
// (the endpoints package's thread source).
type TurnSource interface {
	// Observe makes the round's observations at now of t, in order
	// (none: nothing to decide this round). ok false: the monitor ends.
	Observe(ctx context.Context, now time.Time, t Turn) (obs []Observation, ok bool)
	// Looks makes the reads a decision asks for.
	Looks(ctx context.Context) PromptLooks
	// Mark is where the record's next read starts, for t as held.
	Mark(t Turn) DurableMark
	// Replays: an observation that was not stored is made again (a pane
	// is looked at, and its record read, again from the stored mark);
	// else it cannot be (a daemon says each thing once): it is decided
	// again on the Turn as stored, read before each decision.
	Replays() bool
	// ReadFrom makes the next read of the record start at mark; LookNow
	// makes the next round look at once.
	ReadFrom(mark DurableMark)
	LookNow()
	// Foretold folds in the round's decision: next.
	Foretold(now time.Time, next Turn)
	// Step reads the questionnaire step the endpoint shows now, for the
	// event that announces it (ok false: none read). No input.
	Step(ctx context.Context) (agent AgentKind, st InteractionStep, ok bool)
	// Wait sleeps until the next round is due. nudged: the monitor
	// reloads the stored Turn and looks at once; ok false: ctx ended.
	Wait(ctx context.Context, nudge <-chan struct{}, now time.Time) (nudged, ok bool)
	Close()
}

func (s *Monitors) newTurnFollow(t Turn, src TurnSource, unseenWait bool) *turnFollow {
	return &turnFollow{mons: s, src: src, log: slog.With("turn_id", t.ID),
		followState: followState{t: t, mark: t.Mark, unseenWait: unseenWait}}
}

// live: the Turn is in a state the monitor follows.
func (m *turnFollow) live() bool { return m.t.State.Monitored() }

func (m *turnFollow) close() { m.src.Close() }

// round decides each observation the source made.
func (m *turnFollow) round(ctx context.Context) monitorStep {
	now := m.mons.clock.Now().UTC()
	obs, ok := m.src.Observe(ctx, now, m.t)
	if !ok {
		return stepStop
	}
	for _, o := range obs {
		if o.Lost == EndpointThere && (o.Record != nil || o.RecordFailed) && ctx.Err() == nil {
			m.mons.turns.setReadErr(m.t.ID, o.RecordFailed)
		}
		if o.Looked && (o.Asks == AskingApproval || o.Asks == AskingQuestion) {
			m.unseenWait = false // the wait the Turn began in is seen
		}
		if step := m.decide(ctx, now, o); step != stepWait {
			return step
		}
	}
	return stepWait
}

// decide decides what o means for the Turn and stores it. A transition
// not stored (a revision conflict: an answer, a close or a cancel wrote
// the Turn meanwhile; or the store out of reach) is observed again from
// the stored Turn when the source replays; otherwise the same
// observation is decided again on the Turn as stored (an end dropped
// here would leave the Turn to stall on a daemon that said it once).
func (m *turnFollow) decide(ctx context.Context, now time.Time, o Observation) monitorStep {
	if o.Lost != EndpointThere && ctx.Err() != nil && !m.src.Replays() {
		return stepStop // akkd stops: the next start follows on
	}
	for {
		if !m.src.Replays() {
			if cur, err := m.mons.store.Turn(ctx, m.t.ID); err == nil {
				m.t = cur // closed or cancelled meanwhile
			}
			if !m.t.State.Monitored() {
				return stepStop
			}
		}
		step, again := m.decideOnce(ctx, now, o)
		if !again {
			return step
		}
	}
}

// decideOnce is one try of decide; again: decide the same observation
// again (the Turn read again, or the store back).
func (m *turnFollow) decideOnce(ctx context.Context, now time.Time, o Observation) (step monitorStep, again bool) {
	s := m.mons
	was := m.announced
	m.mark = m.src.Mark(m.t)
	m.answering = s.answers.answeringNow(m.t.ID)
	r := s.decideTurnRound(m.followState, turnRound{now: now, wasAnnounced: was, seen: o}, m.src.Looks(ctx))
	m.announced = r.announced
	if r.seen.RecordMoved || r.next.State != m.t.State {
		m.unseenWait = false // the record moved on, or the Turn left the wait
	}
	m.src.Foretold(now, r.next)
	if !r.changed {
		return stepWait, false
	}
	run := transitionRun{s.ledger, s.ac}
	stored, auto, err := run.store(ctx, r.next, r.typ, r.webhook, m.extra(ctx, r.next, r.typ))
	switch {
	case err == nil:
	case m.src.Replays():
		return m.notStored(ctx, err, was), false
	case m.reread(ctx, err) || waitForStore(ctx, s.clock, m.log, err):
		return 0, true
	default:
		if ctx.Err() == nil {
			m.log.Error("monitor: store transition", "err", err)
		}
		return stepStop, false
	}
	m.t, m.lastPersist = stored, now
	if !auto {
		return stepWait, false
	}
	return m.autoApproved(ctx), false
}

// extra is the public projection of the step a turn.interaction_required
// event announces, nil when none is read (or for another event). The
// callback carries the projection only; acting on it needs a fresh GET of
// the interaction by the owning conversation.
func (m *turnFollow) extra(ctx context.Context, next Turn, typ string) map[string]any {
	if typ != "turn.interaction_required" {
		return nil
	}
	agent, st, ok := m.src.Step(ctx)
	if !ok || !st.Present {
		return nil
	}
	ic := m.mons.ic
	if key, err := ic.stepKey(ctx, next, st); err == nil {
		if in, _, err := ic.project(ctx, next, agent, st, key); err == nil {
			return map[string]any{"interaction": in}
		}
	}
	return nil
}

// notStored: a replaying source's transition was not stored. A revision
// conflict takes the stored Turn and observes again at once (what this
// round would have announced was not stored: the next look announces it
// again, and reads its fingerprint again: a round that did not look would
// announce it under the old one). The store out of reach: nothing of the
// round holds, the next round reads the record again from the stored
// mark, as a restarted daemon would, and announces again what this one
// would have, so an ending the agent recorded meanwhile is not lost.
func (m *turnFollow) notStored(ctx context.Context, err error, was string) monitorStep {
	if errors.Is(err, ErrRevisionConflict) {
		t, rerr := m.mons.store.Turn(ctx, m.t.ID)
		if errors.Is(rerr, ErrNotFound) || ctx.Err() != nil {
			return stepStop
		}
		if rerr == nil {
			m.t, m.announced = t, was
			m.resume(t.Mark)
			return stepAgain
		}
		err = rerr
	}
	if ctx.Err() != nil {
		return stepStop
	}
	m.log.Error("monitor: store transition", "err", err)
	m.announced = was
	m.src.ReadFrom(m.t.Mark)
	return stepWait
}

// reread takes the Turn as stored into m.t after err, a revision conflict,
// so the same observation is decided again on it; false for any other
// error, or when the Turn cannot be read.
func (m *turnFollow) reread(ctx context.Context, err error) bool {
	if !errors.Is(err, ErrRevisionConflict) {
		return false
	}
	for {
		cur, e2 := m.mons.store.Turn(ctx, m.t.ID)
		if e2 == nil {
			m.t = cur
			return true
		}
		if !waitForStore(ctx, m.mons.clock, m.log, e2) {
			return false
		}
	}
}

// resume reads the record from mark and looks at once.
func (m *turnFollow) resume(mark DurableMark) {
	m.src.ReadFrom(mark)
	m.src.LookNow()
}

// autoApproved answers the prompt just recorded for the host's policy.
func (m *turnFollow) autoApproved(ctx context.Context) monitorStep {
	t, done, err := transitionRun{m.mons.ledger, m.mons.ac}.autoAnswer(ctx, m.t)
	switch {
	case !done:
		m.t = t // the prompt is the host's to answer
		return stepWait
	case errors.Is(err, ErrNotFound) || ctx.Err() != nil:
		return stepStop
	case err != nil:
		// The store out of reach: the next write on the stale revision
		// reloads the Turn.
		m.log.Warn("monitor: read the turn", "err", err)
		m.announced = ""
		m.resume(m.t.Mark)
		return stepWait
	}
	m.t, m.announced = t, ""
	// Look again before judging what is shown.
	m.resume(t.Mark)
	return stepAgain
}

// wait sleeps until the next round is due. Nudged (an action or this
// monitor changed the Turn), it takes the stored Turn (its state and
// mark) and looks at once. false: the monitor ends.
func (m *turnFollow) wait(ctx context.Context) bool {
	nudged, ok := m.src.Wait(ctx, nudges(ctx), m.mons.clock.Now().UTC())
	if !ok || !nudged {
		return ok
	}
	cur, err := m.mons.store.Turn(ctx, m.t.ID)
	if errors.Is(err, ErrNotFound) || ctx.Err() != nil {
		return false
	}
	if err != nil {
		// The store out of reach: look again from what this monitor
		// holds (a write on a stale revision reloads it then).
		m.log.Warn("monitor: read the turn", "err", err)
		m.src.LookNow()
		return true
	}
	if cur.Revision != m.t.Revision {
		m.t = cur
		m.src.ReadFrom(cur.Mark)
		if m.t.State != TurnAwaitingApproval && m.t.State != TurnAwaitingInteraction {
			m.announced = ""
		}
	}
	m.src.LookNow()
	return true
}
