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

// paneState is what a pane's Turn monitor carries from one round to the
// next, and what its decision reads.
type paneState struct {
	t           Turn        // the stored Turn
	mark        DurableMark // where the next record read starts
	term        Terminal    // the last screen believed
	announced   string      // fingerprint of the prompt or step last announced
	lastScreen  time.Time   // the last look at the screen
	lastPersist time.Time   // the last transition stored
	// What the last read of the record said: nothing that needs an answer
	// can be drawn now (TurnProgress.RecordQuiet); a tool call is open;
	// the agent waits for the person (TurnProgress.Waiting).
	recordQuiet, recordOpen, recordWaiting bool
	// actions: the record's latest actions as last read; actionsChanged:
	// the round's read changed them.
	actions        []ProgressAction
	actionsChanged bool
	// answering: AKK is answering the Turn's prompt or step now (its keys
	// are going in, or their outcome is not yet recorded), so a prompt
	// that looks new is that answer's own intermediate screen (a menu
	// whose selection moved), never one to announce.
	answering bool
	// unseenWait: the Turn already waited on a prompt or step when this
	// monitor began (a daemon's restart), and no look of this monitor has
	// shown it yet. A screen without it then proves nothing: the agent
	// may not have drawn it again yet (Claude Code draws its own dialog
	// once the hook's request ended with the old daemon). Leaving the wait
	// takes the prompt seen, then gone, or the record moving on.
	unseenWait bool
}

// paneTurnMonitor is the monitor of one pane's Turn: its state, and the
// watches and clock it waits on.
type paneTurnMonitor struct {
	s      *Monitors
	tr     *turns
	turnID string
	log    *slog.Logger
	paneState
	// obs looks at the pane and says when to read the record and how long
	// to sleep: it wakes on a write to the record (armed before each read
	// so no write between a read and the wait is missed), the screen's
	// next change, the slow tick and nudges.
	obs PaneObserver
}

func (m *paneTurnMonitor) close() { m.obs.Close() }

// paneRound is one round: when it began, what it looked at, and the
// transition it decided.
type paneRound struct {
	now          time.Time
	fresh        bool   // the screen was looked at in this round
	wasAnnounced string // announced when the round began
	next         Turn
	typ          string
	webhook      bool
	announced    string // announced after the round
	changed      bool   // next is to be stored
}

func (s *Monitors) newPaneTurnMonitor(t Turn) *paneTurnMonitor {
	tr := s.turns
	m := &paneTurnMonitor{s: s, tr: tr, turnID: t.ID, log: slog.With("turn_id", t.ID),
		paneState: paneState{t: t, mark: t.Mark, unseenWait: t.State == TurnAwaitingApproval || t.State == TurnAwaitingInteraction},
		obs:       tr.paneObserver(t.TerminalID, "turn", s.clock)}
	return m
}

// round observes the pane and the record, decides, and stores the
// transition.
func (m *paneTurnMonitor) round(ctx context.Context) monitorStep {
	m.obs.ArmRecord(m.mark)
	r := paneRound{now: m.s.clock.Now().UTC(), next: m.t, wasAnnounced: m.announced}
	if !m.lookScreen(ctx, &r) || !m.readRecord(ctx, &r) {
		return stepStop
	}
	m.answering = m.s.answers.answeringNow(m.turnID)
	r = m.s.decidePane(m.paneState, r, paneScreenLooks{ctx: ctx, m: m})
	m.announced = r.announced
	if m.actionsChanged || r.next.State != m.t.State {
		m.unseenWait = false // the record moved on, or the Turn left the wait
	}
	// The record first: while it shows the Turn working with no tool call
	// open, on an agent that records one before it asks, nothing the Turn
	// waits on can be drawn; the screen is looked at closely again as soon
	// as the record shows one.
	asks := asksOnScreen(m.term)
	m.obs.Foretold(r.now, Foretelling{Open: m.recordOpen, Changed: m.actionsChanged, Waiting: m.recordWaiting, Asks: asks,
		Quiet: m.recordQuiet && r.next.State == TurnWorking && !r.next.AcceptedAt.IsZero() && m.term.ID != "" && !asks})
	m.actionsChanged = false
	return m.persist(ctx, r)
}

// lookScreen is the round's look at the screen: terminal liveness and
// prompts. When it changed (as tmux reports it), or on a clock. false: the
// monitor ends.
func (m *paneTurnMonitor) lookScreen(ctx context.Context, r *paneRound) bool {
	tr := m.tr
	obs, due, believed, err := m.obs.Look(ctx, m.t.TerminalID, m.term, m.lastScreen, r.now)
	if !due {
		return true
	}
	m.lastScreen = r.now
	r.fresh = true
	switch {
	case errors.Is(err, ErrTerminalGone):
		if m.term.ID == "" {
			r.next.State, r.next.FailureReason = TurnFailed, "the terminal was gone when monitoring started"
			r.typ, r.webhook = "turn.failed", true
		}
	case err != nil:
		if ctx.Err() != nil {
			return false
		}
		m.log.Warn("monitor: observe", "err", err)
	default:
		if believed {
			m.term = obs
			if obs.ScreenState == ScreenAwaitingApproval || obs.ScreenState == ScreenAwaitingInteraction {
				m.unseenWait = false
			}
		} else {
			r.fresh = false
		}
	}
	if errors.Is(err, ErrTerminalGone) && m.term.ID != "" {
		// A last look at the record before giving up on the pane.
		if p, perr := tr.term.Progress(ctx, m.term, m.mark, m.t.Request); perr == nil && p.Ended() {
			r.next, r.typ, r.webhook = m.s.ledger.applyProgress(r.next, p)
		} else {
			r.next.State, r.next.FailureReason = TurnFailed, "the pane closed or its agent exited before the turn ended"
			r.typ, r.webhook = "turn.failed", true
		}
	}
	return true
}

// readRecord reads the agent's record when a read is due and folds it into
// the round. false: the monitor ends.
func (m *paneTurnMonitor) readRecord(ctx context.Context, r *paneRound) bool {
	tr := m.tr
	if r.typ != "" || m.term.ID == "" || !m.obs.RecordDue(r.now, r.fresh) {
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
	m.actionsChanged = m.actionsChanged || !slices.Equal(p.Actions, m.actions)
	m.actions = p.Actions
	r.next, r.typ, r.webhook = m.s.ledger.applyProgress(r.next, p)
	return true
}

// paneLooks is what a round's decision may still read of the screen, each
// only when the decision needs it: the fingerprint of the prompt or step a
// Turn in state waits on ("" when none), whether a fingerprint that differs
// from the one announced was read twice, and the fingerprint of an async
// question's step (ok false when none is read).
type paneLooks interface {
	promptFingerprint(state TurnState) string
	confirmPrompt(fp string) bool
	asyncQuestion() (fp string, ok bool)
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

// decidePane is a round's transition from what the monitor knew (st) and
// what the round observed (r): the Turn to store, its event, and what is
// announced. It touches no store; the screen it reads only through looks.
func (s *Monitors) decidePane(st paneState, r paneRound, looks paneLooks) paneRound {
	t, term := st.t, st.term
	next, typ, webhook := r.next, r.typ, r.webhook
	announced := st.announced
	waitUnseen := st.unseenWait && !st.actionsChanged && term.ScreenState == ScreenWorking
	if typ == "" && !waitUnseen {
		next, typ, webhook = applyScreen(next, term)
	}
	if r.fresh && (typ == "" || typ == "turn.approval_required" || typ == "turn.interaction_required") {
		// A new prompt or step while the Turn already waits on one (a
		// person answered the last in the pane) is announced again: the
		// host's offer is for the old one.
		if fp := looks.promptFingerprint(next.State); fp != "" {
			switch {
			case typ == "" && st.answering:
				// AKK's own answer going in (a selection moving): neither
				// announced nor remembered.
			case typ == "" && announced != "" && fp != announced && !term.ExactPrompt && !looks.confirmPrompt(fp):
				// Announced when the next look reads it again.
			case typ == "" && announced != "" && fp != announced:
				typ, webhook = announceType(next.State), true
				announced = fp
			default:
				announced = fp
			}
		}
	}
	if typ == "" {
		if n, ty, wh := paneDeadline(s.turns.cfg, t, next, r.now); ty != "" {
			next, typ, webhook = n, ty, wh
		}
	}

	if r.fresh && typ == "" && next.State == TurnWorking && term.AsyncQuestion {
		// An async question is asked while the Turn works on: announced
		// once per step, the Turn's state unchanged.
		if fp, ok := looks.asyncQuestion(); ok {
			if fp != announced {
				typ, webhook = "turn.interaction_required", true
			}
			announced = fp
		}
	}

	moved := next.LatestText != t.LatestText || !slices.Equal(next.Actions, t.Actions)
	// Changes the record showed are stored in this round: the mark moves
	// past them.
	changes := len(next.NewChanges) > 0
	changed := typ != "" || moved || changes || (next.LastActivityAt.Sub(t.LastActivityAt) >= 5*time.Second)
	if changed {
		next.Mark = st.mark
		if typ == "" && moved {
			if !changes && r.now.Sub(st.lastPersist) < time.Second && next.LastActivityAt.Sub(t.LastActivityAt) < 5*time.Second {
				changed = false // progress text is throttled to one write a second
			} else {
				typ = "turn.progress"
			}
		}
	}
	r.next, r.typ, r.webhook, r.announced, r.changed = next, typ, webhook, announced, changed
	return r
}

// paneDeadline is the transition of a Turn t (next as the round left it)
// that nothing else moved, when one of its deadlines passed at now; typ is
// "" when none did.
func paneDeadline(cfg TurnConfig, t, next Turn, now time.Time) (Turn, string, bool) {
	switch {
	case now.After(t.HardDeadline()):
		next.State, next.FailureReason = TurnStalled, "the hard deadline passed; observation ended"
		return next, "turn.stalled", true
	case t.State == TurnDispatching && t.SubmitStage != SubmitEntered:
		// Reserved, but the daemon stopped before the submit was
		// recorded: input may or may not have happened.
		if now.Sub(t.UpdatedAt) > cfg.AcceptWindow {
			next.State, next.FailureReason = TurnDeliveryUncertain, "the daemon stopped while sending; delivery is not proven"
			return next, "turn.delivery_uncertain", true
		}
	case t.State == TurnDispatching && now.Sub(t.UpdatedAt) > cfg.AcceptWindow:
		next.State, next.FailureReason = TurnDeliveryUncertain, "Enter was pressed but the agent's record never showed the request"
		return next, "turn.delivery_uncertain", true
	case t.State != TurnDispatching && now.After(t.InactivityDeadline()):
		next.State, next.FailureReason = TurnStalled, "no activity within the inactivity limit"
		return next, "turn.stalled", true
	}
	return next, "", false
}

// persist stores the round's transition, when it changed anything.
func (m *paneTurnMonitor) persist(ctx context.Context, r paneRound) monitorStep {
	s := m.s
	extra := m.interactionExtra(ctx, r.next, r.typ)
	// A command the host's policy names exactly is approved once on its
	// behalf: the prompt is recorded without a callback, then answered
	// through the fenced path; the host hears of the auto-approval.
	auto := false
	if r.typ == "turn.approval_required" {
		_, rule := s.ac.autoRule(ctx, r.next)
		auto = rule >= 0
	}
	if auto {
		r.webhook = false
	}
	if !r.changed {
		return stepWait
	}
	stored, err := s.ledger.transitionWith(ctx, r.next, r.typ, r.webhook, extra)
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
		// that changed the Turn would otherwise never be announced).
		m.mark, m.announced = t.Mark, r.wasAnnounced
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
func (m *paneTurnMonitor) notStored(r paneRound, err error) monitorStep {
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
	s := m.s
	if s.ac.autoApprove(ctx, m.t) {
		t, err := s.store.Turn(ctx, m.turnID)
		if errors.Is(err, ErrNotFound) || ctx.Err() != nil {
			return stepStop
		}
		if err != nil {
			// The store out of reach: the next write on the stale
			// revision reloads the Turn.
			m.log.Warn("monitor: read the turn", "err", err)
			m.mark, m.announced, m.lastScreen = m.t.Mark, "", time.Time{}
			return stepWait
		}
		m.t = t
		// Look at the screen again before judging it.
		m.mark, m.announced, m.lastScreen = t.Mark, "", time.Time{}
		return stepAgain
	}
	// Nothing was sent: the prompt is the host's to answer.
	if stored, err := s.ledger.transitionWith(ctx, m.t, "turn.approval_required", true, nil); err == nil {
		m.t = stored
	}
	return stepWait
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
