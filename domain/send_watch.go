package domain

import (
	"context"
	"log/slog"
)

// A Send's Watch. Every Send returns a watch_id beside its turn_id, so a
// controller can follow the task the way it follows any Watch. The Watch
// follows its Turn exactly: it has no monitor and sends no callback of its
// own (the Turn's callbacks are the Send's completion callbacks, once), and
// its state is the Turn's, read through followTurn. It is attached after the
// request is in: a failure to store it is reported and never undoes,
// vetoes or repeats the Send.

// attachSendWatch gives a dispatched Turn its Watch.
func (s *sendCore) attachSendWatch(ctx context.Context, t Turn) (Watch, error) {
	ctx = context.WithoutCancel(ctx)
	now := s.clock.Now().UTC()
	w := Watch{ID: s.ids.New("watch"), HostID: t.HostID, Conversation: t.Conversation, TerminalID: t.TerminalID,
		Endpoint: t.Endpoint, TurnID: t.ID, Mode: WatchModeTurn, State: WatchActive, Mark: t.Mark, HardTimeout: t.HardTimeout,
		CreatedAt: now, UpdatedAt: now, Revision: 1}
	w = s.ledger.followTurn(w, t)
	err := FailError("send.watch")
	if err == nil {
		err = s.watches.insertWatch(ctx, w)
	}
	if err != nil {
		slog.Error("send: the Turn is dispatched but its Watch was not stored", "turn_id", t.ID, "err", err)
		return Watch{}, err
	}
	return w, nil
}
