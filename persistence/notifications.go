package persistence

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"akk/domain"
)

const notificationCols = `notification_id, event_id, host_id, type, state, attempts, created_at, next_attempt_at,
	last_attempt_at, last_status_code, last_error, delivered_at`

func scanNotification(row interface{ Scan(...any) error }, extra ...any) (domain.Notification, error) {
	var n domain.Notification
	var state string
	var created, next, last, delivered, lastErr sql.NullString
	var code sql.NullInt64
	dest := append([]any{&n.ID, &n.EventID, &n.HostID, &n.Type, &state, &n.Attempts, &created, &next,
		&last, &code, &lastErr, &delivered}, extra...)
	err := row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return n, domain.ErrNotFound
	}
	if err != nil {
		return n, err
	}
	n.State = domain.NotificationState(state)
	n.CreatedAt, n.NextAttemptAt, n.LastAttemptAt, n.DeliveredAt = parseTS(created), parseTS(next), parseTS(last), parseTS(delivered)
	n.LastStatusCode = int(code.Int64)
	n.LastError = lastErr.String
	return n, nil
}

func (t *tx) InsertNotification(ctx context.Context, n domain.Notification, payload []byte) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO notifications(notification_id, event_id, host_id, type, payload, state,
		attempts, created_at, next_attempt_at, subject) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?,
		COALESCE((SELECT subject FROM events WHERE event_id = ?), ''))`,
		n.ID, n.EventID, n.HostID, n.Type, payload, string(n.State), ts(n.CreatedAt), ts(n.NextAttemptAt), n.EventID)
	if err != nil {
		return fmt.Errorf("insert notification: %w", err)
	}
	t.change.Notifications = true
	return nil
}

func (t *tx) Notification(ctx context.Context, id string) (domain.Notification, error) {
	return scanNotification(t.tx.QueryRowContext(ctx, `SELECT `+notificationCols+` FROM notifications WHERE notification_id = ?`, id))
}

func (t *tx) RescheduleNotification(ctx context.Context, id string, at time.Time) error {
	// A delivery in flight keeps its lease: the row is not handed out twice.
	_, err := t.tx.ExecContext(ctx, `UPDATE notifications SET state = 'pending', next_attempt_at = ?,
		lease_until = CASE WHEN lease_until > ? THEN lease_until ELSE NULL END,
		revision = revision + 1 WHERE notification_id = ?`, ts(at), ts(at), id)
	if err != nil {
		return fmt.Errorf("reschedule notification: %w", err)
	}
	t.change.Notifications = true
	return nil
}

// Notification returns one notification.
func (s *Store) Notification(ctx context.Context, id string) (domain.Notification, error) {
	return scanNotification(s.r.QueryRowContext(ctx, `SELECT `+notificationCols+` FROM notifications WHERE notification_id = ?`, id))
}

// Notifications lists notifications, newest first.
func (s *Store) Notifications(ctx context.Context, f domain.NotificationFilter) ([]domain.Notification, error) {
	q := `SELECT ` + notificationCols + ` FROM notifications WHERE 1 = 1`
	var args []any
	if f.HostID != "" {
		q += ` AND host_id = ?`
		args = append(args, f.HostID)
	}
	if f.State != "" {
		q += ` AND state = ?`
		args = append(args, string(f.State))
	}
	q += ` ORDER BY created_at DESC, notification_id DESC LIMIT ?`
	args = append(args, f.Limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	defer rows.Close()
	out := []domain.Notification{}
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, fmt.Errorf("list notifications: %w", err)
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// NodeTimeout is how long a fleet node may go without a heartbeat before
// it is unreachable: its rows lose their actions and its webhook leases
// pass to the other nodes.
const NodeTimeout = 6 * time.Second

// deadNodes is a subquery of the nodes not seen since its parameter.
const deadNodes = `SELECT name FROM nodes WHERE last_seen < ?`

// claimQuery selects the due head of each host's backlog.
func claimQuery(d dialect) string {
	return `SELECT ` + notificationCols + `, payload, webhook_url, secret, previous_secret, previous_secret_until, webhook_headers FROM (
			SELECT ` + prefixed("n.", notificationCols) + `, n.payload, h.webhook_url, h.secret, h.previous_secret, h.previous_secret_until, h.webhook_headers,
				ROW_NUMBER() OVER (PARTITION BY n.host_id ORDER BY n.next_attempt_at, n.event_id) AS rn
			FROM notifications n JOIN hosts h ON h.host_id = n.host_id
			WHERE n.state = 'pending' AND n.next_attempt_at <= ?
				-- A host pinned to one node (delivery_node) is that node's.
				AND (h.delivery_node = '' OR h.delivery_node = ?)
				AND (n.lease_until IS NULL OR n.lease_until <= ? OR n.lease_node IN (` + deadNodes + `))
				AND n.host_id NOT IN (` + d.jsonStrings() + `)
				AND NOT EXISTS (SELECT 1 FROM notifications o WHERE o.host_id = n.host_id AND o.state = 'pending' AND o.lease_until > ?
					AND o.lease_node NOT IN (` + deadNodes + `))
				-- The callbacks of one Turn (one subject) go in order: a later
				-- one waits while an earlier one is still pending.
				AND (n.subject = '' OR NOT EXISTS (SELECT 1 FROM notifications o
					WHERE o.host_id = n.host_id AND o.subject = n.subject AND o.state = 'pending' AND o.event_id < n.event_id))
		) due WHERE rn = 1 ORDER BY next_attempt_at LIMIT ?`
}

// ClaimDueNotifications leases due pending notifications to this
// dispatcher: rows no one leases, whose lease ended, or whose leasing node
// is unreachable (a fleet's dead node).
func (s *Store) ClaimDueNotifications(ctx context.Context, now, leaseUntil time.Time, limit int, busy []string) ([]domain.Delivery, error) {
	var out []domain.Delivery
	busyJSON, _ := json.Marshal(append([]string{}, busy...))
	err := s.inTx(ctx, false, func(dt domain.Tx) error {
		t := dt.(*tx)
		// Leases and liveness are on the database's clock (a fleet's one
		// clock): a node whose own clock runs behind or ahead neither takes
		// a live lease nor takes a live node for dead. When a row is due
		// stays on the clock that scheduled it.
		at, started, err := t.tx.dbClock(ctx, now)
		if err != nil {
			return err
		}
		lease := at.Add(leaseUntil.Sub(now))
		// A node is dead once it missed NodeTimeout of heartbeats, but
		// not within NodeTimeout of the database server starting again:
		// no node could heartbeat while it was down, and one that was
		// delivering then may still be.
		deadBefore := at.Add(-NodeTimeout)
		if at.Sub(started) < NodeTimeout {
			deadBefore = time.Time{}
		}
		// The earliest due row of each host not busy, and only when no row
		// of that host is leased (in flight): one delivery per host at once.
		rows, err := t.tx.QueryContext(ctx, claimQuery(t.d), ts(now), t.node, ts(at), ts(deadBefore), string(busyJSON), ts(at),
			ts(deadBefore), limit)
		if err != nil {
			return err
		}
		if out, err = scanDeliveries(rows, lease); err != nil {
			return err
		}
		out, err = t.leaseClaimed(ctx, out, lease, at, deadBefore)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	return out, nil
}

// NextNotificationDue returns the earliest next attempt among pending rows.
func (s *Store) NextNotificationDue(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullString
	// Only rows no earlier callback of the same Turn waits before.
	err := s.r.QueryRowContext(ctx, `SELECT min(`+s.d.greatest("n.next_attempt_at", "COALESCE(n.lease_until, '')")+`)
		FROM notifications n
		WHERE n.state = 'pending' AND (n.subject = '' OR NOT EXISTS (SELECT 1 FROM notifications o
			WHERE o.host_id = n.host_id AND o.subject = n.subject AND o.state = 'pending' AND o.event_id < n.event_id))`).Scan(&next)
	if err != nil {
		return time.Time{}, false, err
	}
	t := parseTS(next)
	return t, !t.IsZero(), nil
}

// RecordAttempt stores one attempt and the notification's next state.
//
// It takes no write lock: it appends no event, and its update is a
// compare-and-swap of the row's lease (a claim that leased the row again
// meanwhile wins), so deliveries record their outcomes side by side.
func (s *Store) RecordAttempt(ctx context.Context, a domain.Attempt) error {
	return s.inTx(ctx, false, func(dt domain.Tx) error {
		t := dt.(*tx)
		var code any
		if a.StatusCode != 0 {
			code = a.StatusCode
		}
		if _, err := t.tx.ExecContext(ctx, `INSERT INTO notification_attempts(notification_id, attempted_at, status_code, error, duration_ms)
			VALUES (?, ?, ?, ?, ?)`, a.NotificationID, ts(a.At), code, a.Error, a.Duration.Milliseconds()); err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		var delivered any
		if a.State == domain.NotificationDelivered {
			delivered = ts(a.At)
		}
		next := a.NextAt
		if next.IsZero() {
			next = a.At
		}
		// Only while the row still carries this delivery's lease: after it
		// expired another claim may own the row, and its outcome wins.
		res, err := t.tx.ExecContext(ctx, `UPDATE notifications SET state = ?, attempts = attempts + 1, last_attempt_at = ?,
			last_status_code = ?, last_error = ?, next_attempt_at = ?, delivered_at = COALESCE(?, delivered_at),
			lease_until = NULL, revision = revision + 1 WHERE notification_id = ? AND lease_until = ? AND state != 'delivered'`,
			string(a.State), ts(a.At), code, nullString(a.Error), ts(next), delivered, a.NotificationID, ts(a.Lease))
		if err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // the attempt is history; the row's state is not ours to set
		}
		// A rescheduled row changes when the dispatcher must look next.
		t.change.Notifications = a.State == domain.NotificationPending
		return nil
	})
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func prefixed(p, cols string) string {
	out := []byte{}
	field := true
	for i := 0; i < len(cols); i++ {
		c := cols[i]
		if field && c != ' ' && c != '\n' && c != '\t' {
			out = append(out, p...)
			field = false
		}
		if c == ',' {
			field = true
		}
		out = append(out, c)
	}
	return string(out)
}

// ReleaseLeases frees this node's leases: at start the daemon holds the
// state dir's lock (and its node's on a fleet), so such a lease is a dead
// incarnation's, and a delivery it may have made is retried now (same
// webhook-id) instead of after the lease.
func (s *Store) ReleaseLeases(ctx context.Context) error {
	return s.InTx(ctx, func(dt domain.Tx) error {
		t := dt.(*tx)
		if _, err := t.tx.ExecContext(ctx, `UPDATE notifications SET lease_until = NULL WHERE state = 'pending' AND lease_until IS NOT NULL
			AND lease_node = ?`, s.node); err != nil {
			return fmt.Errorf("release leases: %w", err)
		}
		t.change.Notifications = true
		return nil
	})
}

// Counts implements domain.Store: Turns by state, the earliest last change
// of a Turn waiting on a person, outbox rows by state.
func (s *Store) Counts(ctx context.Context) (domain.StoreCounts, error) {
	c := domain.StoreCounts{Turns: map[domain.TurnState]int{}, Notifications: map[domain.NotificationState]int{}}
	rows, err := s.r.QueryContext(ctx, `SELECT state, count(*) FROM turns GROUP BY state`)
	if err != nil {
		return c, err
	}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			rows.Close()
			return c, err
		}
		c.Turns[domain.TurnState(st)] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return c, err
	}
	var oldest sql.NullString
	if err := s.r.QueryRowContext(ctx, `SELECT min(updated_at) FROM turns WHERE state IN ('awaiting_approval', 'awaiting_interaction')`).Scan(&oldest); err != nil {
		return c, err
	}
	c.OldestWaiting = parseTS(oldest)
	rows, err = s.r.QueryContext(ctx, `SELECT state, count(*) FROM notifications GROUP BY state`)
	if err != nil {
		return c, err
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return c, err
		}
		c.Notifications[domain.NotificationState(st)] = n
	}
	return c, rows.Err()
}

// scanDeliveries reads the claimable rows with their hosts' webhooks,
// each to be leased until lease.
func scanDeliveries(rs *rows, lease time.Time) ([]domain.Delivery, error) {
	defer rs.Close()
	var out []domain.Delivery
	for rs.Next() {
		var d domain.Delivery
		var prevUntil sql.NullString
		var headers string
		n, err := scanNotification(rs, &d.Payload, &d.WebhookURL, &d.Secret, &d.PreviousSecret, &prevUntil, &headers)
		d.PreviousSecretUntil = parseTS(prevUntil)
		if err == nil {
			d.Headers, _, err = decodeWebhook(headers, "[]")
		}
		if err != nil {
			return nil, err
		}
		d.Notification = n
		d.Lease = lease
		out = append(out, d)
	}
	return out, rs.Err()
}

// leaseClaimed leases the rows read, each unless another claim got there
// first, and returns those leased.
func (t *tx) leaseClaimed(ctx context.Context, out []domain.Delivery, lease, at, deadBefore time.Time) ([]domain.Delivery, error) {
	// Lease each row unless another claim got there first: on
	// PostgreSQL claims run side by side (no write lock: they append
	// no event), so each takes its host's row (FOR NO KEY UPDATE SKIP
	// LOCKED: a host another node is claiming for is skipped, and an
	// outbox row being inserted for it is not held up), then leases
	// the row only if it is still pending, free, and no row of its
	// host is leased (what the read above saw may have changed).
	claimed := out[:0]
	for _, d := range out {
		if t.d == postgresSQL {
			var one int
			err := t.tx.QueryRowContext(ctx, `SELECT 1 FROM hosts WHERE host_id = ? FOR NO KEY UPDATE SKIP LOCKED`, d.HostID).Scan(&one)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return nil, err
			}
		}
		res, err := t.tx.ExecContext(ctx, `UPDATE notifications SET lease_until = ?, lease_node = ?
			WHERE notification_id = ? AND state = 'pending' AND (lease_until IS NULL OR lease_until <= ? OR lease_node IN (`+deadNodes+`))
			AND NOT EXISTS (SELECT 1 FROM notifications o WHERE o.host_id = ? AND o.state = 'pending' AND o.lease_until > ?
				AND o.lease_node NOT IN (`+deadNodes+`))`,
			ts(lease), t.node, d.ID, ts(at), ts(deadBefore), d.HostID, ts(at), ts(deadBefore))
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			claimed = append(claimed, d)
		}
	}
	return claimed, nil
}
