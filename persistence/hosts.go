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

const hostCols = `host_id, name, webhook_url, secret, created_at, secret_rotated_at, revision, webhook_headers, webhook_events, delivery_node`

func scanHost(row interface{ Scan(...any) error }) (domain.Host, error) {
	var h domain.Host
	var created, rotated sql.NullString
	var headers, events string
	err := row.Scan(&h.ID, &h.Name, &h.WebhookURL, &h.Secret, &created, &rotated, &h.Revision, &headers, &events, &h.DeliveryNode)
	if errors.Is(err, sql.ErrNoRows) {
		return h, domain.ErrNotFound
	}
	if err != nil {
		return h, err
	}
	h.CreatedAt, h.SecretRotatedAt = parseTS(created), parseTS(rotated)
	if h.WebhookHeaders, h.WebhookEvents, err = decodeWebhook(headers, events); err != nil {
		return h, fmt.Errorf("host %s: %w", h.ID, err)
	}
	return h, nil
}

// encodeWebhook is how a host's delivery headers and subscription are stored.
func encodeWebhook(headers map[string]string, events []string) (string, string, error) {
	if headers == nil {
		headers = map[string]string{}
	}
	if events == nil {
		events = []string{}
	}
	hb, err := json.Marshal(headers)
	if err != nil {
		return "", "", err
	}
	eb, err := json.Marshal(events)
	return string(hb), string(eb), err
}

func decodeWebhook(headers, events string) (map[string]string, []string, error) {
	hs := map[string]string{}
	if err := json.Unmarshal([]byte(headers), &hs); err != nil {
		return nil, nil, errors.New("webhook headers are not a JSON object") // never the value
	}
	evs := []string{}
	if err := json.Unmarshal([]byte(events), &evs); err != nil {
		return nil, nil, fmt.Errorf("webhook events: %w", err)
	}
	return hs, evs, nil
}

// getHost returns a live host; a removed one is not found.
func getHost(ctx context.Context, q querier, id string) (domain.Host, error) {
	return scanHost(q.QueryRowContext(ctx, `SELECT `+hostCols+` FROM hosts WHERE host_id = ? AND deleted_at IS NULL`, id))
}

// Host returns one host.
func (s *Store) Host(ctx context.Context, id string) (domain.Host, error) {
	return getHost(ctx, s.r, id)
}

// HostByTokenHash returns the live host whose token hashes to hash.
func (s *Store) HostByTokenHash(ctx context.Context, hash string) (domain.Host, error) {
	return scanHost(s.r.QueryRowContext(ctx, `SELECT `+hostCols+` FROM hosts WHERE token_hash = ? AND deleted_at IS NULL`, hash))
}

// Hosts returns every host, oldest first.
func (s *Store) Hosts(ctx context.Context) ([]domain.Host, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+hostCols+` FROM hosts WHERE deleted_at IS NULL ORDER BY created_at, host_id`)
	if err != nil {
		return nil, fmt.Errorf("list hosts: %w", err)
	}
	defer rows.Close()
	out := []domain.Host{}
	for rows.Next() {
		h, err := scanHost(rows)
		if err != nil {
			return nil, fmt.Errorf("list hosts: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// Setting returns a stored setting, or "" when unset.
func (s *Store) Setting(ctx context.Context, key string) (string, error) {
	var v string
	err := s.r.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (t *tx) PutSetting(ctx context.Context, key, value string) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES (?, ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	return err
}

func (t *tx) InsertHost(ctx context.Context, h domain.Host, tokenHash string) error {
	headers, events, err := encodeWebhook(h.WebhookHeaders, h.WebhookEvents)
	if err != nil {
		return fmt.Errorf("insert host: %w", err)
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO hosts(`+hostCols+`, token_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		h.ID, h.Name, h.WebhookURL, h.Secret, ts(h.CreatedAt), ts(h.SecretRotatedAt), h.Revision, headers, events, h.DeliveryNode, tokenHash)
	if err != nil {
		return fmt.Errorf("insert host: %w", err)
	}
	return nil
}

func (t *tx) Host(ctx context.Context, id string) (domain.Host, error) { return getHost(ctx, t.tx, id) }

func (t *tx) UpdateHostSecret(ctx context.Context, id string, rev int64, secret string, at time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE hosts SET previous_secret = secret, previous_secret_until = ?,
		secret = ?, secret_rotated_at = ?, revision = revision + 1
		WHERE host_id = ? AND revision = ?`, ts(at.Add(domain.SecretGrace)), secret, ts(at), id, rev)
	if err != nil {
		return fmt.Errorf("update host secret: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return domain.ErrRevisionConflict
	}
	return nil
}

func (t *tx) UpdateHostWebhook(ctx context.Context, id string, rev int64, w domain.HostWebhook) error {
	headers, events, err := encodeWebhook(w.Headers, w.Events)
	if err != nil {
		return fmt.Errorf("update host webhook: %w", err)
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE hosts SET webhook_url = ?, webhook_headers = ?, webhook_events = ?, delivery_node = ?,
		revision = revision + 1 WHERE host_id = ? AND revision = ? AND deleted_at IS NULL`, w.URL, headers, events, w.DeliveryNode, id, rev)
	if err != nil {
		return fmt.Errorf("update host webhook: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return domain.ErrRevisionConflict
	}
	return nil
}

func (t *tx) UpdateHostToken(ctx context.Context, id string, rev int64, tokenHash string) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE hosts SET token_hash = ?, revision = revision + 1
		WHERE host_id = ? AND revision = ? AND deleted_at IS NULL`, tokenHash, id, rev)
	if err != nil {
		return fmt.Errorf("update host token: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return domain.ErrRevisionConflict
	}
	t.change.Revoked = append(t.change.Revoked, id)
	return nil
}

// RemoveHost marks a host removed: its token hash is replaced by one no
// token has, and its pending notifications end failed.
func (t *tx) RemoveHost(ctx context.Context, id string, at time.Time) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE hosts SET deleted_at = ?, token_hash = 'removed:' || host_id,
		revision = revision + 1 WHERE host_id = ? AND deleted_at IS NULL`, ts(at), id)
	if err != nil {
		return fmt.Errorf("remove host: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return domain.ErrNotFound
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE notifications SET state = 'failed', last_error = 'the host was removed',
		lease_until = NULL, revision = revision + 1 WHERE host_id = ? AND state = 'pending'`, id); err != nil {
		return fmt.Errorf("end the removed host's notifications: %w", err)
	}
	t.change.Notifications = true
	t.change.Revoked = append(t.change.Revoked, id)
	return nil
}

// ApprovalPolicy returns the host's auto-approval rules (none when it has
// no policy).
func (t *tx) ApprovalPolicy(ctx context.Context, hostID string) ([]domain.ApprovalRule, error) {
	var raw string
	err := t.tx.QueryRowContext(ctx, `SELECT rules FROM approval_policies WHERE host_id = ?`, hostID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rules []domain.ApprovalRule
	if err := json.Unmarshal([]byte(raw), &rules); err != nil {
		return nil, fmt.Errorf("approval policy of %s: %w", hostID, err)
	}
	return rules, nil
}

// PutApprovalPolicy replaces the host's rules; none removes the policy.
func (t *tx) PutApprovalPolicy(ctx context.Context, hostID string, rules []domain.ApprovalRule, now time.Time) error {
	if len(rules) == 0 {
		_, err := t.tx.ExecContext(ctx, `DELETE FROM approval_policies WHERE host_id = ?`, hostID)
		return err
	}
	raw, err := json.Marshal(rules)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO approval_policies(host_id, rules, updated_at) VALUES (?, ?, ?)
		ON CONFLICT(host_id) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at`, hostID, string(raw), ts(now))
	return err
}
