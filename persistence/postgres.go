package persistence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"akk/domain"
)

// ErrDatabaseInUse: another daemon runs on this PostgreSQL database under
// the same node name.
var ErrDatabaseInUse = errors.New("another akkd runs on this database as the same node (give each a --node of its own)")

// IsPostgresURL reports whether store names a PostgreSQL database.
func IsPostgresURL(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// holder is the session that holds daemonLock for this daemon. PostgreSQL
// ends the lock with the session (a restart, a broken connection), so
// every write transaction checks that this session still holds it, and a
// keeper takes it again once the database is back.
type holder struct {
	key  int32 // the node's lock (daemonLock, key): one daemon per node name
	mu   sync.Mutex
	conn *sql.Conn
	pid  int64 // the session's backend pid; 0 while not held
	// born is when that backend started: with the pid it names the
	// session (a pid alone may be reused after a restart).
	born time.Time
	lost bool // another daemon took the database meanwhile

	started bool // keep runs
	closing sync.Once

	stop chan struct{}
	done chan struct{}
}

// OpenPostgres opens the PostgreSQL database at url as the node "".
func OpenPostgres(ctx context.Context, url string) (*Store, error) {
	return OpenPostgresNode(ctx, url, "")
}

// OpenPostgresNode opens the PostgreSQL database at url (a postgres://
// URL), migrates it and takes it for this daemon as the fleet node named
// node: a second daemon with the same node name on the same database is
// refused with ErrDatabaseInUse until this one closes it (one daemon per
// node, as one per state directory).
func OpenPostgresNode(ctx context.Context, url, node string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store URL: %w", err)
	}
	pool := sql.OpenDB(stdlib.GetConnector(*cfg))
	pool.SetMaxOpenConns(8)
	// Every connection stays open: a new one is a new PostgreSQL backend,
	// whose first statements are parsed with cold caches (milliseconds each).
	pool.SetMaxIdleConns(8)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	c := &db{DB: pool, d: postgresSQL}
	s := &Store{w: c, r: c, d: postgresSQL, node: node, url: url,
		held: &holder{key: nodeLockKey(node), stop: make(chan struct{}), done: make(chan struct{})}}
	if err := s.held.take(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	s.held.started = true
	go s.held.keep(pool)
	if err := s.adoptOwnerless(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// adoptOwnerless makes the Turns and Watches a daemon wrote before it was a
// node of a fleet (no node named) this node's, so they are monitored again.
func (s *Store) adoptOwnerless(ctx context.Context) error {
	t, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer t.Rollback()
	for _, table := range []string{"turns", "watches"} {
		if _, err := t.ExecContext(ctx, `UPDATE `+table+` SET node = ? WHERE node = ''`, s.node); err != nil {
			return fmt.Errorf("adopt %s: %w", table, err)
		}
	}
	return t.Commit()
}

// take takes daemonLock in a session of its own.
func (h *holder) take(ctx context.Context, pool *sql.DB) error {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	var got bool
	var pid int64
	var born time.Time
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1, $2), pg_backend_pid(),
		(SELECT backend_start FROM pg_stat_get_activity(pg_backend_pid()))`, int32(daemonLock), h.key).Scan(&got, &pid, &born); err != nil {
		conn.Close()
		return fmt.Errorf("lock the database: %w", err)
	}
	if !got {
		conn.Close()
		return ErrDatabaseInUse
	}
	h.mu.Lock()
	h.conn, h.pid, h.born = conn, pid, born
	h.mu.Unlock()
	return nil
}

// keep checks the holding session every second and, once it is gone, takes
// the lock again in a new one when the database answers. If another daemon
// took it meanwhile, this one writes nothing more.
func (h *holder) keep(pool *sql.DB) {
	defer close(h.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-tick.C:
		}
		h.mu.Lock()
		conn, lost := h.conn, h.lost
		h.mu.Unlock()
		if lost {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if conn != nil && conn.PingContext(ctx) == nil {
			cancel()
			continue
		}
		if conn != nil {
			conn.Close()
			h.mu.Lock()
			h.conn, h.pid = nil, 0
			h.mu.Unlock()
		}
		err := h.take(ctx, pool)
		cancel()
		if errors.Is(err, ErrDatabaseInUse) {
			h.mu.Lock()
			h.lost = true
			h.mu.Unlock()
			slog.Error("another akkd took this node's name on the database while it was out of reach: this daemon writes nothing more; stop it")
			return
		}
	}
}

// pidHolding is the session that holds the lock now, or why there is none.
func (h *holder) pidHolding() (int64, time.Time, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lost {
		return 0, time.Time{}, &domain.Error{Code: domain.CodeStoreUnavailable, Message: "another akkd took this node's name on the database; this daemon writes nothing", Err: ErrDatabaseInUse}
	}
	if h.pid == 0 {
		return 0, time.Time{}, &domain.Error{Code: domain.CodeStoreUnavailable, Message: "the store (PostgreSQL) is back but not yet this daemon's again; try again in a moment", Err: ErrStoreUnavailable}
	}
	return h.pid, h.born, nil
}

// checkHeld proves, inside a write transaction, that this daemon's session
// still holds the database: no write happens while another daemon may. A
// session-level advisory lock ends only with its session (the holding
// connection is used for nothing else), so the session still running
// proves the lock held: one backend's row, rather than pg_locks, which
// copies the whole lock table on every write.
func (h *holder) checkHeld(ctx context.Context, t *sqlTx) error {
	pid, born, err := h.pidHolding()
	if err != nil {
		return err
	}
	var n int
	if err := t.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_get_activity(?) WHERE backend_start = ?`, pid, born).Scan(&n); err != nil {
		return err
	}
	if n != 1 {
		return &domain.Error{Code: domain.CodeStoreUnavailable, Message: "the store (PostgreSQL) is back but not yet this daemon's again; try again in a moment", Err: ErrStoreUnavailable}
	}
	return nil
}

// nodeLockKey is the second key of a node's lock: a hash of its name.
func nodeLockKey(node string) int32 {
	h := fnv.New32a()
	h.Write([]byte(node))
	return int32(h.Sum32())
}

// close stops the keeper and ends the session (and so the lock). A second
// close does nothing.
func (h *holder) close() error {
	h.closing.Do(func() { close(h.stop) })
	if h.started {
		<-h.done
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn != nil {
		err := h.conn.Close()
		h.conn, h.pid = nil, 0
		return err
	}
	return nil
}
