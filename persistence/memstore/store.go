// Package memstore implements the domain's store ports in memory, with
// the semantics of the SQL store (package persistence): revisions compared
// and swapped, one holding Turn per endpoint, the outbox's claims and
// leases, the fences of answered prompts. The domain's tests run on it;
// the store contract tests (persistence) run it beside SQLite and
// PostgreSQL so it keeps to what they do.
//
// A transaction works on a copy of the state and replaces the state when
// it commits: readers see the last committed state, and a transaction
// whose function fails leaves nothing behind. Transactions run one at a
// time, as SQLite's writers do. Nothing here reads a clock or starts a
// goroutine.
package memstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"akk/domain"
	"akk/persistence"
)

// Store is the store in memory. The zero value is not usable: New.
type Store struct {
	write sync.Mutex // held by the one transaction running

	mu        sync.Mutex // guards data and listeners
	data      *state     // committed: never changed again, only replaced
	listeners []func(persistence.Change)
}

// New returns an empty store.
func New() *Store { return &Store{data: newState()} }

// state is every table. A transaction changes a clone: its maps are its
// own, its rows are values, and no slice of a committed row is written to.
type state struct {
	settings map[string]string
	hosts    map[string]hostRow
	events   []domain.Event // by id; Data is a json.RawMessage
	// lastEvent is the newest event id ever given (pruned ones included).
	lastEvent int64
	outbox    map[string]outboxRow
	attempts  map[string]int // notification id → attempts recorded
	// seq orders rows whose sort keys tie, in insertion order.
	seq      int64
	sessions map[string]domain.Session
	turns    map[string]domain.Turn
	changes  map[string][]domain.TurnChange
	offers   map[string]offerRow
	fences   map[string]fence
	watches  map[string]domain.Watch
	policies map[string][]byte // host id → its rules, as JSON
	push     map[string]domain.PushSubscription
	tokens   map[string]tokenRow
}

func newState() *state {
	return &state{settings: map[string]string{}, hosts: map[string]hostRow{}, outbox: map[string]outboxRow{},
		attempts: map[string]int{}, sessions: map[string]domain.Session{}, turns: map[string]domain.Turn{},
		changes: map[string][]domain.TurnChange{}, offers: map[string]offerRow{}, fences: map[string]fence{},
		watches: map[string]domain.Watch{}, policies: map[string][]byte{}, push: map[string]domain.PushSubscription{},
		tokens: map[string]tokenRow{}}
}

func (st *state) clone() *state {
	c := *st
	c.settings, c.hosts, c.outbox = maps.Clone(st.settings), maps.Clone(st.hosts), maps.Clone(st.outbox)
	c.attempts, c.sessions, c.turns = maps.Clone(st.attempts), maps.Clone(st.sessions), maps.Clone(st.turns)
	c.changes, c.offers, c.fences = maps.Clone(st.changes), maps.Clone(st.offers), maps.Clone(st.fences)
	c.watches, c.policies, c.push, c.tokens = maps.Clone(st.watches), maps.Clone(st.policies), maps.Clone(st.push), maps.Clone(st.tokens)
	// An append to the clone's events makes a new array.
	c.events = slices.Clip(st.events)
	return &c
}

// next returns the next insertion number.
func (st *state) next() int64 {
	st.seq++
	return st.seq
}

// committed is the state the last commit left.
func (s *Store) committed() *state {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data
}

// tx is one transaction: the state it changes, and what it tells
// listeners once it commits.
type tx struct {
	st     *state
	change persistence.Change
}

// InTx runs fn in one transaction: what fn wrote is kept only when it
// returns nil.
func (s *Store) InTx(ctx context.Context, fn func(domain.Tx) error) error {
	return s.update(ctx, func(t *tx) error { return fn(t) })
}

// update runs fn on a copy of the state and, when fn returns nil, makes
// the copy the state and tells the listeners.
func (s *Store) update(ctx context.Context, fn func(*tx) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	c, listeners, err := s.commit(fn)
	if err != nil {
		return err
	}
	if c.LastEventID != 0 || c.Notifications {
		for _, l := range listeners {
			l(c)
		}
	}
	return nil
}

// commit runs fn as the one transaction running and keeps its state when
// it returns nil; it returns what changed and who listens.
func (s *Store) commit(fn func(*tx) error) (persistence.Change, []func(persistence.Change), error) {
	s.write.Lock()
	defer s.write.Unlock()
	t := &tx{st: s.committed().clone()}
	if err := fn(t); err != nil {
		return persistence.Change{}, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.data = t.st
	return t.change, slices.Clone(s.listeners), nil
}

// OnChange registers fn to run after each commit that appended events or
// touched the outbox, as persistence.Store's does. fn must not block.
func (s *Store) OnChange(fn func(persistence.Change)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, fn)
}

// CheckWritable succeeds: memory is always writable.
func (s *Store) CheckWritable(ctx context.Context) error { return ctx.Err() }

// Close does nothing: the data stays for as long as the Store, so a test
// may use it again as a restarted daemon would reopen its database.
func (s *Store) Close() error { return nil }

// OperatorTokenKnown is false: a store in memory has no fleet.
func (s *Store) OperatorTokenKnown(ctx context.Context, hash string) (bool, error) { return false, nil }

// fresh fails when rows holds id already: a primary key taken.
func fresh[T any](what string, rows map[string]T, id string) error {
	if _, ok := rows[id]; ok {
		return fmt.Errorf("%s: %w", what, errExists)
	}
	return nil
}

// insertable fails when rows holds id already or hostID ("" for none)
// names no host.
func insertable[T any](st *state, what string, rows map[string]T, id, hostID string) error {
	return cmp.Or(fresh(what, rows, id), st.needHost(what, hostID))
}

// atRevision returns the row id of rows if it is at revision rev, and
// domain.ErrRevisionConflict if it is not or there is none.
func atRevision[T any](rows map[string]T, id string, rev int64, revision func(T) int64) (T, error) {
	r, ok := rows[id]
	if !ok || revision(r) != rev {
		return r, domain.ErrRevisionConflict
	}
	return r, nil
}

// errExists is a primary or unique key taken.
var errExists = errors.New("UNIQUE constraint failed")

// errMissing is a reference to a row that is not there.
var errMissing = errors.New("FOREIGN KEY constraint failed")

// utc is how a time is kept: in UTC, without its monotonic reading (the
// SQL store keeps the instant as text).
func utc(t time.Time) time.Time { return t.UTC() }

// The ports it implements.
var (
	_ domain.Store      = (*Store)(nil)
	_ domain.PushReader = (*Store)(nil)
	_ domain.Tx         = (*tx)(nil)
	_ domain.PushTx     = (*tx)(nil)
)
