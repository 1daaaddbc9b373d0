package domain

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// boundedFrom is a context that outlives ctx's cancellation (a step that
// must run to its end once begun) and ends after d on the service's
// clock, not the machine's: a test moves it rather than waiting for it.
func (s basics) boundedFrom(ctx context.Context, d time.Duration, tag string) (context.Context, context.CancelFunc) {
	bctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	t := s.clock.AfterFunc(d, func() { cancel(context.DeadlineExceeded) }, "domain", tag)
	return bctx, func() { t.Stop(); cancel(context.Canceled) }
}

// pause waits d on the clock, or until ctx ends.
func (s basics) pause(ctx context.Context, d time.Duration) error {
	t := s.clock.NewTimer(d, "pause")
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// holdingTurn is the Turn that holds the endpoint a public id (a
// terminal's, or a thread's endpoint) names.
func (s basics) holdingTurn(ctx context.Context, id string) (Turn, error) {
	return s.store.HoldingTurn(ctx, ParseEndpoint(id))
}

// basics are the ports every use case reads: the store, the clock, new
// ids and secrets, and the request validator. They are set once, at
// NewService.
type basics struct {
	store     Store
	clock     Clock
	ids       IDs
	validator Validator
}

func (s basics) validate(v any) error {
	if s.validator == nil {
		return nil
	}
	if fields := s.validator.Struct(v); len(fields) > 0 {
		return Invalid("the request is invalid", fields...)
	}
	return nil
}

// provenFence ends the occurrence fenced by key: its answer was proven.
func (s basics) provenFence(ctx context.Context, key string) error {
	ctx = context.WithoutCancel(ctx)
	return s.store.InTx(ctx, func(tx Tx) error { return tx.VerifyFence(ctx, key, s.clock.Now().UTC()) })
}

// emitLocked appends e and, when webhook is set and e has an owner host that
// subscribes to its type, an outbox row in the same transaction. The caller
// holds tx.
func (s basics) emitLocked(ctx context.Context, tx Tx, e Event, webhook bool) (Notification, error) {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = s.clock.Now().UTC()
	}
	stored, err := tx.AppendEvent(ctx, e)
	if err != nil {
		return Notification{}, fmt.Errorf("append event %s: %w", e.Type, err)
	}
	if !webhook || e.HostID == "" {
		return Notification{}, nil
	}
	h, err := tx.Host(ctx, e.HostID)
	if errors.Is(err, ErrNotFound) {
		return Notification{}, nil // a removed host gets no more webhooks
	} else if err != nil {
		return Notification{}, fmt.Errorf("look up host %s: %w", e.HostID, err)
	}
	if !h.Subscribed(e.Type) {
		// Stored as an event, never queued: no outbox row, so nothing of
		// the same subject waits behind it.
		return Notification{}, nil
	}
	body, err := json.Marshal(Envelope{Type: e.Type, Timestamp: stored.CreatedAt.UTC(), Data: e.Data})
	if err != nil {
		return Notification{}, fmt.Errorf("encode webhook %s: %w", e.Type, err)
	}
	n := Notification{
		ID:            s.ids.New("msg"),
		EventID:       stored.ID,
		HostID:        e.HostID,
		Type:          e.Type,
		State:         NotificationPending,
		CreatedAt:     stored.CreatedAt,
		NextAttemptAt: stored.CreatedAt,
	}
	if err := tx.InsertNotification(ctx, n, body); err != nil {
		return Notification{}, fmt.Errorf("queue webhook %s: %w", e.Type, err)
	}
	return n, nil
}

func (s basics) newSecret() string {
	return "whsec_" + base64.StdEncoding.EncodeToString(s.ids.Secret(32))
}

func (s basics) newToken(kind string) string {
	return "akk_" + kind + "_" + base64.RawURLEncoding.EncodeToString(s.ids.Secret(32))
}

// ownedTurnIn is ownedTurn for a use case that holds the Turns tr.
func (s basics) ownedTurnIn(ctx context.Context, tr *turns, id string) (Turn, Principal, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return Turn{}, p, err
	}
	if tr == nil {
		return Turn{}, p, E(CodeUnavailable, "turns are not configured")
	}
	t, err := s.store.Turn(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && !p.CanSeeHost(t.HostID)) {
		return Turn{}, p, E(CodeTurnNotFound, "no turn "+id)
	}
	return t, p, err
}

// waitingSince is when t began to wait on a person: its latest event of
// entering the state it waits in (its last change when none is read);
// zero when it does not wait.
func (s basics) waitingSince(ctx context.Context, t Turn) time.Time {
	typ, ok := waitingEvents[t.State]
	if !ok {
		return time.Time{}
	}
	since := t.UpdatedAt
	evs, err := s.store.EventsAfter(ctx, 0, EventFilter{All: true, Subject: t.ID}, 1000)
	if err != nil {
		return since
	}
	for _, e := range evs {
		if e.Type == typ {
			since = e.CreatedAt
		}
	}
	return since.UTC()
}
