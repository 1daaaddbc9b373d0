package persistence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// ErrDatabaseInUse: another daemon runs on this PostgreSQL database.
var ErrDatabaseInUse = errors.New("another akkd runs on this database")

// IsPostgresURL reports whether store names a PostgreSQL database.
func IsPostgresURL(store string) bool {
	return strings.HasPrefix(store, "postgres://") || strings.HasPrefix(store, "postgresql://")
}

// OpenPostgres opens the PostgreSQL database at url (a postgres:// URL),
// migrates it and takes it for this daemon: a second daemon on the same
// database is refused with ErrDatabaseInUse until this one closes it (one
// daemon per database, as one per state directory).
func OpenPostgres(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("store URL: %w", err)
	}
	pool := sql.OpenDB(stdlib.GetConnector(*cfg))
	pool.SetMaxOpenConns(8)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	held, err := pool.Conn(ctx)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	var got bool
	if err := held.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, int64(daemonLock)).Scan(&got); err != nil {
		held.Close()
		pool.Close()
		return nil, fmt.Errorf("lock the database: %w", err)
	}
	if !got {
		held.Close()
		pool.Close()
		return nil, ErrDatabaseInUse
	}
	c := &db{DB: pool, d: postgresSQL}
	s := &Store{w: c, r: c, d: postgresSQL, held: held}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}
