package persistence

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"akk/domain"
)

// Every connection syncs each commit to disk (synchronous=FULL): in WAL
// mode NORMAL may lose the last commits, already acknowledged, on a power
// loss.
func TestCommitsAreSyncedFully(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "akk.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, db := range map[string]interface {
		QueryRowContext(ctx context.Context, q string, args ...any) *row
	}{"writer": s.w, "reader": s.r} {
		var level int
		if err := db.QueryRowContext(context.Background(), "PRAGMA synchronous").Scan(&level); err != nil {
			t.Fatal(err)
		}
		if level != 2 {
			t.Errorf("%s: synchronous=%d, want 2 (FULL)", name, level)
		}
	}
}

// Migration 13 gives a host stored before it no delivery headers and every
// event type; a host's headers and subscription survive a reopen, and a
// replace is compare-and-swap.
func TestHostWebhookHeadersAndEventsMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "akk.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// Back to the schema before migration 13, with a host of that time.
	for _, q := range []string{`ALTER TABLE hosts DROP COLUMN webhook_headers`, `ALTER TABLE hosts DROP COLUMN webhook_events`,
		`DELETE FROM schema_migrations WHERE version = 13`,
		`INSERT INTO hosts(host_id, name, webhook_url, secret, token_hash, created_at, secret_rotated_at, revision)
			VALUES ('host_old', 'old', 'http://127.0.0.1:9/a', 'whsec_x', 'h1', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 1)`} {
		if _, err := s.w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	old, err := s.Host(ctx, "host_old")
	if err != nil || old.WebhookHeaders == nil || len(old.WebhookHeaders) != 0 || len(old.WebhookEvents) != 0 || !old.Subscribed("turn.accepted") {
		t.Fatalf("a host from before: %+v %v", old, err)
	}
	now := time.Now().UTC()
	claw := domain.Host{ID: "host_claw", Name: "claw", WebhookURL: "http://127.0.0.1:9/a", Secret: "whsec_x", CreatedAt: now,
		SecretRotatedAt: now, Revision: 1, WebhookHeaders: map[string]string{"Authorization": "Bearer t"},
		WebhookEvents: []string{"turn.completed"}}
	if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.InsertHost(ctx, claw, "h2") }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Host(ctx, "host_claw")
	if err != nil || got.WebhookHeaders["Authorization"] != "Bearer t" || len(got.WebhookHeaders) != 1 ||
		len(got.WebhookEvents) != 1 || got.WebhookEvents[0] != "turn.completed" || got.Subscribed("turn.accepted") || !got.Subscribed("host.ping") {
		t.Fatalf("claw: %+v %v", got, err)
	}
	err = s.InTx(ctx, func(tx domain.Tx) error {
		return tx.UpdateHostWebhook(ctx, "host_claw", 7, domain.HostWebhook{URL: "http://127.0.0.1:9/b"})
	})
	if err != domain.ErrRevisionConflict {
		t.Fatalf("a stale revision: %v", err)
	}
	err = s.InTx(ctx, func(tx domain.Tx) error {
		return tx.UpdateHostWebhook(ctx, "host_claw", 1, domain.HostWebhook{URL: "http://127.0.0.1:9/b"})
	})
	if got, _ = s.Host(ctx, "host_claw"); err != nil || got.WebhookURL != "http://127.0.0.1:9/b" || len(got.WebhookHeaders) != 0 ||
		len(got.WebhookEvents) != 0 || got.Revision != 2 {
		t.Fatalf("replaced: %+v %v", got, err)
	}
}

// Migration 14 stores each Turn's and Watch's endpoint in columns of its
// own, read once from the public id for the rows stored before it; a new
// row keeps the endpoint it is given.
func TestEndpointColumnsMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "akk.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	pane := domain.EndpointRef{Kind: domain.EndpointPane, ID: "term_1"}
	thread := domain.EndpointRef{Kind: domain.EndpointCodexThread, ID: "019a-thread"}
	turn := func(id string, e domain.EndpointRef) domain.Turn {
		return domain.Turn{ID: id, SessionID: "sess_1", TerminalID: e.String(), Endpoint: e, State: domain.TurnCompleted, SubmitStage: domain.SubmitEntered,
			CreatedAt: now, UpdatedAt: now, EndedAt: now, Revision: 1}
	}
	watch := domain.Watch{ID: "watch_1", TerminalID: thread.String(), Endpoint: thread, Mode: domain.WatchModeExact,
		State: domain.WatchCompleted, CreatedAt: now, UpdatedAt: now, Revision: 1}
	err = s.InTx(ctx, func(tx domain.Tx) error {
		if err := tx.InsertSession(ctx, domain.Session{ID: "sess_1", TerminalID: "term_1", CreatedAt: now, Revision: 1}); err != nil {
			return err
		}
		holding := turn("turn_holding", thread)
		holding.State = domain.TurnWorking
		for _, x := range []domain.Turn{turn("turn_pane", pane), turn("turn_thread", thread), holding} {
			if err := tx.InsertTurn(ctx, x); err != nil {
				return err
			}
		}
		return tx.InsertWatch(ctx, watch)
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for id, want := range map[string]domain.EndpointRef{"turn_pane": pane, "turn_thread": thread, "turn_holding": thread} {
			if got, err := s.Turn(ctx, id); err != nil || got.Endpoint != want {
				t.Fatalf("%s: %s names %+v, want %+v (%v)", when, id, got.Endpoint, want, err)
			}
		}
		if got, err := s.Watch(ctx, "watch_1"); err != nil || got.Endpoint != thread {
			t.Fatalf("%s: the watch names %+v (%v)", when, got.Endpoint, err)
		}
		// The thread is held by its endpoint, not by the public id's form.
		if got, err := s.HoldingTurn(ctx, thread); err != nil || got.ID != "turn_holding" {
			t.Fatalf("%s: the thread is held by %q (%v)", when, got.ID, err)
		}
		if _, err := s.HoldingTurn(ctx, domain.EndpointRef{Kind: domain.EndpointPane, ID: thread.ID}); err != domain.ErrNotFound {
			t.Fatalf("%s: a pane with the thread's id is held (%v)", when, err)
		}
		second := turn("turn_second", thread)
		second.State = domain.TurnDispatching
		err := s.InTx(ctx, func(tx domain.Tx) error { return tx.InsertTurn(ctx, second) })
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != domain.CodeConflictActiveTurn {
			t.Fatalf("%s: a second Turn holding the thread: %v", when, err)
		}
	}
	check("stored")
	// Back to the schema before migration 14: the rows lose their columns,
	// and one Turn holds a terminal by its public id again.
	for _, q := range []string{`DROP INDEX turns_one_holder`, `DROP INDEX turns_by_endpoint`,
		`CREATE UNIQUE INDEX turns_one_holder ON turns(terminal_id) WHERE state IN ` + holdingStates,
		`ALTER TABLE turns DROP COLUMN endpoint_kind`, `ALTER TABLE turns DROP COLUMN endpoint_id`,
		`ALTER TABLE watches DROP COLUMN endpoint_kind`, `ALTER TABLE watches DROP COLUMN endpoint_id`,
		`DELETE FROM schema_migrations WHERE version IN (14, 21)`} {
		if _, err := s.w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check("migrated")
}
