package persistence

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// Node is one daemon of a fleet, as its heartbeat last recorded it.
type Node struct {
	Name         string
	AdvertiseURL string
	Version      string
	StartedAt    time.Time
	LastSeen     time.Time
	// OperatorTokenHash is the hash of the node's operator token.
	OperatorTokenHash string
	// Endpoints are the public ids (conversations, terminals) the node saw
	// at its last look; Conversations its rows then (JSON, operator view).
	Endpoints     []string
	Conversations json.RawMessage
	// ServerStarted is when the database server last started
	// (PostgreSQL): no node could heartbeat while it was down.
	ServerStarted time.Time
}

// NodeName is the fleet node this store was opened as (” on its own).
func (s *Store) NodeName() string { return s.node }

// Fleet reports whether the store is shared by a fleet (PostgreSQL).
func (s *Store) Fleet() bool { return s.d == postgresSQL }

// Heartbeat records n (this node) as seen now, and returns that time:
// on PostgreSQL the database's clock, so that every node judges liveness
// and leases on one clock whatever its own says (n.LastSeen is used on
// SQLite, which has no fleet). Endpoints and conversations are recorded
// only when n.Conversations is set.
func (s *Store) Heartbeat(ctx context.Context, n Node) (time.Time, error) {
	t, err := s.begin(ctx)
	if err != nil {
		return time.Time{}, err
	}
	defer t.Rollback()
	if n.LastSeen, err = t.dbNow(ctx, n.LastSeen); err != nil {
		return time.Time{}, fmt.Errorf("heartbeat: %w", err)
	}
	eps, _ := json.Marshal(append([]string{}, n.Endpoints...))
	if _, err := t.ExecContext(ctx, `INSERT INTO nodes(name, advertise_url, version, started_at, last_seen, operator_token_hash)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET advertise_url = excluded.advertise_url,
		version = excluded.version, started_at = excluded.started_at, last_seen = excluded.last_seen,
		operator_token_hash = excluded.operator_token_hash`,
		n.Name, n.AdvertiseURL, n.Version, ts(n.StartedAt), ts(n.LastSeen), n.OperatorTokenHash); err != nil {
		return time.Time{}, fmt.Errorf("heartbeat: %w", err)
	}
	if n.Conversations != nil {
		if _, err := t.ExecContext(ctx, `UPDATE nodes SET endpoints = ?, conversations = ? WHERE name = ?`,
			string(eps), string(n.Conversations), n.Name); err != nil {
			return time.Time{}, fmt.Errorf("heartbeat: %w", err)
		}
	}
	return n.LastSeen, t.Commit()
}

// RemoveNode deletes the named node's row if it has not heartbeat since
// before, and reports whether it did (a node that heartbeat meanwhile
// stays).
func (s *Store) RemoveNode(ctx context.Context, name string, before time.Time) (bool, error) {
	t, err := s.begin(ctx)
	if err != nil {
		return false, err
	}
	defer t.Rollback()
	res, err := t.ExecContext(ctx, `DELETE FROM nodes WHERE name = ? AND last_seen < ?`, name, ts(before))
	if err != nil {
		return false, fmt.Errorf("remove node: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, t.Commit()
}

// Nodes lists the fleet's nodes by name.
func (s *Store) Nodes(ctx context.Context) ([]Node, error) {
	server := "NULL"
	if s.d == postgresSQL {
		server = "pg_postmaster_start_time()"
	}
	rows, err := s.r.QueryContext(ctx, `SELECT name, advertise_url, version, started_at, last_seen, operator_token_hash,
		endpoints, conversations, `+server+` FROM nodes ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	defer rows.Close()
	var out []Node
	for rows.Next() {
		var n Node
		var started, seen sql.NullString
		var eps, convs string
		var server sql.NullTime
		if err := rows.Scan(&n.Name, &n.AdvertiseURL, &n.Version, &started, &seen, &n.OperatorTokenHash, &eps, &convs, &server); err != nil {
			return nil, fmt.Errorf("list nodes: %w", s.d.classify(err))
		}
		n.StartedAt, n.LastSeen, n.ServerStarted = parseTS(started), parseTS(seen), server.Time
		_ = json.Unmarshal([]byte(eps), &n.Endpoints)
		n.Conversations = json.RawMessage(convs)
		out = append(out, n)
	}
	return out, s.d.classify(rows.Err())
}

// OperatorTokenKnown implements domain.Store: hash is the operator token
// hash of a live node (one that heartbeat within NodeTimeout by the
// database's clock). A stopped or removed node's token opens nothing.
func (s *Store) OperatorTokenKnown(ctx context.Context, hash string) (bool, error) {
	if s.d != postgresSQL || hash == "" {
		return false, nil
	}
	var n int
	if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM nodes WHERE operator_token_hash = ?
		AND last_seen >= to_char((clock_timestamp() - interval '1 millisecond' * ?) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"000Z"')`,
		hash, NodeTimeout.Milliseconds()).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// OwnerOf returns the node that owns the Turn or Watch id (by its table:
// "turns", "watches"), a session's terminal ("sessions") or the host of a
// Turn ("turn_hosts"), and whether there is such a record.
func (s *Store) OwnerOf(ctx context.Context, table, id string) (string, bool, error) {
	var q string
	switch table {
	case "turns":
		q = `SELECT node FROM turns WHERE turn_id = ?`
	case "watches":
		q = `SELECT node FROM watches WHERE watch_id = ?`
	case "sessions":
		q = `SELECT terminal_id FROM sessions WHERE session_id = ?`
	case "turn_hosts":
		q = `SELECT host_id FROM turns WHERE turn_id = ?`
	case "action_tokens": // by the token's hash: the node that owns its Turn
		q = `SELECT t.node FROM action_tokens a JOIN turns t ON t.turn_id = a.turn_id WHERE a.token_hash = ?`
	default:
		return "", false, fmt.Errorf("owner of %s: no such table", table)
	}
	var node string
	err := s.r.QueryRowContext(ctx, q, id).Scan(&node)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return node, true, nil
}

// FleetKey returns the key nodes sign their calls to each other with: made
// by the first node, kept in the database (nothing to copy by hand).
func (s *Store) FleetKey(ctx context.Context) ([]byte, error) {
	b := make([]byte, 32)
	rand.Read(b)
	t, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer t.Rollback()
	if _, err := t.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES ('fleet_key', ?) ON CONFLICT (key) DO NOTHING`,
		hex.EncodeToString(b)); err != nil {
		return nil, fmt.Errorf("fleet key: %w", err)
	}
	var v string
	if err := t.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'fleet_key'`).Scan(&v); err != nil {
		return nil, fmt.Errorf("fleet key: %w", err)
	}
	if err := t.Commit(); err != nil {
		return nil, err
	}
	return hex.DecodeString(v)
}

// notifyChannel is the PostgreSQL channel a commit that appended events or
// touched the outbox notifies, so every node's streams and dispatcher wake.
const notifyChannel = "akk_changes"

// announce tells the fleet, inside t (so only once it commits), what t
// changed. SQLite has no one else to tell.
func (s *Store) announce(ctx context.Context, t *tx) error {
	c := t.change
	if s.d != postgresSQL || (c.LastEventID == 0 && !c.Notifications && len(c.Revoked) == 0) {
		return nil
	}
	payload, _ := json.Marshal(announcement{Node: s.node, Event: c.LastEventID, Outbox: c.Notifications, Revoked: c.Revoked})
	_, err := t.tx.ExecContext(ctx, `SELECT pg_notify(?, ?)`, notifyChannel, string(payload))
	return err
}

// announcement is a NOTIFY's payload.
type announcement struct {
	Node    string   `json:"n"`
	Event   int64    `json:"e,omitempty"`
	Outbox  bool     `json:"o,omitempty"`
	Revoked []string `json:"r,omitempty"`
}

// Listen calls fn for each change another node committed,
// until ctx ends; after a lost connection it calls fn once with every
// field set (something may have been missed) and listens again.
func (s *Store) Listen(ctx context.Context, fn func(Change)) {
	if s.d != postgresSQL {
		return
	}
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, fn)
		if ctx.Err() != nil {
			return
		}
		slog.Debug("listen for fleet changes", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (s *Store) listenOnce(ctx context.Context, fn func(Change)) error {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	fn(Change{LastEventID: -1, Notifications: true}) // what happened while not listening
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var a announcement
		// This node's own commits told its listeners already (OnChange):
		// waking them again would only make its dispatcher claim twice.
		if json.Unmarshal([]byte(n.Payload), &a) != nil || a.Node == s.node {
			continue
		}
		fn(Change{LastEventID: a.Event, Notifications: a.Outbox, Revoked: a.Revoked})
	}
}
