package persistence

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"akk/domain"
)

// dialect is the SQL engine under the store. The queries are written once,
// in the SQL both engines share, with ? placeholders; the few places where
// the engines differ ask the dialect.
type dialect int

const (
	sqliteSQL dialect = iota
	postgresSQL
)

// writeLock is the PostgreSQL advisory lock every write transaction takes:
// writes are serialized as SQLite's one writer serializes them, so both
// engines give the store's transactions the same guarantees.
const writeLock = 0x616b6b01

// daemonLock is the first key of the PostgreSQL advisory lock a daemon
// holds for as long as it runs on the database as one node (the second is
// its name's hash), as akkd.lock holds a state directory.
const daemonLock = 0x616b6b02

// migrationLock is the second key of the lock daemons migrate under (a
// node's lock is (daemonLock, a hash of its name)).
const migrationLock = 0x6d696772

// db is a pool that speaks the store's SQL: on PostgreSQL it numbers the
// placeholders and takes the write lock in every write transaction.
type db struct {
	*sql.DB
	d dialect
}

// sqlTx is a transaction of db.
type sqlTx struct {
	*sql.Tx
	d dialect
}

func (c *db) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := c.DB.ExecContext(ctx, c.d.bind(q), args...)
	return res, c.d.classify(err)
}

func (c *db) QueryContext(ctx context.Context, q string, args ...any) (*rows, error) {
	r, err := c.DB.QueryContext(ctx, c.d.bind(q), args...)
	if err != nil {
		return nil, c.d.classify(err)
	}
	return &rows{Rows: r, d: c.d}, nil
}

// rows are a query's rows; Scan and Err name an unreachable store (a
// connection lost while the rows are read).
type rows struct {
	*sql.Rows
	d dialect
}

func (r *rows) Scan(dest ...any) error { return r.d.classify(r.Rows.Scan(dest...)) }
func (r *rows) Err() error             { return r.d.classify(r.Rows.Err()) }

func (c *db) QueryRowContext(ctx context.Context, q string, args ...any) *row {
	return &row{Row: c.DB.QueryRowContext(ctx, c.d.bind(q), args...), d: c.d}
}

// row is one row of a query; its Scan names an unreachable store.
type row struct {
	*sql.Row
	d dialect
}

func (r *row) Scan(dest ...any) error { return r.d.classify(r.Row.Scan(dest...)) }

// BeginTx begins a write transaction (immediate on SQLite; holding the
// write lock on PostgreSQL).
func (c *db) BeginTx(ctx context.Context, opts *sql.TxOptions) (*sqlTx, error) {
	return c.beginTx(ctx, opts, true)
}

// beginTx begins a transaction; on PostgreSQL with ordered it takes the
// write lock (a transaction that appends events must; one that only
// compares-and-swaps a row needs no more than the row's own lock).
func (c *db) beginTx(ctx context.Context, opts *sql.TxOptions, ordered bool) (*sqlTx, error) {
	t, err := c.DB.BeginTx(ctx, opts)
	if err != nil {
		return nil, c.d.classify(err)
	}
	if c.d == postgresSQL && ordered {
		if _, err := t.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(writeLock)); err != nil {
			t.Rollback()
			return nil, c.d.classify(err)
		}
	}
	return &sqlTx{Tx: t, d: c.d}, nil
}

func (t *sqlTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	res, err := t.Tx.ExecContext(ctx, t.d.bind(q), args...)
	return res, t.d.classify(err)
}

func (t *sqlTx) QueryContext(ctx context.Context, q string, args ...any) (*rows, error) {
	r, err := t.Tx.QueryContext(ctx, t.d.bind(q), args...)
	if err != nil {
		return nil, t.d.classify(err)
	}
	return &rows{Rows: r, d: t.d}, nil
}

func (t *sqlTx) QueryRowContext(ctx context.Context, q string, args ...any) *row {
	return &row{Row: t.Tx.QueryRowContext(ctx, t.d.bind(q), args...), d: t.d}
}

// Commit commits; a store that cannot be reached is named as such (the
// commit's outcome is then unknown: the callers' fences hold either way).
func (t *sqlTx) Commit() error { return t.d.classify(t.Tx.Commit()) }

var bound sync.Map // query → its PostgreSQL form

// bind numbers the ? placeholders ($1, $2, ...) for PostgreSQL. The
// store's queries hold no ? inside a string literal.
func (d dialect) bind(q string) string {
	if d != postgresSQL || !strings.Contains(q, "?") {
		return q
	}
	if b, ok := bound.Load(q); ok {
		return b.(string)
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	bound.Store(q, b.String())
	return b.String()
}

// ErrStoreUnavailable is the cause of every store error that means the
// database cannot be reached (PostgreSQL stopped, restarting or out of
// reach); the domain error around it has the code store_unavailable.
var ErrStoreUnavailable = errors.New("the store cannot be reached")

// classify names an error that means the database cannot be reached (a
// connection refused, lost or closed by a shutting-down server) as
// store_unavailable; others are returned as they are. SQLite, a file, is
// never unreachable.
func (d dialect) classify(err error) error {
	if err == nil || d != postgresSQL {
		return err
	}
	if readOnly(err) {
		return &domain.Error{Code: domain.CodeStoreUnavailable, Message: "the store (PostgreSQL) is read-only (a standby, or transactions read-only by default): nothing was written; point --store at the primary",
			Err: fmt.Errorf("%w: %w", ErrStoreUnavailable, err)}
	}
	if !unreachable(err) {
		return err
	}
	return &domain.Error{Code: domain.CodeStoreUnavailable, Message: "the store (PostgreSQL) cannot be reached; try again when it is back",
		Err: fmt.Errorf("%w: %w", ErrStoreUnavailable, err)}
}

// readOnly: PostgreSQL refused a write because the database or the
// transaction is read-only (25006), a standby included.
func readOnly(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "25006"
}

func unreachable(err error) bool {
	var de *domain.Error
	if errors.As(err, &de) {
		return false // classified already, or the domain's own
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		// 08: connection exception; 57P: the server is shutting down or
		// starting (admin_shutdown, crash_shutdown, cannot_connect_now).
		return strings.HasPrefix(pg.Code, "08") || strings.HasPrefix(pg.Code, "57P")
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &ne) || strings.Contains(err.Error(), "conn closed")
}

// jsonStrings is a subquery of the strings of a JSON array given as one
// parameter.
func (d dialect) jsonStrings() string {
	if d == postgresSQL {
		return `SELECT json_array_elements_text(CAST(? AS json))`
	}
	return `SELECT value FROM json_each(?)`
}

// greatest is the larger of two values.
func (d dialect) greatest(a, b string) string {
	if d == postgresSQL {
		return "GREATEST(" + a + ", " + b + ")"
	}
	return "max(" + a + ", " + b + ")"
}

// uniqueViolation reports whether err broke the unique index named index
// (of table).
func (d dialect) uniqueViolation(err error, table, index, column string) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23505" && pg.ConstraintName == index
	}
	return strings.Contains(err.Error(), "UNIQUE constraint failed: "+table+"."+column)
}

var (
	autoincrement = regexp.MustCompile(`(?i)\bINTEGER PRIMARY KEY AUTOINCREMENT\b`)
	integerType   = regexp.MustCompile(`\bINTEGER\b`)
	blobType      = regexp.MustCompile(`\bBLOB\b`)
	textType      = regexp.MustCompile(`\bTEXT\b`)
)

// migration turns a migration written for SQLite into this engine's: on
// PostgreSQL integers are 64-bit, an autoincrement key an identity, a blob
// bytea, and text compares bytewise (stored times sort as text).
func (d dialect) migration(body string) string {
	if d != postgresSQL {
		return body
	}
	body = autoincrement.ReplaceAllString(body, "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY")
	body = integerType.ReplaceAllString(body, "BIGINT")
	body = blobType.ReplaceAllString(body, "BYTEA")
	body = textType.ReplaceAllString(body, `TEXT COLLATE "C"`)
	return body
}

// dbNow is the time by the database's clock on PostgreSQL, where the
// nodes of a fleet judge liveness and leases on the one clock they share
// (their own may run apart); on SQLite, a daemon on its own, it is local.
func (t *sqlTx) dbNow(ctx context.Context, local time.Time) (time.Time, error) {
	if t.d != postgresSQL {
		return local, nil
	}
	var now time.Time
	if err := t.QueryRowContext(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		return time.Time{}, err
	}
	return now.UTC(), nil
}

// dbClock is dbNow and when the PostgreSQL server last started (the zero
// time on SQLite), in one round trip.
func (t *sqlTx) dbClock(ctx context.Context, local time.Time) (now, started time.Time, err error) {
	if t.d != postgresSQL {
		return local, time.Time{}, nil
	}
	err = t.QueryRowContext(ctx, `SELECT clock_timestamp(), pg_postmaster_start_time()`).Scan(&now, &started)
	return now.UTC(), started.UTC(), err
}
