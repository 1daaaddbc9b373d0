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
	// oldPID and oldBorn name the session that held the lock before the
	// last outage: this daemon's own, should it outlive the outage.
	oldPID  int64
	oldBorn time.Time
	lost    bool // another daemon took the database meanwhile

	started bool // keep runs
	closing sync.Once

	stop chan struct{}
	done chan struct{}
}

// StartLockWait bounds how long a starting daemon waits for a silent
// holder of its node's lock to be taken for gone (StaleLockAfter).
const StartLockWait = 30 * time.Second

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
	if err := s.held.takeAtStart(ctx, pool, node, StartLockWait); err != nil {
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

// take takes daemonLock in a session of its own. The session's TCP
// keepalives and user timeout make PostgreSQL end it, and so free the
// lock, within about half a minute of the daemon's machine going away
// without closing its connection (its kernel's defaults keep such a
// session two hours). When another session holds the lock, take says
// whose, and whether its daemon still lives (see holderOf).
func (h *holder) take(ctx context.Context, pool *sql.DB) error {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	for _, set := range lockSessionSettings {
		if _, err := conn.ExecContext(ctx, set); err != nil {
			conn.Close()
			return fmt.Errorf("lock the database: %s: %w", set, err)
		}
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
		defer conn.Close()
		other, err := holderOf(ctx, conn, h.key)
		if errors.Is(err, sql.ErrNoRows) {
			// The holder let go between the try and the look: a closing
			// daemon's session ends a moment after its client closed it.
			return errLockJustFreed
		}
		if err != nil {
			return fmt.Errorf("%w (who holds it: %v)", ErrDatabaseInUse, err)
		}
		return other
	}
	h.mu.Lock()
	h.conn, h.pid, h.born = conn, pid, born
	h.oldPID, h.oldBorn = pid, born
	h.mu.Unlock()
	return nil
}

// errLockJustFreed is take's answer when the lock was held at its try and
// free by its look at the holder: the caller tries again.
var errLockJustFreed = errors.New("the node's lock was let go while being taken; try again")

// lockSessionSettings make PostgreSQL drop the lock's session once its
// peer is gone: probes after 10 s idle, every 5 s, 3 unanswered; and 20 s
// for data sent and never acknowledged (the keeper's pings keep the
// session busy, so this one usually decides). They do nothing on a Unix
// socket, where a dead peer closes the connection at once.
var lockSessionSettings = []string{
	"SET tcp_keepalives_idle = 10",
	"SET tcp_keepalives_interval = 5",
	"SET tcp_keepalives_count = 3",
	"SET tcp_user_timeout = 20000",
}

// StaleLockAfter is how long the session holding a node's lock may go
// without a request before its daemon is taken for gone: a live daemon's
// keeper pings it every second.
var StaleLockAfter = 15 * time.Second

// LockHeld is why a daemon could not take its node's lock: the session
// that holds it, and whether that session's daemon still lives. It is an
// ErrDatabaseInUse.
type LockHeld struct {
	Node   string
	PID    int64
	Client string        // the holding session's client address ("local" on a Unix socket)
	Quiet  time.Duration // how long the holding session has sent nothing, by the database's clock
	// seen is the holding session's last request (its state_change), zero
	// when this role cannot see it; live is set once it was seen to move.
	seen time.Time
	live bool
	born time.Time // the holding session's start
}

func (e *LockHeld) Error() string {
	if e.seen.IsZero() {
		return fmt.Sprintf("node %q's lock is held by a session of another database role (backend pid %d): give each daemon a --node of its own, or end that session",
			e.Node, e.PID)
	}
	if !e.Stale() {
		return fmt.Sprintf("another akkd runs on this database as node %q: its session from %s (backend pid %d) holds the node's lock and answered %s ago; give each daemon a --node of its own",
			e.Node, e.Client, e.PID, e.Quiet.Round(time.Second))
	}
	return fmt.Sprintf("node %q's lock is held by a database session from %s (backend pid %d) that has sent nothing for %s: its daemon is gone (a machine that died without closing its connection). PostgreSQL drops such a session once its keepalives fail; to free the lock now, run SELECT pg_terminate_backend(%d) as a role allowed to",
		e.Node, e.Client, e.PID, e.Quiet.Round(time.Second), e.PID)
}

func (e *LockHeld) Is(target error) bool { return target == ErrDatabaseInUse }

// Stale reports whether the holder's daemon is gone: its session has
// sent nothing for StaleLockAfter.
func (e *LockHeld) Stale() bool { return !e.live && !e.seen.IsZero() && e.Quiet >= StaleLockAfter }

// holderOf reads who holds the node lock key, by the database's clock.
func holderOf(ctx context.Context, conn *sql.Conn, key int32) (*LockHeld, error) {
	e := &LockHeld{}
	// Another role's session shows no state_change (nor client): it is
	// taken for live, never ended.
	var quietMS sql.NullFloat64
	var seen, born sql.NullTime
	err := conn.QueryRowContext(ctx, `SELECT a.pid,
		COALESCE(host(a.client_addr), CASE WHEN a.state_change IS NULL THEN 'another role' ELSE 'local' END),
		EXTRACT(EPOCH FROM clock_timestamp() - a.state_change) * 1000, a.state_change, a.backend_start
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::int4::oid AND l.objid = $2::int4::oid AND l.objsubid = 2`,
		int32(daemonLock), key).Scan(&e.PID, &e.Client, &quietMS, &seen, &born)
	if err != nil {
		return nil, err
	}
	e.Quiet = time.Duration(quietMS.Float64) * time.Millisecond
	e.seen, e.born = seen.Time, born.Time
	return e, nil
}

// takeAtStart takes the lock as a daemon starts. A holder whose session
// makes a request meanwhile (a live daemon's keeper pings every second),
// or that this role cannot see, is refused at once. One whose session
// stays silent is waited for until it has been silent StaleLockAfter:
// its daemon is gone (a machine that died without closing the
// connection), so its session is ended and the lock taken. A node whose
// machine died hard so starts again within StaleLockAfter rather than
// when PostgreSQL gives up on the old session. wait bounds it all.
func (h *holder) takeAtStart(ctx context.Context, pool *sql.DB, node string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	var first *LockHeld
	for {
		err := h.take(ctx, pool)
		var held *LockHeld
		if errors.Is(err, errLockJustFreed) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if !errors.As(err, &held) {
			return err
		}
		held.Node = node
		switch {
		case held.seen.IsZero():
			return held
		case first == nil || first.PID != held.PID:
			first = held
		case !held.seen.Equal(first.seen):
			held.live = true
			return held
		}
		if time.Now().After(deadline) {
			return held
		}
		if held.Stale() {
			var ended bool
			if err := pool.QueryRowContext(ctx, `SELECT pg_terminate_backend($1)`, held.PID).Scan(&ended); err != nil {
				slog.Warn("the node's lock is held by a gone daemon's session; ending it was refused, waiting for PostgreSQL to drop it",
					"node", node, "backend_pid", held.PID, "client", held.Client, "err", err)
			} else if ended {
				slog.Warn("ended a gone daemon's database session that held this node's lock", "node", node,
					"backend_pid", held.PID, "client", held.Client, "silent_for", held.Quiet.Round(time.Second).String())
			}
		} else if first == held {
			slog.Info("this node's lock is held by a session that has been silent; waiting to see whether its daemon lives",
				"node", node, "backend_pid", held.PID, "client", held.Client, "silent_for", held.Quiet.Round(time.Second).String())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
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
		var held *LockHeld
		if errors.As(err, &held) && held.PID == h.oldPID && held.born.Equal(h.oldBorn) {
			// This daemon's own session from before the outage: PostgreSQL
			// has not noticed it is gone (a partition swallowed its close).
			// It is ended, and the lock taken at the next tick.
			pool.ExecContext(ctx, `SELECT pg_terminate_backend($1)`, held.PID)
			cancel()
			continue
		}
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
