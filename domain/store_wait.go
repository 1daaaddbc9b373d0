package domain

import (
	"context"
	"log/slog"
	"time"
)

// storeRetry is how long a monitor waits before it writes again to a store
// out of reach.
const storeRetry = 500 * time.Millisecond

// waitForStore: err says the store is out of reach; it waits storeRetry
// and says true (write again), or false for another error or when ctx
// ends meanwhile.
func waitForStore(ctx context.Context, clock Clock, log *slog.Logger, err error) bool {
	if ErrorCode(err) != CodeStoreUnavailable || ctx.Err() != nil {
		return false
	}
	log.Warn("monitor: the store is out of reach; writing again shortly", "err", err)
	t := clock.NewTimer(storeRetry, "monitor", "store")
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
