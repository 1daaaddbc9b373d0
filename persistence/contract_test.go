package persistence_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"akk/domain"
	"akk/persistence"
	"akk/persistence/storetest"
)

// The store contract: what the domain relies on of its store, written once
// against the domain's ports and run on each engine, the store in memory
// (memstore) with the SQL ones it must behave as.

// eachStore runs f on a new, empty store of each engine.
func eachStore(t *testing.T, f func(t *testing.T, s storetest.Store)) {
	for _, engine := range storetest.AllEngines {
		t.Run(engine, func(t *testing.T) { f(t, storetest.OpenStore(t, engine)) })
	}
}

// eachStoreOnCallersClock is eachStore on the engines whose leases end on
// the caller's clock: on PostgreSQL they end on the database's
// (TestLeasesFollowTheDatabasesClock), which a test cannot move.
func eachStoreOnCallersClock(t *testing.T, f func(t *testing.T, s storetest.Store)) {
	for _, engine := range storetest.AllEngines {
		t.Run(engine, func(t *testing.T) {
			if engine == "postgres" {
				t.Skip("leases end on the database's clock")
			}
			f(t, storetest.OpenStore(t, engine))
		})
	}
}

// at0 is when the contract tests' records are made.
var at0 = time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)

// write runs fn in one transaction, which must commit.
func write(t *testing.T, s storetest.Store, fn func(ctx context.Context, tx domain.Tx) error) {
	t.Helper()
	ctx := context.Background()
	if err := s.InTx(ctx, func(tx domain.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
}

// addHosts stores hosts with these ids, each a second after the one
// before, its token hash "hash-" + id.
func addHosts(t *testing.T, s storetest.Store, ids ...string) {
	t.Helper()
	for i, id := range ids {
		h := domain.Host{ID: id, Name: id, WebhookURL: "http://127.0.0.1:1/" + id, Secret: "whsec_" + id,
			CreatedAt: at0.Add(time.Duration(i) * time.Second), SecretRotatedAt: at0, Revision: 1}
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.InsertHost(ctx, h, "hash-"+id) })
	}
}

// A transaction that fails leaves nothing of what it wrote, in any table;
// reads outside it see none of it before it commits.
func TestFailedTransactionLeavesNothing(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		addHosts(t, s, "host_a")
		boom := errors.New("boom")
		err := s.InTx(ctx, func(tx domain.Tx) error {
			steps := []error{
				tx.PutSetting(ctx, "k", "v"),
				tx.InsertSession(ctx, domain.Session{ID: "ses_1", HostID: "host_a", TerminalID: "term_1", CreatedAt: at0, Revision: 1}),
				tx.InsertTurn(ctx, domain.Turn{ID: "turn_1", HostID: "host_a", SessionID: "ses_1", TerminalID: "term_1",
					State: domain.TurnWorking, CreatedAt: at0, UpdatedAt: at0, Revision: 1}),
				tx.InsertWatch(ctx, domain.Watch{ID: "wat_1", TerminalID: "term_2", State: domain.WatchActive, CreatedAt: at0, Revision: 1}),
				tx.InsertOffer(ctx, domain.Offer{ID: "off_1", Kind: "approval", TerminalID: "term_1", CreatedAt: at0, ExpiresAt: at0.Add(time.Hour)}),
				tx.RemoveHost(ctx, "host_a", at0),
			}
			if err := errors.Join(steps...); err != nil {
				return err
			}
			if _, err := s.Turn(ctx, "turn_1"); !errors.Is(err, domain.ErrNotFound) {
				return fmt.Errorf("a read outside the transaction saw its Turn: %v", err)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("InTx = %v", err)
		}
		if v, err := s.Setting(ctx, "k"); err != nil || v != "" {
			t.Fatalf("setting %q, %v", v, err)
		}
		_, errTurn := s.Turn(ctx, "turn_1")
		_, errSession := s.Session(ctx, "ses_1")
		_, errWatch := s.Watch(ctx, "wat_1")
		if !errors.Is(errTurn, domain.ErrNotFound) || !errors.Is(errSession, domain.ErrNotFound) || !errors.Is(errWatch, domain.ErrNotFound) {
			t.Fatalf("rolled back: turn %v, session %v, watch %v", errTurn, errSession, errWatch)
		}
		if h, err := s.Host(ctx, "host_a"); err != nil || h.Revision != 1 {
			t.Fatalf("a removal rolled back: %+v, %v", h, err)
		}
		err = s.InTx(ctx, func(tx domain.Tx) error {
			_, err := tx.LiveOffer(ctx, "approval", "term_1", "", "", "", at0)
			return err
		})
		if !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("a rolled-back offer: %v", err)
		}
	})
}

// Listeners hear of each commit that appended an event or touched the
// outbox, once it is visible, and of nothing else.
func TestCommitsAreAnnounced(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		addHosts(t, s, "host_a")
		var heard []persistence.Change
		var seen []int64
		s.OnChange(func(c persistence.Change) {
			heard = append(heard, c)
			id, _ := s.LastEventID(ctx)
			seen = append(seen, id)
		})
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.PutSetting(ctx, "k", "v") })
		s.InTx(ctx, func(tx domain.Tx) error {
			tx.AppendEvent(ctx, domain.Event{Type: "host.ping", CreatedAt: at0})
			return errors.New("boom")
		})
		if len(heard) != 0 {
			t.Fatalf("heard %+v of a setting and a failed transaction", heard)
		}
		var id int64
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			e, err := tx.AppendEvent(ctx, domain.Event{Type: "host.ping", HostID: "host_a", Subject: "host_a", CreatedAt: at0})
			id = e.ID
			return err
		})
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			return tx.InsertNotification(ctx, domain.Notification{ID: "ntf_1", EventID: id, HostID: "host_a", Type: "host.ping",
				State: domain.NotificationPending, CreatedAt: at0, NextAttemptAt: at0}, []byte(`{}`))
		})
		if len(heard) != 2 || heard[0].LastEventID != id || heard[0].Notifications || heard[1].LastEventID != 0 || !heard[1].Notifications {
			t.Fatalf("heard %+v", heard)
		}
		if seen[0] != id {
			t.Fatalf("a listener read the store before the commit: last event %d, want %d", seen[0], id)
		}
	})
}
