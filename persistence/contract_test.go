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

// The store keeps its guarantees on each engine: a failed transaction
// leaves nothing, revisions are compare-and-swap, one Turn holds a
// terminal, Turns are counted by state.
func TestStoreOnEachEngine(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
		inTx := func(fn func(domain.Tx) error) error { return s.InTx(ctx, fn) }

		// A transaction that fails writes nothing.
		boom := errors.New("boom")
		if err := inTx(func(tx domain.Tx) error {
			if _, err := tx.AppendEvent(ctx, domain.Event{Type: "host.ping", CreatedAt: now}); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("InTx = %v", err)
		}
		if id, err := s.LastEventID(ctx); err != nil || id != 0 {
			t.Fatalf("a rolled-back event is stored: %d, %v", id, err)
		}

		for _, id := range []string{"host_a", "host_b"} {
			h := domain.Host{ID: id, Name: id, WebhookURL: "http://127.0.0.1:1/" + id, Secret: "whsec_x",
				CreatedAt: now, SecretRotatedAt: now, Revision: 1}
			if err := inTx(func(tx domain.Tx) error { return tx.InsertHost(ctx, h, "hash-"+id) }); err != nil {
				t.Fatal(err)
			}
		}
		turn := func(id, terminal string) domain.Turn {
			return domain.Turn{ID: id, HostID: "host_a", SessionID: "ses_1", TerminalID: terminal, Request: "task",
				State: domain.TurnWorking, SubmitStage: domain.SubmitStage("submitted"), Mark: domain.DurableMark(""),
				CreatedAt: now, UpdatedAt: now, Revision: 1, Endpoint: domain.EndpointRef{Kind: domain.EndpointPane, ID: terminal}}
		}
		if err := inTx(func(tx domain.Tx) error {
			if err := tx.InsertSession(ctx, domain.Session{ID: "ses_1", HostID: "host_a", TerminalID: "term_1", CreatedAt: now, Revision: 1}); err != nil {
				return err
			}
			return tx.InsertTurn(ctx, turn("turn_1", "term_1"))
		}); err != nil {
			t.Fatal(err)
		}
		// One Turn holds a terminal.
		err := inTx(func(tx domain.Tx) error { return tx.InsertTurn(ctx, turn("turn_2", "term_1")) })
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != domain.CodeConflictActiveTurn {
			t.Fatalf("a second holder: %v", err)
		}
		// Compare-and-swap: a stale revision is refused.
		stale := turn("turn_1", "term_1")
		stale.LatestText = "first"
		if err := inTx(func(tx domain.Tx) error { return tx.UpdateTurn(ctx, stale) }); err != nil {
			t.Fatal(err)
		}
		stale.LatestText = "second"
		if err := inTx(func(tx domain.Tx) error { return tx.UpdateTurn(ctx, stale) }); !errors.Is(err, domain.ErrRevisionConflict) {
			t.Fatalf("a stale update: %v", err)
		}
		if got, err := s.Turn(ctx, "turn_1"); err != nil || got.LatestText != "first" || got.Revision != 2 {
			t.Fatalf("turn %+v, %v", got, err)
		}
		// Counted for /metrics: one Turn working, none waiting.
		if c, err := s.Counts(ctx); err != nil || c.Turns[domain.TurnWorking] != 1 || len(c.Turns) != 1 || !c.OldestWaiting.IsZero() {
			t.Fatalf("counts %+v, %v", c, err)
		}
		waiting := turn("turn_1", "term_1")
		waiting.Revision, waiting.State, waiting.UpdatedAt = 2, domain.TurnAwaitingApproval, now.Add(time.Minute)
		if err := inTx(func(tx domain.Tx) error { return tx.UpdateTurn(ctx, waiting) }); err != nil {
			t.Fatal(err)
		}
		if c, err := s.Counts(ctx); err != nil || c.Turns[domain.TurnAwaitingApproval] != 1 || !c.OldestWaiting.Equal(now.Add(time.Minute)) {
			t.Fatalf("counts with a prompt waiting %+v, %v", c, err)
		}
		back := waiting
		back.Revision, back.State, back.LatestText = 3, domain.TurnWorking, "first"
		if err := inTx(func(tx domain.Tx) error { return tx.UpdateTurn(ctx, back) }); err != nil {
			t.Fatal(err)
		}
	})
}

// Event ids grow; due webhooks are claimed one per host and in a Turn's
// order; old rows are pruned.
func TestWebhooksClaimedInOrder(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		now := at0
		inTx := func(fn func(domain.Tx) error) error { return s.InTx(ctx, fn) }
		addHosts(t, s, "host_a", "host_b")

		// Events and their webhooks: two callbacks of one Turn for
		// host_a, one for host_b.
		var ids []int64
		for i, n := range []struct{ id, host, subject string }{
			{"ntf_1", "host_a", "turn_1"}, {"ntf_2", "host_a", "turn_1"}, {"ntf_3", "host_b", "turn_9"},
		} {
			if err := inTx(func(tx domain.Tx) error {
				e, err := tx.AppendEvent(ctx, domain.Event{Type: "turn.progress", HostID: n.host, Subject: n.subject,
					Data: map[string]any{"i": i}, CreatedAt: now})
				if err != nil {
					return err
				}
				ids = append(ids, e.ID)
				return tx.InsertNotification(ctx, domain.Notification{ID: n.id, EventID: e.ID, HostID: n.host, Type: e.Type,
					State: domain.NotificationPending, CreatedAt: now, NextAttemptAt: now}, []byte(`{}`))
			}); err != nil {
				t.Fatal(err)
			}
		}
		if ids[0] <= 0 || ids[1] <= ids[0] || ids[2] <= ids[1] {
			t.Fatalf("event ids %v", ids)
		}
		evs, err := s.EventsAfter(ctx, ids[0], domain.EventFilter{HostID: "host_a"}, 10)
		if err != nil || len(evs) != 1 || evs[0].ID != ids[1] {
			t.Fatalf("host_a's events after the first: %+v, %v", evs, err)
		}
		if due, ok, err := s.NextNotificationDue(ctx); err != nil || !ok || !due.Equal(now) {
			t.Fatalf("next due %v %v %v", due, ok, err)
		}
		// host_b is busy: only host_a's first callback is claimed.
		got, err := s.ClaimDueNotifications(ctx, now, now.Add(time.Minute), 10, []string{"host_b"})
		if err != nil || len(got) != 1 || got[0].ID != "ntf_1" || string(got[0].Payload) != `{}` {
			t.Fatalf("claimed %+v, %v", got, err)
		}
		// Leased: nothing more of host_a until its attempt is recorded.
		if got, err := s.ClaimDueNotifications(ctx, now, now.Add(time.Minute), 10, nil); err != nil || len(got) != 1 || got[0].ID != "ntf_3" {
			t.Fatalf("claimed with host_a in flight %+v, %v", got, err)
		}
		// The claim's lease (on PostgreSQL, by the database's clock).
		if err := s.RecordAttempt(ctx, domain.Attempt{NotificationID: "ntf_1", At: now, StatusCode: 200,
			State: domain.NotificationDelivered, Lease: got[0].Lease}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Notification(ctx, "ntf_1"); err != nil || n.State != domain.NotificationDelivered || n.Attempts != 1 {
			t.Fatalf("after delivery %+v, %v", n, err)
		}
		if got, err := s.ClaimDueNotifications(ctx, now, now.Add(time.Minute), 10, nil); err != nil || len(got) != 1 || got[0].ID != "ntf_2" {
			t.Fatalf("the Turn's next callback %+v, %v", got, err)
		}
		// Pruned: the delivered notification and its attempt; the
		// pending ones and their events stay.
		p, err := s.Prune(ctx, now.Add(time.Hour))
		if err != nil || p.Notifications != 1 || p.Attempts != 1 || p.Events != 1 {
			t.Fatalf("pruned %+v, %v", p, err)
		}
	})
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
