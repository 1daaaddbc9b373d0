package domain

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// watchFollow follows a Watch while it is active, whatever its transport:
// each round takes what the transport observed (its watchSource) and
// decides it as every Watch's are (decideWatch): first what the agent
// shows, then, when that decides nothing, with the record read. It never
// sends input.
type watchFollow struct {
	s   *WatchCases
	src WatchSource
	log *slog.Logger
	w   Watch // the stored Watch
}

// WatchSource is what a followed Watch is observed through: a pane's
// observer (the endpoints package's pane source) or a thread's daemon
// (the endpoints package's thread source).
type WatchSource interface {
	// Observe makes the round's observation at now (has false: nothing
	// to decide this round). ok false: the monitor ends.
	Observe(ctx context.Context, now time.Time) (o Observation, has, ok bool)
	// Read is the record read when the observation decided nothing (nil:
	// no read).
	Read(ctx context.Context, now time.Time) (rec *TurnProgress, moved bool)
	// Mark is where the record's next read starts ("" keeps the Watch's).
	Mark() DurableMark
	// Replays: as TurnSource's.
	Replays() bool
	ReadFrom(mark DurableMark)
	LookNow()
	// Foretold folds in the round's decision: next, an exact Watch or not.
	Foretold(now time.Time, next Watch)
	Wait(ctx context.Context, nudge <-chan struct{}, now time.Time) (nudged, ok bool)
	Close()
}

// live: the Watch is active.
func (m *watchFollow) live() bool { return m.w.State == WatchActive }

func (m *watchFollow) close() { m.src.Close() }

// round decides what the source observed.
func (m *watchFollow) round(ctx context.Context) monitorStep {
	now := m.s.clock.Now().UTC()
	o, has, ok := m.src.Observe(ctx, now)
	switch {
	case !ok:
		return stepStop
	case !has:
		return stepWait
	}
	return m.decide(ctx, now, o)
}

// decide decides o and stores the transition. A transition not stored is
// observed again when the source replays, else decided again on the Watch
// as stored (as turnFollow.decide).
func (m *watchFollow) decide(ctx context.Context, now time.Time, o Observation) monitorStep {
	if o.Lost != EndpointThere && ctx.Err() != nil && !m.src.Replays() {
		return stepStop // akkd stops: the next start follows on
	}
	read := false
	for {
		if !m.src.Replays() {
			cur, err := m.s.store.Watch(ctx, m.w.ID)
			if waitForStore(ctx, m.s.clock, m.log, err) {
				continue // the daemon says each event once: keep it
			}
			if err != nil || cur.State != WatchActive {
				return stepStop // unwatched meanwhile
			}
			m.w = cur
		}
		look := o
		look.Clock = false // a record read comes before the hard timeout
		next, typ, webhook := m.s.decideWatch(m.w, look, now)
		if typ == "" {
			if !read {
				o.Record, o.RecordMoved = m.src.Read(ctx, now)
				read = true
			}
			next, typ, webhook = m.s.decideWatch(m.w, o, now)
		}
		m.src.Foretold(now, next)
		if o.Record != nil {
			if mark := m.src.Mark(); mark != "" {
				next.Mark = mark
			}
		}
		if typ == "" {
			return stepWait
		}
		stored, err := m.s.watchTransition(ctx, next, typ, webhook)
		switch {
		case err == nil:
			m.w = stored
			return stepWait
		case m.src.Replays():
			return m.notStored(ctx, err)
		case errors.Is(err, ErrRevisionConflict) || waitForStore(ctx, m.s.clock, m.log, err):
			continue
		}
		if ctx.Err() == nil {
			m.log.Error("watch monitor: store", "err", err)
		}
		return stepStop
	}
}

// notStored: a replaying source's transition was not stored. A revision
// conflict takes the stored Watch and observes again at once; the store
// out of reach: the next round reads the record again from the stored
// mark, so nothing it held is lost.
func (m *watchFollow) notStored(ctx context.Context, err error) monitorStep {
	if errors.Is(err, ErrRevisionConflict) {
		w, rerr := m.s.store.Watch(ctx, m.w.ID)
		if errors.Is(rerr, ErrNotFound) || ctx.Err() != nil {
			return stepStop
		}
		if rerr == nil {
			m.w = w
			m.src.ReadFrom(w.Mark)
			return stepAgain
		}
		err = rerr
	}
	if ctx.Err() != nil {
		return stepStop
	}
	m.log.Error("watch monitor: store", "err", err)
	m.src.ReadFrom(m.w.Mark)
	return stepWait
}

// wait sleeps until the next round is due. Nudged, it takes the stored
// Watch and looks at once. false: the monitor ends.
func (m *watchFollow) wait(ctx context.Context) bool {
	nudged, ok := m.src.Wait(ctx, nudges(ctx), m.s.clock.Now().UTC())
	if !ok || !nudged {
		return ok
	}
	cur, err := m.s.store.Watch(ctx, m.w.ID)
	if errors.Is(err, ErrNotFound) || ctx.Err() != nil {
		return false
	}
	if err != nil {
		// The store out of reach: look again from what this monitor holds.
		m.log.Warn("watch monitor: read the watch", "err", err)
		m.src.LookNow()
		return true
	}
	if cur.Revision != m.w.Revision {
		m.src.ReadFrom(cur.Mark)
	}
	m.w = cur
	m.src.LookNow()
	return true
}
