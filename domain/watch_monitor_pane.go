package domain

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"
)

// paneWatchFollower follows a pane's Watch through its screen and, for an
// exact Watch, its agent's record. It never sends input.
func (s *WatchCases) paneWatchFollower(_ context.Context, w Watch) follower {
	return s.newWatchPaneMonitor(w)
}

// live: the Watch is active.
func (m *watchPaneMonitor) live() bool { return m.w.State == WatchActive }

func (m *watchPaneMonitor) close() { m.obs.Close() }

// watchPaneMonitor is the monitor of one pane's Watch: its state, and the
// watches and clock it waits on.
type watchPaneMonitor struct {
	s  *WatchCases
	tr *turns
	id string
	w  Watch // the stored Watch
	// lastScreen is the last look, term the last screen believed.
	lastScreen time.Time
	term       Terminal
	// obs looks at the pane, as a Turn's monitor's does: an exact Watch
	// wakes on a write to the record (armed before each read); the tick is
	// then a safety net.
	obs PaneObserver
	// mark is where the record was last read to: each read goes on from it
	// (as a Turn's monitor does), not from the Watch's anchor, which is
	// stored only when the Watch changes.
	mark DurableMark
	// What the latest read of the record said: nothing that needs an
	// answer can be drawn now (TurnProgress.RecordQuiet); a tool call is
	// open; the agent waits for the person.
	recordQuiet, recordOpen, recordWaiting bool
	// actions: the record's latest actions as last read.
	actions []ProgressAction
}

// watchRound is one round: when it began, whether it looked at the
// screen, what it observed, and the transition it decided.
type watchRound struct {
	now     time.Time
	looked  bool
	seen    Observation
	next    Watch
	typ     string
	webhook bool
}

func (s *WatchCases) newWatchPaneMonitor(w Watch) *watchPaneMonitor {
	tr := s.turns
	m := &watchPaneMonitor{s: s, tr: tr, id: w.ID, w: w, obs: tr.paneObserver(w.TerminalID, "watch", s.clock)}
	m.mark = w.Mark
	return m
}

// round looks at the screen, reads the record when the look decided
// nothing, decides, and stores the transition.
func (m *watchPaneMonitor) round(ctx context.Context) monitorStep {
	if m.w.Mode == WatchModeExact {
		m.obs.ArmRecord(m.mark)
	}
	r := watchRound{now: m.s.clock.Now().UTC(), seen: Observation{Clock: true}}
	if !m.lookScreen(ctx, &r) {
		return stepStop
	}
	look := r.seen
	look.Clock = false // a record read comes before the hard timeout
	r.next, r.typ, r.webhook = m.s.decideWatch(m.w, look, r.now)
	if r.typ == "" {
		m.readRecord(ctx, &r)
		r.next, r.typ, r.webhook = m.s.decideWatch(m.w, r.seen, r.now)
	}
	// An exact Watch looks closely only while the record shows a tool call
	// open, as a Turn's monitor does (an activity Watch reads no record).
	m.obs.Foretold(r.now, Foretelling{Open: m.recordOpen, Changed: r.seen.RecordMoved, Waiting: m.recordWaiting,
		Asks:  r.next.ApprovalShown || asksOnScreen(m.term),
		Quiet: m.w.Mode == WatchModeExact && m.recordQuiet && !r.next.ApprovalShown && m.term.ID != "" && !asksOnScreen(m.term)})
	if r.seen.Record != nil {
		r.next.Mark = m.mark
	}
	return m.persist(ctx, r)
}

// lookScreen is the round's look at the screen, when one is due, into the
// round's observation. false: the monitor ends.
func (m *watchPaneMonitor) lookScreen(ctx context.Context, r *watchRound) bool {
	obs, looked, believed, err := m.obs.Look(ctx, m.w.TerminalID, m.term, m.lastScreen, r.now)
	if r.looked = looked; !looked {
		return true
	}
	m.lastScreen = r.now
	switch {
	case errors.Is(err, ErrTerminalGone):
		r.seen.Lost, r.seen.Why = EndpointClosed, "the pane closed or its agent restarted"
	case err == nil && !believed:
		// Believed when the next look shows the same.
	case err == nil:
		m.term = obs
		r.seen = screenObserved(obs)
		r.seen.Clock = true
	case ctx.Err() != nil:
		return false
	default:
		slog.Warn("watch monitor: observe", "watch_id", m.id, "err", err)
	}
	return true
}

// readRecord reads an exact Watch's record when a read is due, into the
// round's observation; a failed read changes nothing.
func (m *watchPaneMonitor) readRecord(ctx context.Context, r *watchRound) {
	if m.term.ID == "" || m.w.Mode != WatchModeExact || !m.obs.RecordDue(r.now, r.looked) {
		return
	}
	p, err := m.tr.term.Progress(ctx, m.term, m.mark, "")
	if err != nil {
		return
	}
	m.mark = p.Mark
	m.recordQuiet, m.recordOpen, m.recordWaiting = p.RecordQuiet(), pendingAction(p.Actions), p.Waiting
	r.seen.RecordMoved = !slices.Equal(p.Actions, m.actions)
	m.actions = p.Actions
	r.seen.Record = &p
}

// persist stores the round's transition, if it has one.
func (m *watchPaneMonitor) persist(ctx context.Context, r watchRound) monitorStep {
	if r.typ == "" {
		return stepWait
	}
	stored, err := m.s.watchTransition(ctx, r.next, r.typ, r.webhook)
	switch {
	case errors.Is(err, ErrRevisionConflict):
		w, err := m.s.store.Watch(ctx, m.id)
		if errors.Is(err, ErrNotFound) || ctx.Err() != nil {
			return stepStop
		}
		if err != nil {
			slog.Error("watch monitor: store", "watch_id", m.id, "err", err)
			m.mark = m.w.Mark
			return stepWait
		}
		m.w, m.mark = w, w.Mark
		return stepAgain
	case err != nil:
		if ctx.Err() != nil {
			return stepStop
		}
		// Not stored (the store out of reach): the next round reads the
		// record again from the stored mark, so nothing it held is lost.
		slog.Error("watch monitor: store", "watch_id", m.id, "err", err)
		m.mark = m.w.Mark
	default:
		m.w = stored
	}
	return stepWait
}

// wait sleeps until the next round is due, the record is written, the
// screen changes or the Watch is nudged. false: the monitor ends.
func (m *watchPaneMonitor) wait(ctx context.Context) bool {
	nudged, ok := m.obs.Wait(ctx, nudges(ctx), m.term.ID != "", m.lastScreen, m.s.clock.Now().UTC())
	if !ok || !nudged {
		return ok
	}
	cur, err := m.s.store.Watch(ctx, m.id)
	if errors.Is(err, ErrNotFound) || ctx.Err() != nil {
		return false
	}
	if err != nil {
		// The store out of reach: look again from what this monitor holds.
		slog.Warn("watch monitor: read the watch", "watch_id", m.id, "err", err)
		m.lastScreen = time.Time{}
		return true
	}
	if cur.Revision != m.w.Revision {
		m.mark = cur.Mark
	}
	m.w = cur
	m.lastScreen = time.Time{}
	return true
}
