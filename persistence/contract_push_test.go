package persistence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"akk/domain"
	"akk/persistence/storetest"
)

// Push subscriptions on each engine: kept (again: replaced), listed,
// removed by endpoint, principal or dashboard session; a setting written
// once keeps its first value.
func TestPushSubscriptions(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Millisecond)
		put := func(p domain.PushSubscription) {
			t.Helper()
			if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.(domain.PushTx).PutPushSubscription(ctx, p) }); err != nil {
				t.Fatal(err)
			}
		}
		del := func(f domain.PushFilter) int64 {
			t.Helper()
			var n int64
			if err := s.InTx(ctx, func(tx domain.Tx) (err error) { n, err = tx.(domain.PushTx).DeletePushSubscriptions(ctx, f); return }); err != nil {
				t.Fatal(err)
			}
			return n
		}
		put(domain.PushSubscription{Endpoint: "https://p/1", Principal: "operator", P256dh: "k1", Auth: "a1", UISession: "s1", CreatedAt: now})
		put(domain.PushSubscription{Endpoint: "https://p/2", Principal: "host_a", P256dh: "k2", Auth: "a2", HideDetails: true, CreatedAt: now.Add(time.Second)})
		put(domain.PushSubscription{Endpoint: "https://p/1", Principal: "operator", P256dh: "k1b", Auth: "a1", UISession: "s1", CreatedAt: now})
		got, err := s.PushSubscriptions(ctx)
		if err != nil || len(got) != 2 || got[0].P256dh != "k1b" || !got[1].HideDetails || got[1].HideDetails == got[0].HideDetails || !got[0].CreatedAt.Equal(now) {
			t.Fatalf("subscriptions %+v, %v", got, err)
		}
		if n := del(domain.PushFilter{UISession: "s1"}); n != 1 {
			t.Fatalf("by session: %d", n)
		}
		if n := del(domain.PushFilter{Endpoint: "https://p/2", Principal: "operator"}); n != 0 {
			t.Fatalf("another principal's endpoint: %d", n)
		}
		if n := del(domain.PushFilter{Principal: "host_a"}); n != 1 {
			t.Fatalf("by principal: %d", n)
		}
		if left, err := s.PushSubscriptions(ctx); err != nil || len(left) != 0 {
			t.Fatalf("left %+v, %v", left, err)
		}
		for _, v := range []string{"first", "second"} {
			if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.(domain.PushTx).PutSettingOnce(ctx, "once", v) }); err != nil {
				t.Fatal(err)
			}
		}
		if v, err := s.Setting(ctx, "once"); err != nil || v != "first" {
			t.Fatalf("a setting written once: %q, %v", v, err)
		}
	})
}

// One-tap action tokens on each engine: used once; a second use, or a use
// at or after their expiry, is gone; a token that never was is not found;
// a principal's tokens end together.
func TestActionTokens(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Millisecond)
		use := func(hash string, at time.Time) (domain.ActionToken, error) {
			var a domain.ActionToken
			err := s.InTx(ctx, func(tx domain.Tx) (err error) { a, err = tx.(domain.PushTx).UseActionToken(ctx, hash, at); return })
			return a, err
		}
		for i, h := range []string{"h1", "h2", "h3"} {
			a := domain.ActionToken{Hash: h, Principal: "operator", Conversation: "push:1", TurnID: "turn_1", Decision: domain.ApproveOnce,
				ExpiresAt: now.Add(time.Minute), CreatedAt: now}
			if i == 2 {
				a.Principal = "host_a"
			}
			if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.(domain.PushTx).InsertActionToken(ctx, a) }); err != nil {
				t.Fatal(err)
			}
		}
		if a, err := use("h1", now); err != nil || a.TurnID != "turn_1" || a.Decision != domain.ApproveOnce || a.Conversation != "push:1" {
			t.Fatalf("first use %+v, %v", a, err)
		}
		if _, err := use("h1", now); !errors.Is(err, domain.ErrActionGone) {
			t.Fatalf("second use: %v", err)
		}
		if _, err := use("h2", now.Add(time.Minute)); !errors.Is(err, domain.ErrActionGone) {
			t.Fatalf("use at its expiry: %v", err)
		}
		if _, err := use("nope", now); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("a token that never was: %v", err)
		}
		if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.(domain.PushTx).DeleteActionTokensOf(ctx, "host_a") }); err != nil {
			t.Fatal(err)
		}
		if _, err := use("h3", now); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("a deleted host's token: %v", err)
		}
	})
}
