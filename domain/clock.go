package domain

import (
	"context"
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
