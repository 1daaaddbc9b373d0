package domain

import (
	"context"
	"errors"
	"log/slog"
)

// A Send's Watch. Every Send returns a watch_id beside its turn_id, so a
// controller can follow the task the way it follows any Watch. The Watch
// follows its Turn exactly: it has no monitor and sends no callback of its
// own (the Turn's callbacks are the Send's completion callbacks, once), and
// its state is the Turn's, read through followTurn. It is attached after the
// request is in: a failure to store it is reported and never undoes,
// vetoes or repeats the Send.

// followTurn is a Send's Watch as its Turn stands now.
func (s *Service) followTurn(w Watch, t Turn) Watch {
	if w.TurnID == "" || w.State != WatchActive {
		return w // unwatched stays unwatched
	}
	w.NativeTurnID = t.NativeTurnID
	w.LatestText, _ = s.cutGraphemes(t.LatestText, ProgressLimit)
	switch t.State {
	case TurnCompleted:
		w.State, w.FinalMessage = WatchCompleted, t.FinalMessage
	case TurnFailed:
		w.State, w.Reason = WatchFailed, t.FailureReason
	case TurnCancelled:
		w.State, w.Reason = WatchFailed, "the Turn was cancelled"
	case TurnClosed:
		w.State, w.Reason = WatchInvalidated, "the Turn was closed; AKK no longer follows it"
	}
	if w.State != WatchActive && w.EndedAt.IsZero() {
		w.EndedAt = t.EndedAt
		if w.EndedAt.IsZero() {
			w.EndedAt = t.UpdatedAt
		}
	}
	return w
}

// projectWatch is w as it reads now: a Send's Watch takes its Turn's state.
func (s *Service) projectWatch(ctx context.Context, w Watch) (Watch, error) {
	if w.TurnID == "" || w.State != WatchActive {
		return w, nil
	}
	t, err := s.store.Turn(ctx, w.TurnID)
	if errors.Is(err, ErrNotFound) {
		return w, nil
	}
	if err != nil {
		return w, err
	}
	return s.followTurn(w, t), nil
}

// attachSendWatch gives a dispatched Turn its Watch.
func (s *Service) attachSendWatch(ctx context.Context, t Turn) (Watch, error) {
	ctx = context.WithoutCancel(ctx)
	now := s.clock.Now().UTC()
	w := Watch{ID: s.ids.New("watch"), HostID: t.HostID, Conversation: t.Conversation, TerminalID: t.TerminalID,
		Endpoint: t.Endpoint, TurnID: t.ID, Mode: WatchModeTurn, State: WatchActive, Mark: t.Mark, HardTimeout: t.HardTimeout,
		CreatedAt: now, UpdatedAt: now, Revision: 1}
	w = s.followTurn(w, t)
	err := FailError("send.watch")
	if err == nil {
		err = s.insertWatch(ctx, w)
	}
	if err != nil {
		slog.Error("send: the Turn is dispatched but its Watch was not stored", "turn_id", t.ID, "err", err)
		return Watch{}, err
	}
	return w, nil
}

// syncSendWatch ends a Send's Watch in the transaction that ends its Turn,
// so the store never counts it active after the Turn is over.
func (s *Service) syncSendWatch(ctx context.Context, tx Tx, t Turn) error {
	if !t.State.Final() {
		return nil
	}
	w, err := tx.WatchOfTurn(ctx, t.ID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	next := s.followTurn(w, t)
	if next.State == w.State {
		return nil
	}
	next.UpdatedAt = t.UpdatedAt
	return tx.UpdateWatch(ctx, next)
}
