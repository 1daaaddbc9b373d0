package domain

import (
	"context"
	"errors"
	"log/slog"

	"github.com/coder/quartz"
)

// startBackendWatch watches the turn a backend thread runs now (one a
// person or another client of its daemon started), exactly: the daemon
// names the turn, and its own events end the Watch. No input.
func (s *ThreadCases) startBackendWatch(ctx context.Context, p Principal, in NewWatchInput) (Watch, error) {
	tt, th, err := s.backendEndpointThread(ctx, in.TerminalID)
	if err != nil {
		return Watch{}, err
	}
	if err := s.watches.mayWatch(ctx, p, in.TerminalID, "thread"); err != nil {
		return Watch{}, err
	}
	turnID, err := tt.calls.RunningTurn(ctx, th)
	if err != nil {
		return Watch{}, &Error{Code: CodeUnavailable, Message: "could not read the thread from its daemon", Err: err}
	}
	if turnID == "" {
		return Watch{}, E(CodeNothingToWatch, "the thread runs no turn; a Watch follows a task that is working")
	}
	now := s.clock.Now().UTC()
	w := Watch{ID: s.ids.New("watch"), HostID: p.HostID, Conversation: p.Conversation, TerminalID: in.TerminalID,
		Endpoint: EndpointRef{Kind: tt.Endpoint, ID: th.ThreadID}, Mode: WatchModeExact, State: WatchActive, NativeTurnID: turnID, SeenActivity: true,
		HardTimeout: s.turns.cfg.DefaultHard, CreatedAt: now, UpdatedAt: now, Revision: 1}
	return s.watches.beginWatch(ctx, w, in)
}

// backendWatchFollower follows a backend Watch's turn through its daemon
// to its end, one event of the daemon per round. It never sends input. A
// daemon that cannot be reached or goes away invalidates the Watch (the
// task may run on; nothing proves it).
func (s *ThreadCases) backendWatchFollower(ctx context.Context, w Watch) follower {
	f := &backendWatchFollow{s: s, log: slog.With("watch_id", w.ID), w: w}
	events, why := s.followBackend(ctx, w.Endpoint, w.NativeTurnID)
	if why != "" {
		f.invalidate(ctx, why)
		return nil
	}
	f.events = events
	f.hard = s.clock.NewTimer(s.clock.Until(w.CreatedAt.Add(w.HardTimeout)), "watch", "hard")
	return f
}

// backendWatchFollow is a backend Watch's monitor: the Watch as last
// stored, and the daemon's next observation.
type backendWatchFollow struct {
	s      *ThreadCases
	log    *slog.Logger
	w      Watch
	events <-chan Observation
	hard   *quartz.Timer
	next   *Observation // what the next round decides on
}

func (f *backendWatchFollow) live() bool { return f.w.State == WatchActive }

func (f *backendWatchFollow) close() { f.hard.Stop() }

// round decides on what the last wait received.
func (f *backendWatchFollow) round(ctx context.Context) monitorStep {
	o := f.next
	if o == nil {
		return stepWait
	}
	f.next = nil
	if !f.apply(ctx, *o) {
		return stepStop
	}
	return stepWait
}

// wait receives the daemon's next observation; the hard timeout ends the
// Watch, a channel closed before the turn ended invalidates it.
func (f *backendWatchFollow) wait(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-f.hard.C:
		f.finish(ctx, WatchTimedOut, "the hard timeout passed; observation ended", "watch.timed_out")
		return false
	case o, open := <-f.events:
		if !open {
			f.invalidate(ctx, "the thread's "+f.s.daemonName(f.w.Endpoint.Kind)+" stopped answering before the turn ended")
			return false
		}
		o = o.received(f.s.clock.Now().UTC())
		f.next = &o
		return true
	}
}

// end stores next with its event: true when the Watch is done with (stored,
// unwatched meanwhile, or not storable), false when it changed meanwhile
// and is still active (f.w is then the stored one).
func (f *backendWatchFollow) end(ctx context.Context, next Watch, typ string) bool {
	s := f.s
	stored, err := s.watches.watchTransition(ctx, next, typ, true)
	if errors.Is(err, ErrRevisionConflict) {
		cur, err := s.store.Watch(ctx, f.w.ID)
		for waitForStore(ctx, s.clock, f.log, err) {
			cur, err = s.store.Watch(ctx, f.w.ID)
		}
		if err != nil || cur.State != WatchActive {
			return true // unwatched meanwhile
		}
		f.w = cur
		return false
	}
	if waitForStore(ctx, s.clock, f.log, err) {
		return false // the same end again, once the store answers
	}
	if err != nil && ctx.Err() == nil {
		f.log.Error("watch monitor: backend", "err", err)
	}
	if err == nil {
		f.w = stored
	}
	return true
}

// finish ends the Watch in state for why, with the event typ.
func (f *backendWatchFollow) finish(ctx context.Context, state WatchState, why, typ string) {
	for {
		next := f.w
		next.State, next.Reason = state, why
		if f.end(ctx, next, typ) {
			return
		}
	}
}

func (f *backendWatchFollow) invalidate(ctx context.Context, why string) {
	if ctx.Err() != nil {
		return // akkd stops: the next start follows on
	}
	f.finish(ctx, WatchInvalidated, why, "watch.invalidated")
}

// apply decides one observation of the daemon's on the Watch, read again first
// (and after a revision conflict). false: the monitor ends.
func (f *backendWatchFollow) apply(ctx context.Context, o Observation) bool {
	s := f.s
	for {
		cur, err := s.store.Watch(ctx, f.w.ID)
		if waitForStore(ctx, s.clock, f.log, err) {
			continue // the daemon says each event once: keep it
		}
		if err != nil || cur.State != WatchActive {
			return false // unwatched meanwhile
		}
		f.w = cur
		next, typ, webhook := s.watches.decideWatch(f.w, o, s.clock.Now().UTC())
		if typ == "" {
			return true
		}
		stored, err := s.watches.watchTransition(ctx, next, typ, webhook)
		if errors.Is(err, ErrRevisionConflict) || waitForStore(ctx, s.clock, f.log, err) {
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				f.log.Error("watch monitor: backend", "err", err)
			}
			return false
		}
		f.w = stored
		return true
	}
}
