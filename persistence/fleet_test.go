package persistence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"akk/domain"
	"akk/persistence"
	"akk/persistence/storetest"
)

// Nodes of one fleet share a PostgreSQL database: each node's name is
// taken once; an event one node commits wakes the other's listener; Turns
// and Watches are each owned by the node that wrote them.
func TestFleetNodesShareOneDatabase(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := storetest.NewDatabase(t)
	a, err := persistence.OpenPostgresNode(ctx, url, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := persistence.OpenPostgresNode(ctx, url, "b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := persistence.OpenPostgresNode(ctx, url, "a"); !errors.Is(err, persistence.ErrDatabaseInUse) {
		t.Fatalf("a second daemon as node a: %v", err)
	}

	woke := make(chan persistence.Change, 16)
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	go b.Listen(lctx, func(c persistence.Change) { woke <- c })
	if c := <-woke; c.LastEventID != -1 {
		t.Fatalf("first call %+v, want the catch-up", c)
	}
	var id int64
	if err := a.InTx(ctx, func(tx domain.Tx) error {
		e, err := tx.AppendEvent(ctx, domain.Event{Type: "host.ping", Subject: "s", Data: map[string]any{}, CreatedAt: time.Now()})
		id = e.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-woke:
		if c.LastEventID != id {
			t.Fatalf("woken with %+v, want event %d", c, id)
		}
	case <-ctx.Done():
		t.Fatal("node b was not woken by node a's event")
	}

	ka, err := a.FleetKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if kb, err := b.FleetKey(ctx); err != nil || string(ka) != string(kb) || len(ka) != 32 {
		t.Fatalf("fleet keys %x %x %v", ka, kb, err)
	}
}

// A node whose daemon is gone without closing its database session (its
// machine died hard) starts again once that session has been silent for
// StaleLockAfter: the old session is ended and its lock taken, and the
// old daemon, were it still there, writes nothing more. Before, the start
// was refused until PostgreSQL gave up on the session (two hours by the
// kernel's defaults). A live holder is refused at once, named.
func TestGoneNodesLockIsTakenOver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	defer func(d time.Duration) { persistence.StaleLockAfter = d }(persistence.StaleLockAfter)
	persistence.StaleLockAfter = 3 * time.Second
	url := storetest.NewDatabase(t)
	old, err := persistence.OpenPostgresNode(ctx, url, "x")
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	_, err = persistence.OpenPostgresNode(ctx, url, "x")
	var held *persistence.LockHeld
	if !errors.Is(err, persistence.ErrDatabaseInUse) || !errors.As(err, &held) || held.Stale() || !strings.Contains(err.Error(), "another akkd runs") {
		t.Fatalf("a second daemon as x while the first lives: %v", err)
	}
	old.StopKeeping()
	start := time.Now()
	again, err := persistence.OpenPostgresNode(ctx, url, "x")
	if err != nil {
		t.Fatalf("x again after its daemon went: %v", err)
	}
	defer again.Close()
	t.Logf("x started again %s after its daemon went silent", time.Since(start).Round(100*time.Millisecond))
	put := func(s *persistence.Store) error {
		return s.InTx(ctx, func(tx domain.Tx) error { return tx.PutSetting(ctx, "k", "v") })
	}
	if err := put(again); err != nil {
		t.Fatal(err)
	}
	if err := put(old); domain.ErrorCode(err) != domain.CodeStoreUnavailable {
		t.Fatalf("the gone daemon's write: %v", err)
	}
}

// A node whose clock runs 20 s behind is live as long as it heartbeats,
// and its webhook lease is its own: liveness and leases are on the
// database's clock. Before, its heartbeat said it was seen 20 s ago, so
// another node took it for dead and claimed the row it was delivering (a
// second delivery of the same webhook-id).
func TestLeasesFollowTheDatabasesClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := storetest.NewDatabase(t)
	behind, err := persistence.OpenPostgresNode(ctx, url, "behind")
	if err != nil {
		t.Fatal(err)
	}
	defer behind.Close()
	other, err := persistence.OpenPostgresNode(ctx, url, "other")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	now := time.Now()
	late := now.Add(-20 * time.Second) // the behind node's clock
	if err := other.InTx(ctx, func(tx domain.Tx) error {
		if err := tx.InsertHost(ctx, domain.Host{ID: "host_a", Name: "a", WebhookURL: "http://127.0.0.1:1/a", Secret: "whsec_x",
			CreatedAt: now, Revision: 1}, "hash-a"); err != nil {
			return err
		}
		e, err := tx.AppendEvent(ctx, domain.Event{Type: "turn.progress", HostID: "host_a", Subject: "turn_1", Data: map[string]any{}, CreatedAt: now})
		if err != nil {
			return err
		}
		return tx.InsertNotification(ctx, domain.Notification{ID: "ntf_1", EventID: e.ID, HostID: "host_a", Type: e.Type,
			State: domain.NotificationPending, CreatedAt: late, NextAttemptAt: late.Add(-time.Minute)}, []byte(`{}`))
	}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []struct {
		s    *persistence.Store
		name string
		at   time.Time
	}{{behind, "behind", late}, {other, "other", now}} {
		if _, err := n.s.Heartbeat(ctx, persistence.Node{Name: n.name, AdvertiseURL: "http://" + n.name, LastSeen: n.at, StartedAt: n.at}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := behind.ClaimDueNotifications(ctx, late, late.Add(2*time.Minute), 10, nil)
	if err != nil || len(got) != 1 {
		t.Fatalf("the behind node's claim: %+v, %v", got, err)
	}
	if again, err := other.ClaimDueNotifications(ctx, now, now.Add(2*time.Minute), 10, nil); err != nil || len(again) != 0 {
		t.Fatalf("another node claimed the behind node's live lease: %+v, %v", again, err)
	}
	nodes, err := other.Nodes(ctx)
	if err != nil || len(nodes) != 2 || now.Sub(nodes[0].LastSeen).Abs() > 5*time.Second {
		t.Fatalf("the behind node's heartbeat is on the database's clock: %+v, %v", nodes, err)
	}
}

// Nodes started at once on an empty database all come up: they migrate
// one after another under one lock. Before, one in three died with a
// duplicate key creating schema_migrations.
func TestNodesStartedAtOnceOnAnEmptyDatabase(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := storetest.StartServer(t)
	for round := range 4 {
		url := srv.NewDatabase(t)
		errs := make(chan error, 3)
		for i := range 3 {
			go func() {
				s, err := persistence.OpenPostgresNode(ctx, url, fmt.Sprintf("n%d", i))
				if err == nil {
					defer s.Close()
					err = s.InTx(ctx, func(tx domain.Tx) error { return tx.PutSetting(ctx, fmt.Sprintf("k%d", i), "v") })
				}
				errs <- err
			}()
		}
		for range 3 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: a node started beside two others: %v", round, err)
			}
		}
	}
}

// A database migrated by a newer akkd is refused, saying so, on either
// engine; nothing is written.
func TestNewerSchemaRefused(t *testing.T) {
	for _, engine := range storetest.Engines {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			loc := filepath.Join(t.TempDir(), "akk.db")
			if engine == "postgres" {
				loc = storetest.NewDatabase(t)
			}
			s, err := storetest.OpenLocation(ctx, loc)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Exec(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES (9999, '9999_future.sql', '')`); err != nil {
				t.Fatal(err)
			}
			s.Close()
			_, err = storetest.OpenLocation(ctx, loc)
			if !errors.Is(err, persistence.ErrSchemaNewer) || !strings.Contains(err.Error(), "9999_future.sql") {
				t.Fatalf("a newer schema: %v", err)
			}
		})
	}
}

// A host pinned to one node (delivery_node) has its webhooks claimed by
// that node only; another node's claim leaves them.
func TestPinnedHostsWebhooksAreItsNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := storetest.NewDatabase(t)
	a, err := persistence.OpenPostgresNode(ctx, url, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := persistence.OpenPostgresNode(ctx, url, "b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	now := time.Now()
	if err := b.InTx(ctx, func(tx domain.Tx) error {
		if err := tx.InsertHost(ctx, domain.Host{ID: "host_a", Name: "a", WebhookURL: "http://127.0.0.1:1/a", Secret: "whsec_x",
			DeliveryNode: "a", CreatedAt: now, Revision: 1}, "hash-a"); err != nil {
			return err
		}
		e, err := tx.AppendEvent(ctx, domain.Event{Type: "host.ping", HostID: "host_a", Subject: "host_a", Data: map[string]any{}, CreatedAt: now})
		if err != nil {
			return err
		}
		return tx.InsertNotification(ctx, domain.Notification{ID: "ntf_1", EventID: e.ID, HostID: "host_a", Type: e.Type,
			State: domain.NotificationPending, CreatedAt: now, NextAttemptAt: now}, []byte(`{}`))
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := b.ClaimDueNotifications(ctx, now, now.Add(time.Minute), 10, nil); err != nil || len(got) != 0 {
		t.Fatalf("node b claimed a webhook of a host pinned to a: %+v, %v", got, err)
	}
	if got, err := a.ClaimDueNotifications(ctx, now, now.Add(time.Minute), 10, nil); err != nil || len(got) != 1 {
		t.Fatalf("node a's claim: %+v, %v", got, err)
	}
	h, err := b.Host(ctx, "host_a")
	if err != nil || h.DeliveryNode != "a" {
		t.Fatalf("the host as stored: %+v, %v", h, err)
	}
}

// freezer is a TCP proxy to a PostgreSQL server's socket whose
// connections can be frozen: nothing more flows either way, and neither
// end hears of it (a partition that swallows a close). Connections made
// after freeze flow.
type freezer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []*frozenPair
}

type frozenPair struct {
	once   sync.Once
	frozen chan struct{}
}

func newFreezer(t *testing.T, socket string) *freezer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &freezer{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("unix", socket)
			if err != nil {
				c.Close()
				continue
			}
			p := &frozenPair{frozen: make(chan struct{})}
			f.mu.Lock()
			f.conns = append(f.conns, p)
			f.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					select {
					case <-p.frozen:
						<-make(chan struct{}) // held open, silent, for good
					default:
					}
					if err != nil {
						dst.Close()
						return
					}
					dst.Write(buf[:n])
				}
			}
			go pipe(up, c)
			go pipe(c, up)
		}
	}()
	return f
}

// freeze stops every connection made so far.
func (f *freezer) freeze() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.conns {
		p.once.Do(func() { close(p.frozen) })
	}
}

// A partition long enough for the daemon to give up on its lock session,
// which PostgreSQL still holds (the close was lost): the daemon ends its
// own old session and takes the lock again, and writes. Before, it took
// the lock's holder for another daemon and wrote nothing more.
func TestOwnOldLockSessionAfterAPartition(t *testing.T) {
	ctx := context.Background()
	srv := storetest.StartServer(t)
	u, _ := neturl.Parse(srv.NewDatabase(t))
	f := newFreezer(t, filepath.Join(u.Query().Get("host"), ".s.PGSQL.5432"))
	s, err := persistence.OpenPostgresNode(ctx, "postgres://akk@"+f.ln.Addr().String()+u.Path+"?sslmode=disable", "x")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func() error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return s.InTx(ctx, func(tx domain.Tx) error { return tx.PutSetting(ctx, "k", "v") })
	}
	if err := put(); err != nil {
		t.Fatal(err)
	}
	before := s.LockSession()
	f.freeze()
	deadline := time.Now().Add(40 * time.Second)
	for {
		// Written in a session that replaced the one from before.
		if now := s.LockSession(); now != 0 && now != before && put() == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon never wrote again in a new session after the partition: %v", put())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A read-only database (a standby, or transactions read-only by default):
// a write is store_unavailable, saying so, and CheckWritable (the
// doctor's) refuses; before, a write was an internal error and the
// doctor called the store writable.
func TestReadOnlyDatabaseIsUnavailable(t *testing.T) {
	ctx := context.Background()
	url := storetest.NewDatabase(t)
	s, err := persistence.OpenPostgresNode(ctx, url, "x")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := func() error { return s.InTx(ctx, func(tx domain.Tx) error { return tx.PutSetting(ctx, "k", "v") }) }
	if err := put(); err != nil {
		t.Fatal(err)
	}
	// Read-only from now on, and every session of the store's starts
	// again (from a connection of the test's own: a session of the store's
	// pool left alive would stay writable).
	admin, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET default_transaction_read_only = on', current_database()); END $$`); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := put()
		if domain.ErrorCode(err) == domain.CodeStoreUnavailable && strings.Contains(err.Error(), "read-only") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a write to a read-only database: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := s.CheckWritable(ctx); domain.ErrorCode(err) != domain.CodeStoreUnavailable {
		t.Fatalf("CheckWritable on a read-only database: %v", err)
	}
}
