// Package persistence implements the domain Store port on SQLite (WAL,
// immediate write transactions, one writer connection and a read pool) or
// on PostgreSQL (write transactions serialized by an advisory lock), with
// the same queries and embedded numbered migrations on both.
package persistence

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"akk/domain"
)

//go:embed migrations/*.sql
var migrations embed.FS

// timeLayout is fixed-width so stored times sort as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

func ts(t time.Time) string { return t.UTC().Format(timeLayout) }

func nullTS(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return ts(t)
}

func parseTS(s sql.NullString) time.Time {
	if !s.Valid || s.String == "" {
		return time.Time{}
	}
	t, err := time.Parse(timeLayout, s.String)
	if err != nil {
		return time.Time{}
	}
	return t
}

// Store is the store, on SQLite or PostgreSQL.
type Store struct {
	w, r *db
	d    dialect
	held *holder // PostgreSQL: the session holding this node's lock
	node string  // the fleet node this daemon is ('' on its own)
	url  string  // PostgreSQL: the database's URL (for LISTEN)

	mu        sync.Mutex
	listeners []func(Change)
}

// Change tells listeners what a committed transaction added.
type Change struct {
	LastEventID   int64 // 0 when no event was appended
	Notifications bool  // outbox rows were added or rescheduled
	// Revoked are hosts whose token was rotated or that were removed (for
	// the other nodes of a fleet: Listen; this one ended their
	// credentials' streams and sessions itself).
	Revoked []string
}

// Open opens (creating if needed) the database at path and migrates it.
func Open(ctx context.Context, path string) (*Store, error) {
	// Owner-only before SQLite first opens it: its -wal and -shm files take
	// the database file's permissions.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, fmt.Errorf("secure the database file: %w", err)
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "on")
	// FULL: each commit is on disk before it is acknowledged. In WAL mode
	// NORMAL may lose the last commits on a power loss (README: the cost).
	q.Set("_synchronous", "FULL")
	base := "file:" + path + "?"
	wq := url.Values{}
	for k, v := range q {
		wq[k] = v
	}
	wq.Set("_txlock", "immediate")
	wdb, err := sql.Open("sqlite3", base+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetConnMaxIdleTime(0)
	if err := wdb.PingContext(ctx); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	rdb, err := sql.Open("sqlite3", base+q.Encode())
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	rdb.SetMaxOpenConns(4)
	s := &Store{w: &db{DB: wdb}, r: &db{DB: rdb}}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the pools.
func (s *Store) Close() error {
	if s.d == postgresSQL {
		var err error
		if s.held != nil {
			err = s.held.close()
		}
		return errors.Join(err, s.w.Close())
	}
	return errors.Join(s.r.Close(), s.w.Close())
}

// OnChange registers fn to run after each commit that appended events or
// touched the outbox. fn must not block.
func (s *Store) OnChange(fn func(Change)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, fn)
}

func (s *Store) changed(c Change) {
	if c.LastEventID == 0 && !c.Notifications {
		return
	}
	s.mu.Lock()
	ls := append([]func(Change){}, s.listeners...)
	s.mu.Unlock()
	for _, fn := range ls {
		fn(c)
	}
}

// On PostgreSQL the nodes of a fleet may start at once on an empty
// database: each migrates under one advisory lock (migrationLock), so one
// applies what the others then find applied. A database migrated by a
// newer akkd than this one is refused (ErrSchemaNewer): this binary would
// answer wrongly at run time.
func (s *Store) migrate(ctx context.Context) error {
	if s.d == postgresSQL {
		conn, err := s.w.Conn(ctx)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1, $2)`, int32(daemonLock), int32(migrationLock)); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, $2)`, int32(daemonLock), int32(migrationLock))
	}
	if _, err := s.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	known := 0
	for _, name := range names {
		num, _, _ := strings.Cut(strings.TrimPrefix(name, "migrations/"), "_")
		if v, err := strconv.Atoi(num); err == nil && v > known {
			known = v
		}
	}
	var newest sql.NullInt64
	var newestName sql.NullString
	if err := s.w.QueryRowContext(ctx, `SELECT version, name FROM schema_migrations ORDER BY version DESC LIMIT 1`).Scan(&newest, &newestName); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	if int(newest.Int64) > known {
		return fmt.Errorf("%w: the database is at migration %d (%s), this akkd knows up to %d; run the newer akkd (every node of a fleet on the same version)",
			ErrSchemaNewer, newest.Int64, newestName.String, known)
	}
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil {
			return fmt.Errorf("migration %s: name must start with a number and _", base)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		tx, err := s.w.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migration %s: %w", base, err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ?`, version).Scan(&n); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", base, err)
		}
		if n > 0 {
			tx.Rollback()
			continue
		}
		if _, err := tx.ExecContext(ctx, s.d.migration(string(body))); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", base, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)`,
			version, base, ts(time.Now())); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", base, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %s: %w", base, err)
		}
	}
	return nil
}

// ErrSchemaNewer: the database was migrated by a newer akkd.
var ErrSchemaNewer = errors.New("the database's schema is newer than this akkd")

// CheckWritable begins an immediate transaction (taking the write lock) and
// rolls it back.
//
// On PostgreSQL it also asks whether the transaction may write (a standby
// or a read-only default refuses every write).
func (s *Store) CheckWritable(ctx context.Context) error {
	t, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer t.Rollback()
	if s.d == postgresSQL {
		var ro string
		if err := t.QueryRowContext(ctx, `SELECT current_setting('transaction_read_only')`).Scan(&ro); err != nil {
			return err
		}
		if ro == "on" {
			return &domain.Error{Code: domain.CodeStoreUnavailable, Message: "the store (PostgreSQL) is read-only (a standby, or transactions read-only by default): nothing can be written; point --store at the primary",
				Err: ErrStoreUnavailable}
		}
	}
	return nil
}

// begin begins a write transaction; on PostgreSQL it also proves that this
// daemon still holds the database.
func (s *Store) begin(ctx context.Context) (*sqlTx, error) { return s.beginTx(ctx, true) }

func (s *Store) beginTx(ctx context.Context, ordered bool) (*sqlTx, error) {
	t, err := s.w.beginTx(ctx, nil, ordered)
	if err != nil {
		return nil, err
	}
	if s.held != nil {
		if err := s.held.checkHeld(ctx, t); err != nil {
			t.Rollback()
			return nil, err
		}
	}
	return t, nil
}

// InTx runs fn in one immediate write transaction.
func (s *Store) InTx(ctx context.Context, fn func(domain.Tx) error) error {
	return s.inTx(ctx, true, fn)
}

// inTx runs fn in one write transaction: on PostgreSQL one that appends no
// event and only compares-and-swaps rows may leave out the write lock
// (ordered false), so it does not wait behind, or hold up, every other.
func (s *Store) inTx(ctx context.Context, ordered bool, fn func(domain.Tx) error) error {
	sqlTx, err := s.beginTx(ctx, ordered)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	t := &tx{tx: sqlTx, d: s.d, node: s.node}
	if err := fn(t); err != nil {
		sqlTx.Rollback()
		return err
	}
	if err := s.announce(ctx, t); err != nil {
		sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.changed(t.change)
	return nil
}

type tx struct {
	tx     *sqlTx
	d      dialect
	node   string
	change Change
}

// querier is what reads need from *sql.DB and *sql.Tx alike.
type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *row
	QueryContext(ctx context.Context, q string, args ...any) (*rows, error)
}
