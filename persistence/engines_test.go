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

// In a fleet a tap goes to the node that owns the token's Turn; a token
// that never was has no node.
func TestActionTokensNode(t *testing.T) {
	for _, engine := range storetest.Engines {
		t.Run(engine, func(t *testing.T) {
			s := storetest.OpenOn(t, engine)
			ctx := context.Background()
			now := time.Now().UTC().Truncate(time.Millisecond)
			turn := domain.Turn{ID: "turn_1", SessionID: "ses_1", TerminalID: "term_1", Request: "x", State: domain.TurnWorking,
				SubmitStage: domain.SubmitNothing, CreatedAt: now, UpdatedAt: now, Revision: 1, Endpoint: domain.EndpointRef{Kind: domain.EndpointPane, ID: "term_1"}}
			if err := s.InTx(ctx, func(tx domain.Tx) error {
				if err := tx.(domain.PushTx).InsertActionToken(ctx, domain.ActionToken{Hash: "h1", Principal: "operator", TurnID: "turn_1",
					Decision: domain.ApproveOnce, ExpiresAt: now.Add(time.Minute), CreatedAt: now}); err != nil {
					return err
				}
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
		})
	}
}
