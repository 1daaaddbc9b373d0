package domain

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"
)

// startBackendWatch watches the turn a backend thread runs now (one a
// person or another client of its daemon started), exactly: the daemon
// names the turn, and its own events end the Watch. No input.
func (s *Service) startBackendWatch(ctx context.Context, p Principal, in NewWatchInput) (Watch, error) {
	th, err := s.backendEndpointThread(ctx, in.TerminalID)
	if err != nil {
		return Watch{}, err
	}
	if err := s.mayWatch(ctx, p, in.TerminalID, "thread"); err != nil {
		return Watch{}, err
	}
	turnID, err := s.codexBackend.RunningTurn(ctx, th)
	if err != nil {
		return Watch{}, &Error{Code: CodeUnavailable, Message: "could not read the thread from its daemon", Err: err}
	}
	if turnID == "" {
		return Watch{}, E(CodeNothingToWatch, "the thread runs no turn; a Watch follows a task that is working")
	}
	now := s.clock.Now().UTC()
	w := Watch{ID: s.ids.New("watch"), HostID: p.HostID, Conversation: p.Conversation, TerminalID: in.TerminalID,
		Mode: WatchModeExact, State: WatchActive, NativeTurnID: turnID, SeenActivity: true,
		HardTimeout: s.turns.cfg.DefaultHard, CreatedAt: now, UpdatedAt: now, Revision: 1}
	return s.beginWatch(ctx, w, in)
}

// backendWatchMonitor follows a backend Watch's turn through its daemon to
// its end. It never sends input. A daemon that cannot be reached or goes
// away invalidates the Watch (the task may run on; nothing proves it).
func (s *Service) backendWatchMonitor(ctx context.Context, w Watch) {
	log := slog.With("watch_id", w.ID)
	end := func(next Watch, typ string) bool {
		stored, err := s.watchTransition(ctx, next, typ, true)
		if errors.Is(err, ErrRevisionConflict) {
			cur, err := s.store.Watch(ctx, w.ID)
			if err != nil || cur.State != WatchActive {
				return true // unwatched meanwhile
			}
			w = cur
			return false
		}
		if err != nil && ctx.Err() == nil {
			log.Error("watch monitor: backend", "err", err)
		}
		if err == nil {
			w = stored
		}
		return true
	}
	invalidate := func(why string) {
		if ctx.Err() != nil {
			return // akkd stops: the next start follows on
		}
		for {
			next := w
			next.State, next.Reason = WatchInvalidated, why
			if end(next, "watch.invalidated") {
				return
			}
		}
	}
	events, why := s.followBackend(ctx, strings.TrimPrefix(w.TerminalID, backendEndpointPrefix), w.NativeTurnID)
	if why != "" {
		invalidate(why)
		return
	}
	hard := time.NewTimer(time.Until(w.CreatedAt.Add(w.HardTimeout)))
	defer hard.Stop()
	for {
		var ev BackendEvent
		var open bool
		select {
		case <-ctx.Done():
			return
		case <-hard.C:
			for {
				next := w
				next.State, next.Reason = WatchTimedOut, "the hard timeout passed; observation ended"
				if end(next, "watch.timed_out") {
					return
				}
			}
		case ev, open = <-events:
		}
		if !open {
			invalidate("the thread's Codex app-server daemon stopped answering before the turn ended")
			return
		}
		for {
			cur, err := s.store.Watch(ctx, w.ID)
			if err != nil || cur.State != WatchActive {
				return // unwatched meanwhile
			}
			w = cur
			next, typ, webhook := w, "", false
			switch ev.Kind {
			case BackendApproval:
				if !w.ApprovalShown {
					next.ApprovalShown, typ, webhook = true, "watch.approval_observed", true
				}
			case BackendResolved:
				if w.ApprovalShown {
					next.ApprovalShown, typ = false, "watch.approval_cleared"
				}
			case BackendCompleted:
				next.State, next.FinalMessage, typ, webhook = WatchCompleted, s.redact(ev.Text), "watch.completed", true
			case BackendInterrupted:
				next.State, next.Reason, typ, webhook = WatchFailed, "the task was interrupted", "watch.failed", true
			case BackendFailed:
				next.State, next.Reason, typ, webhook = WatchFailed, boundText(s.turns.redact, ev.Text, 500), "watch.failed", true
			case BackendGone:
				next.State, next.Reason, typ, webhook = WatchInvalidated, "the thread's Codex app-server daemon went away before the turn ended: "+ev.Text, "watch.invalidated", true
			}
			if typ == "" {
				break
			}
			stored, err := s.watchTransition(ctx, next, typ, webhook)
			if errors.Is(err, ErrRevisionConflict) {
				continue
			}
			if err != nil {
				if ctx.Err() == nil {
					log.Error("watch monitor: backend", "err", err)
				}
				return
			}
			w = stored
			break
		}
		if w.State != WatchActive {
			return
		}
	}
}
