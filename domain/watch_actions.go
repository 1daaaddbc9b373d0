package domain

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// GetWatch returns a Watch.
func (s *WatchCases) GetWatch(ctx context.Context, id string) (Watch, error) {
	w, err := s.ownedWatch(ctx, id)
	if err != nil {
		return Watch{}, err
	}
	return s.ledger.projectWatch(ctx, w)
}

// Unwatch ends a Watch. No input.
func (s *WatchCases) Unwatch(ctx context.Context, id string) (Watch, error) {
	w, err := s.ownedWatch(ctx, id)
	if err != nil {
		return Watch{}, err
	}
	s.turns.stopMonitor(w.ID)
	for i := 0; i < 5; i++ {
		if p, err := s.ledger.projectWatch(ctx, w); err != nil {
			return Watch{}, err
		} else if p.State != WatchActive {
			return p, nil
		}
		if w.State != WatchActive {
			return w, nil
		}
		w.State = WatchUnwatched
		out, err := s.watchTransition(ctx, w, "watch.unwatched", false)
		if errors.Is(err, ErrRevisionConflict) {
			if w, err = s.store.Watch(ctx, id); err != nil {
				return Watch{}, err
			}
			continue
		}
		return out, err
	}
	return Watch{}, fmt.Errorf("unwatch %s: the watch kept changing", id)
}

// RenewWatch restarts a timed-out or invalidated Watch whose terminal still
// runs a task. No input.
func (s *WatchCases) RenewWatch(ctx context.Context, id string) (Watch, error) {
	w, err := s.ownedWatch(ctx, id)
	if err != nil {
		return Watch{}, err
	}
	if w.TurnID != "" {
		return s.viaTurn(ctx, w, s.viaTurns.Renew)
	}
	if w.State != WatchTimedOut {
		return Watch{}, E(CodeWatchStateConflict, "watch "+id+" is "+string(w.State)+"; only a timed-out Watch is renewed")
	}
	if err := s.endpoints.of(w.Endpoint).WatchedLive(ctx, w); err != nil {
		return Watch{}, err
	}
	w.State, w.EndedAt, w.Reason = WatchActive, time.Time{}, ""
	w.CreatedAt = s.clock.Now().UTC() // the hard timeout counts again from now
	if w, err = s.watchTransition(ctx, w, "watch.renewed", false); err != nil {
		return Watch{}, err
	}
	s.startWatchMonitor(w.ID)
	return w, nil
}

// RecoverWatch reconciles an exact Watch with the agent's record. No input.
func (s *WatchCases) RecoverWatch(ctx context.Context, id string) (Watch, error) {
	w, err := s.ownedWatch(ctx, id)
	if err != nil {
		return Watch{}, err
	}
	if w.TurnID != "" {
		return s.viaTurn(ctx, w, s.viaTurns.Recover)
	}
	if w.Mode != WatchModeExact || w.State == WatchCompleted || w.State == WatchUnwatched {
		return w, nil
	}
	// An endpoint with no record to read (a daemon's thread) leaves the
	// Watch as it is: its monitor follows the daemon's own events, and a
	// turn that ended meanwhile ends it when it follows on.
	p, ok, err := s.endpoints.of(w.Endpoint).ReadRecord(ctx, w.TerminalID, w.Mark, "")
	if err != nil {
		return Watch{}, err
	}
	if !ok {
		return w, nil
	}
	next, typ, webhook := s.applyWatchProgress(w, p)
	if typ == "" {
		return w, nil
	}
	return s.watchTransition(ctx, next, typ, webhook)
}

// RetryWatchCallback redelivers a Watch's failed notification.
func (s *WatchCases) RetryWatchCallback(ctx context.Context, id, notificationID string) (Notification, error) {
	w, err := s.ownedWatch(ctx, id)
	if err != nil {
		return Notification{}, err
	}
	subject := id
	if w.TurnID != "" {
		subject = w.TurnID // a Send's Watch calls back through its Turn
	}
	return s.hosts.retryCallbackOf(ctx, "watch "+id, subject, notificationID)
}

// viaTurn runs a Turn action for a Send's Watch and returns the Watch as
// it then reads.
func (s *WatchCases) viaTurn(ctx context.Context, w Watch, action func(context.Context, string) (ActionResult, error)) (Watch, error) {
	if _, err := action(ctx, w.TurnID); err != nil {
		return Watch{}, err
	}
	cur, err := s.store.Watch(ctx, w.ID)
	if err != nil {
		return Watch{}, err
	}
	return s.ledger.projectWatch(ctx, cur)
}
