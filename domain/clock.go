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
