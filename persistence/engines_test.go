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

func TestMain(m *testing.M) { storetest.Main(m) }

// The store keeps its guarantees on both engines: a failed transaction
// leaves nothing, revisions are compare-and-swap, one Turn holds a
// terminal, event ids grow, due webhooks are claimed one per host and in a
// Turn's order, and old rows are pruned.
func TestStoreOnEachEngine(t *testing.T) {
	for _, engine := range storetest.Engines {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			s := storetest.OpenOn(t, engine)
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
}

// On PostgreSQL one daemon runs on a database: a second is refused until
// the first closes it, and the migrations apply once.
func TestOneDaemonPerPostgresDatabase(t *testing.T) {
	ctx := context.Background()
	url := storetest.NewDatabase(t)
	s, err := persistence.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := persistence.OpenPostgres(ctx, url); !errors.Is(err, persistence.ErrDatabaseInUse) {
		t.Fatalf("a second daemon: %v", err)
	}
	if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.PutSetting(ctx, "k", "v") }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	again, err := persistence.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if v, err := again.Setting(ctx, "k"); err != nil || v != "v" {
		t.Fatalf("setting after a reopen %q, %v", v, err)
	}
}

// BenchmarkAppendEvent is the store's write path on each engine: one write
// transaction that appends one event, committed.
func BenchmarkAppendEvent(b *testing.B) {
	for _, engine := range storetest.Engines {
		b.Run(engine, func(b *testing.B) {
			s := storetest.OpenOn(b, engine)
			ctx := context.Background()
			now := time.Now()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				err := s.InTx(ctx, func(tx domain.Tx) error {
					_, err := tx.AppendEvent(ctx, domain.Event{Type: "host.ping", Subject: "host_x", Data: map[string]any{"i": i}, CreatedAt: now})
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// PostgreSQL stopped: reads and writes answer store_unavailable (nothing
// half-written). Back: the daemon takes its database again by itself and
// writes; a second daemon is refused again. Had another daemon taken the
// database meanwhile, only one of the two writes.
func TestPostgresUnavailableAndBack(t *testing.T) {
	ctx := context.Background()
	srv := storetest.StartServer(t)
	url := srv.NewDatabase(t)
	s, err := persistence.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func(st *persistence.Store, v string) error {
		return st.InTx(ctx, func(tx domain.Tx) error { return tx.PutSetting(ctx, "k", v) })
	}
	writable := func(st *persistence.Store) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := put(st, "back")
			if err == nil {
				return
			}
			if domain.ErrorCode(err) != domain.CodeStoreUnavailable || time.Now().After(deadline) {
				t.Fatalf("after the restart: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if err := put(s, "before"); err != nil {
		t.Fatal(err)
	}

	srv.Stop()
	if err := put(s, "while down"); domain.ErrorCode(err) != domain.CodeStoreUnavailable {
		t.Fatalf("a write while PostgreSQL is stopped: %v", err)
	}
	if _, err := s.Setting(ctx, "k"); domain.ErrorCode(err) != domain.CodeStoreUnavailable {
		t.Fatalf("a read while PostgreSQL is stopped: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	writable(s)
	if _, err := persistence.OpenPostgres(ctx, url); !errors.Is(err, persistence.ErrDatabaseInUse) {
		t.Fatalf("a second daemon after the restart: %v", err)
	}

	// Another daemon comes first after a restart: whichever holds the
	// database writes, the other does not.
	srv.Stop()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	second, err := persistence.OpenPostgres(ctx, url)
	switch {
	case err == nil:
		defer second.Close()
		if err := put(second, "second"); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := put(s, "first"); domain.ErrorCode(err) != domain.CodeStoreUnavailable {
				t.Fatalf("the first daemon wrote while the second held the database: %v", err)
			}
		}
		if v, err := second.Setting(ctx, "k"); err != nil || v != "second" {
			t.Fatalf("setting %q, %v", v, err)
		}
	case errors.Is(err, persistence.ErrDatabaseInUse):
		writable(s)
	default:
		t.Fatal(err)
	}
}

// BenchmarkClaimDueNotifications is one dispatcher claim over a backlog of
// 1,200 pending webhooks of 24 hosts (each host's pings one subject), then
// the claimed rows' outcomes stored: what one delivery costs the store.
func BenchmarkClaimDueNotifications(b *testing.B) {
	for _, engine := range storetest.Engines {
		b.Run(engine, func(b *testing.B) {
			s := storetest.OpenOn(b, engine)
			ctx := context.Background()
			now := time.Now()
			for h := range 24 {
				id := fmt.Sprintf("host_%02d", h)
				if err := s.InTx(ctx, func(tx domain.Tx) error {
					return tx.InsertHost(ctx, domain.Host{ID: id, Name: id, WebhookURL: "http://127.0.0.1:1/h", Secret: "whsec_x",
						CreatedAt: now, SecretRotatedAt: now, Revision: 1}, "hash-"+id)
				}); err != nil {
					b.Fatal(err)
				}
			}
			add := func(i int) {
				host := fmt.Sprintf("host_%02d", i%24)
				if err := s.InTx(ctx, func(tx domain.Tx) error {
					e, err := tx.AppendEvent(ctx, domain.Event{Type: "host.ping", HostID: host, Subject: host, Data: map[string]any{}, CreatedAt: now})
					if err != nil {
						return err
					}
					return tx.InsertNotification(ctx, domain.Notification{ID: fmt.Sprintf("ntf_%d", i), EventID: e.ID, HostID: host,
						Type: e.Type, State: domain.NotificationPending, CreatedAt: now, NextAttemptAt: now}, []byte(`{}`))
				}); err != nil {
					b.Fatal(err)
				}
			}
			next := 0
			for range 1200 {
				add(next)
				next++
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				at := time.Now()
				batch, err := s.ClaimDueNotifications(ctx, at, at.Add(time.Minute), 8, nil)
				if err != nil || len(batch) == 0 {
					b.Fatalf("claimed %d: %v", len(batch), err)
				}
				for _, d := range batch {
					if err := s.RecordAttempt(ctx, domain.Attempt{NotificationID: d.ID, At: at, StatusCode: 200,
						State: domain.NotificationDelivered, Lease: d.Lease}); err != nil {
						b.Fatal(err)
					}
					add(next) // keep the backlog
					next++
				}
			}
			b.ReportMetric(float64(b.N)*8/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}

// Push subscriptions on each engine: kept (again: replaced), listed,
// removed by endpoint, principal or dashboard session; a setting written
// once keeps its first value.
func TestPushSubscriptions(t *testing.T) {
	for _, engine := range storetest.Engines {
		t.Run(engine, func(t *testing.T) {
			s := storetest.OpenOn(t, engine)
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
}

// One-tap action tokens on each engine: used once; a second use, or a use
// at or after their expiry, is gone; a token that never was is not found;
// a principal's tokens end together.
func TestActionTokens(t *testing.T) {
	for _, engine := range storetest.Engines {
		t.Run(engine, func(t *testing.T) {
			s := storetest.OpenOn(t, engine)
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
			// In a fleet a tap goes to the node that owns the token's Turn.
			turn := domain.Turn{ID: "turn_1", SessionID: "ses_1", TerminalID: "term_1", Request: "x", State: domain.TurnWorking,
				SubmitStage: domain.SubmitNothing, CreatedAt: now, UpdatedAt: now, Revision: 1, Endpoint: domain.EndpointRef{Kind: domain.EndpointPane, ID: "term_1"}}
			if err := s.InTx(ctx, func(tx domain.Tx) error {
				if err := tx.InsertSession(ctx, domain.Session{ID: "ses_1", TerminalID: "term_1", CreatedAt: now, Revision: 1}); err != nil {
					return err
				}
				return tx.InsertTurn(ctx, turn)
			}); err != nil {
				t.Fatal(err)
			}
			want, _, _ := s.OwnerOf(ctx, "turns", "turn_1")
			if node, ok, err := s.OwnerOf(ctx, "action_tokens", "h1"); err != nil || !ok || node != want {
				t.Fatalf("the node of a token's Turn: %q %v %v, want %q", node, ok, err, want)
			}
			if _, ok, err := s.OwnerOf(ctx, "action_tokens", "nope"); err != nil || ok {
				t.Fatalf("the node of no token: %v %v", ok, err)
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
}

// TestTurnChanges: a Turn's changes are numbered in order across writes,
// kept up to the limit, and go with a deleted Turn.
func TestTurnChanges(t *testing.T) {
	for _, engine := range storetest.Engines {
		t.Run(engine, func(t *testing.T) {
			s := storetest.OpenOn(t, engine)
			ctx := context.Background()
			at := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
			add := func(id string, cs ...domain.TurnChange) {
				t.Helper()
				if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.AddTurnChanges(ctx, id, cs) }); err != nil {
					t.Fatal(err)
				}
			}
			add("turn_1", domain.TurnChange{Path: "a.txt", Op: domain.FileCreated, Diff: "--- /dev/null\n+++ b/a.txt\n", At: at})
			add("turn_1", domain.TurnChange{Path: "b.txt", Op: domain.FileUpdated, Diff: "d", Truncated: true, At: at},
				domain.TurnChange{Path: "c.txt", Op: domain.FileDeleted, Diff: "d"})
			add("turn_2", domain.TurnChange{Path: "x", Op: domain.FileUpdated, Diff: "d"})
			got, err := s.TurnChanges(ctx, "turn_1")
			if err != nil || len(got) != 3 {
				t.Fatalf("changes %+v, %v", got, err)
			}
			for i, c := range got {
				if c.Seq != i+1 {
					t.Errorf("change %d numbered %d", i, c.Seq)
				}
			}
			if g := got[1]; g.Path != "b.txt" || g.Op != domain.FileUpdated || !g.Truncated || !g.At.Equal(at) || got[0].Diff != "--- /dev/null\n+++ b/a.txt\n" {
				t.Errorf("stored %+v", got)
			}
			many := make([]domain.TurnChange, domain.MaxTurnChanges)
			for i := range many {
				many[i] = domain.TurnChange{Path: fmt.Sprint(i), Op: domain.FileUpdated, Diff: "d"}
			}
			add("turn_2", many...)
			if got, err := s.TurnChanges(ctx, "turn_2"); err != nil || len(got) != domain.MaxTurnChanges || got[len(got)-1].Path != fmt.Sprint(domain.MaxTurnChanges-2) {
				t.Fatalf("beyond the limit: %d changes, %v", len(got), err)
			}
			if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.DeleteTurn(ctx, "turn_1") }); err != nil {
				t.Fatal(err)
			}
			if got, err := s.TurnChanges(ctx, "turn_1"); err != nil || len(got) != 0 {
				t.Fatalf("a deleted Turn's changes: %+v, %v", got, err)
			}
		})
	}
}
