package domain

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"
)

// paneTurnFollower follows a pane's Turn through its screen and its
// agent's record. It never sends input.
func (s *Monitors) paneTurnFollower(_ context.Context, t Turn) follower {
	return s.newPaneTurnMonitor(t)
}

// live: the Turn is in a state the monitor follows.
func (m *paneTurnMonitor) live() bool { return m.t.State.Monitored() }

// paneTurnMonitor is the monitor of one pane's Turn: its state, and the
// watches and clock it waits on.
type paneTurnMonitor struct {
	s      *Monitors
	tr     *turns
	turnID string
	log    *slog.Logger
	followState
	term       Terminal  // the last screen believed
	lastScreen time.Time // the last look at the screen
	// What the last read of the record said: nothing that needs an answer
	// can be drawn now (TurnProgress.RecordQuiet); a tool call is open;
	// the agent waits for the person (TurnProgress.Waiting).
	recordQuiet, recordOpen, recordWaiting bool
	// actions: the record's latest actions as last read.
	actions []ProgressAction
	// obs looks at the pane and says when to read the record and how long
	// to sleep: it wakes on a write to the record (armed before each read
	// so no write between a read and the wait is missed), the screen's
	// next change, the slow tick and nudges.
	obs PaneObserver
}

func (m *paneTurnMonitor) close() { m.obs.Close() }

func (s *Monitors) newPaneTurnMonitor(t Turn) *paneTurnMonitor {
	tr := s.turns
	m := &paneTurnMonitor{s: s, tr: tr, turnID: t.ID, log: slog.With("turn_id", t.ID),
		followState: followState{t: t, mark: t.Mark, unseenWait: t.State == TurnAwaitingApproval || t.State == TurnAwaitingInteraction},
		obs:         tr.paneObserver(t.TerminalID, "turn", s.clock)}
	return m
}

// round observes the pane and the record, decides, and stores the
// transition.
func (m *paneTurnMonitor) round(ctx context.Context) monitorStep {
	m.obs.ArmRecord(m.mark)
	r := turnRound{now: m.s.clock.Now().UTC(), wasAnnounced: m.announced, seen: Observation{Clock: true}}
	if !m.lookScreen(ctx, &r) || !m.readRecord(ctx, &r) {
		return stepStop
	}
	r.seen.Asks, r.seen.ExactPrompt, r.seen.AsyncQuestion = screenAsks(m.term), m.term.ExactPrompt, m.term.AsyncQuestion
	m.answering = m.s.answers.answeringNow(m.turnID)
	r = m.s.decideTurnRound(m.followState, r, paneScreenLooks{ctx: ctx, m: m})
	m.announced = r.announced
	if r.seen.RecordMoved || r.next.State != m.t.State {
		m.unseenWait = false // the record moved on, or the Turn left the wait
	}
	// The record first: while it shows the Turn working with no tool call
	// open, on an agent that records one before it asks, nothing the Turn
	// waits on can be drawn; the screen is looked at closely again as soon
	// as the record shows one.
	asks := asksOnScreen(m.term)
	m.obs.Foretold(r.now, Foretelling{Open: m.recordOpen, Changed: r.seen.RecordMoved, Waiting: m.recordWaiting, Asks: asks,
		Quiet: m.recordQuiet && r.next.State == TurnWorking && !r.next.AcceptedAt.IsZero() && m.term.ID != "" && !asks})
	return m.persist(ctx, r)
}

// lookScreen is the round's look at the screen: terminal liveness and
// prompts. When it changed (as tmux reports it), or on a clock. false: the
// monitor ends.
func (m *paneTurnMonitor) lookScreen(ctx context.Context, r *turnRound) bool {
	obs, due, believed, err := m.obs.Look(ctx, m.t.TerminalID, m.term, m.lastScreen, r.now)
	if !due {
		return true
	}
	m.lastScreen = r.now
	r.seen.Looked = true
	switch {
	case errors.Is(err, ErrTerminalGone):
		m.lost(ctx, r)
	case err != nil:
		if ctx.Err() != nil {
			return false
		}
		m.log.Warn("monitor: observe", "err", err)
	case believed:
		m.term = obs
		if obs.ScreenState == ScreenAwaitingApproval || obs.ScreenState == ScreenAwaitingInteraction {
			m.unseenWait = false
		}
	default:
		r.seen.Looked = false
	}
	return true
}

// lost observes the pane gone: with a last look at the record before
// giving up on it, when it was seen.
func (m *paneTurnMonitor) lost(ctx context.Context, r *turnRound) {
	r.seen.Lost = EndpointClosed
	if m.term.ID == "" {
		r.seen.Why = "the terminal was gone when monitoring started"
		return
	}
	r.seen.Why = "the pane closed or its agent exited before the turn ended"
	if p, err := m.tr.term.Progress(ctx, m.term, m.mark, m.t.Request); err == nil {
		r.seen.Record = &p
	}
}

// readRecord reads the agent's record when a read is due, into the
// round's observation. false: the monitor ends.
func (m *paneTurnMonitor) readRecord(ctx context.Context, r *turnRound) bool {
	tr := m.tr
	if r.seen.Lost != EndpointThere || m.term.ID == "" || !m.obs.RecordDue(r.now, r.seen.Looked) {
		return true
	}
	p, err := tr.term.Progress(ctx, m.term, m.mark, m.t.Request)
	if ctx.Err() == nil {
		tr.setReadErr(m.t.ID, err != nil)
	}
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		m.log.Warn("monitor: progress", "err", err)
		return true
	}
	m.mark, m.recordQuiet, m.recordOpen, m.recordWaiting = p.Mark, p.RecordQuiet(), pendingAction(p.Actions), p.Waiting
	r.seen.RecordMoved = !slices.Equal(p.Actions, m.actions)
	m.actions = p.Actions
	r.seen.Record = &p
	return true
}

// paneScreenLooks reads them from the monitor's terminal.
type paneScreenLooks struct {
	ctx context.Context
	m   *paneTurnMonitor
}

func (l paneScreenLooks) promptFingerprint(state TurnState) string {
	return l.m.s.promptFingerprint(l.ctx, state, l.m.term)
}

func (l paneScreenLooks) confirmPrompt(fp string) bool { return l.m.obs.ConfirmPrompt(fp) }

func (l paneScreenLooks) asyncQuestion() (string, bool) {
	s := l.m.s
	if s.ic.interactions == nil {
		return "", false
	}
	if st, err := s.ic.interactions.Step(l.ctx, l.m.term); err == nil && st.Present && st.Kind == KindAsyncQuestion {
		return st.Fingerprint, true
	}
	return "", false
}

// persist stores the round's transition, when it changed anything.
func (m *paneTurnMonitor) persist(ctx context.Context, r turnRound) monitorStep {
	s := m.s
	if !r.changed {
		return stepWait
	}
	stored, auto, err := transitionRun{s.ledger, s.ac}.store(ctx, r.next, r.typ, r.webhook, m.interactionExtra(ctx, r.next, r.typ))
	if errors.Is(err, ErrRevisionConflict) {
		// An action (cancel, close, respond) changed the Turn: reload.
		t, err := s.store.Turn(ctx, m.turnID)
		if errors.Is(err, ErrNotFound) || ctx.Err() != nil {
			return stepStop
		}
		if err != nil {
			return m.notStored(r, err)
		}
		m.t = t
		// What this round would have announced was not stored: the
		// next look announces it again (a step opened by the respond
		// that changed the Turn would otherwise never be announced). A
		// look, not the last screen: a round that did not look reads no
		// fingerprint, so it would announce the prompt under the old one
		// and the next look again (an answer recorded as the agent asked
		// its next prompt announced that prompt twice).
		m.mark, m.announced, m.lastScreen = t.Mark, r.wasAnnounced, time.Time{}
		return stepAgain
	}
	if err != nil {
		if ctx.Err() != nil {
			return stepStop
		}
		return m.notStored(r, err)
	}
	m.t = stored
	m.lastPersist = r.now
	if !auto {
		return stepWait
	}
	return m.autoApproved(ctx)
}

// notStored: the round's transition could not be stored (the store out
// of reach). Nothing of the round holds: the next round reads the record
// again from the stored mark, as a restarted daemon would, and announces
// again what this one would have, so an ending the agent recorded
// meanwhile is not lost.
func (m *paneTurnMonitor) notStored(r turnRound, err error) monitorStep {
	m.log.Error("monitor: store transition", "err", err)
	m.mark, m.announced = m.t.Mark, r.wasAnnounced
	return stepWait
}

// interactionExtra is the public projection of the step a
// turn.interaction_required event announces, nil when none is read.
func (m *paneTurnMonitor) interactionExtra(ctx context.Context, next Turn, typ string) map[string]any {
	s, term := m.s, m.term
	if typ != "turn.interaction_required" || s.ic.interactions == nil || term.ID == "" {
		return nil
	}
	// The callback carries the public projection only; acting on it
	// needs a fresh GET of the interaction by the owning conversation.
	if st, err := s.ic.interactions.Step(ctx, term); err == nil && st.Present {
		if key, err := s.ic.stepKey(ctx, next, st); err == nil {
			if in, _, err := s.ic.project(ctx, next, term.Agent.Kind, st, key); err == nil {
				return map[string]any{"interaction": in}
			}
		}
	}
	return nil
}

// autoApproved answers the prompt just recorded for the host's policy.
func (m *paneTurnMonitor) autoApproved(ctx context.Context) monitorStep {
	t, done, err := transitionRun{m.s.ledger, m.s.ac}.autoAnswer(ctx, m.t)
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
		m.mark, m.announced, m.lastScreen = m.t.Mark, "", time.Time{}
		return stepWait
	}
	m.t = t
	// Look at the screen again before judging it.
	m.mark, m.announced, m.lastScreen = t.Mark, "", time.Time{}
	return stepAgain
}

// wait sleeps until the next round is due, the record is written, the
// screen changes or the Turn is nudged. false: the monitor ends.
func (m *paneTurnMonitor) wait(ctx context.Context) bool {
	nudged, ok := m.obs.Wait(ctx, nudges(ctx), m.term.ID != "", m.lastScreen, m.s.clock.Now().UTC())
	if !ok || !nudged {
		return ok
	}
	// An action or this monitor changed the Turn: take the stored record
	// (its state and mark) and look at the screen at once.
	cur, err := m.s.store.Turn(ctx, m.turnID)
	if errors.Is(err, ErrNotFound) || ctx.Err() != nil {
		return false
	}
	if err != nil {
		// The store out of reach: look again from what this monitor
		// holds (a write on a stale revision reloads it then).
		m.log.Warn("monitor: read the turn", "err", err)
		m.lastScreen = time.Time{}
		return true
	}
	if cur.Revision != m.t.Revision {
		m.t, m.mark = cur, cur.Mark
		if m.t.State != TurnAwaitingApproval && m.t.State != TurnAwaitingInteraction {
			m.announced = ""
		}
	}
	m.lastScreen = time.Time{}
	return true
}

// promptFingerprint is the fingerprint of the permission prompt or
// questionnaire step a Turn in state waits on, "" when none is read.
func (s *Monitors) promptFingerprint(ctx context.Context, state TurnState, term Terminal) string {
	switch {
	case term.ID == "":
	case state == TurnAwaitingApproval && s.ac.approvals != nil:
		if pr, err := s.ac.approvals.Prompt(ctx, term); err == nil && pr.Present {
			return pr.Fingerprint
		}
	case state == TurnAwaitingInteraction && s.ic.interactions != nil:
		if st, err := s.ic.interactions.Step(ctx, term); err == nil && st.Present {
			return st.Fingerprint
		}
	}
	return ""
}
