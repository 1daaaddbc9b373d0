package persistence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"akk/domain"
)

// Web Push subscriptions (domain.PushReader, and domain.PushTx on a
// transaction).

// PushSubscriptions lists every subscription, oldest first.
func (s *Store) PushSubscriptions(ctx context.Context) ([]domain.PushSubscription, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT endpoint, principal, p256dh, auth, hide_details, ui_session, created_at
		FROM push_subscriptions ORDER BY created_at, endpoint`)
	if err != nil {
		return nil, fmt.Errorf("list push subscriptions: %w", err)
	}
	defer rows.Close()
	var out []domain.PushSubscription
	for rows.Next() {
		var p domain.PushSubscription
		var hide int
		var created sql.NullString
		if err := rows.Scan(&p.Endpoint, &p.Principal, &p.P256dh, &p.Auth, &hide, &p.UISession, &created); err != nil {
			return nil, fmt.Errorf("list push subscriptions: %w", err)
		}
		p.HideDetails, p.CreatedAt = hide != 0, parseTS(created)
		out = append(out, p)
	}
	return out, rows.Err()
}

func (t *tx) PutPushSubscription(ctx context.Context, p domain.PushSubscription) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO push_subscriptions(endpoint, principal, p256dh, auth, hide_details, ui_session, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(endpoint) DO UPDATE SET principal = excluded.principal, p256dh = excluded.p256dh, auth = excluded.auth,
			hide_details = excluded.hide_details, ui_session = excluded.ui_session, created_at = excluded.created_at`,
		p.Endpoint, p.Principal, p.P256dh, p.Auth, boolInt(p.HideDetails), p.UISession, ts(p.CreatedAt))
	if err != nil {
		return fmt.Errorf("store push subscription: %w", err)
	}
	return nil
}

func (t *tx) DeletePushSubscriptions(ctx context.Context, f domain.PushFilter) (int64, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"endpoint", f.Endpoint}, {"principal", f.Principal}, {"ui_session", f.UISession}} {
		if c.v != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if len(where) == 0 {
		return 0, fmt.Errorf("delete push subscriptions: no filter")
	}
	res, err := t.tx.ExecContext(ctx, `DELETE FROM push_subscriptions WHERE `+strings.Join(where, " AND "), args...)
	if err != nil {
		return 0, fmt.Errorf("delete push subscriptions: %w", err)
	}
	return res.RowsAffected()
}

func (t *tx) PutSettingOnce(ctx context.Context, key, value string) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO NOTHING`, key, value)
	return err
}

func (t *tx) InsertActionToken(ctx context.Context, a domain.ActionToken) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO action_tokens(token_hash, principal, conversation, turn_id, decision, expires_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, a.Hash, a.Principal, a.Conversation, a.TurnID, a.Decision, ts(a.ExpiresAt), ts(a.CreatedAt))
	if err != nil {
		return fmt.Errorf("store action token: %w", err)
	}
	return nil
}

// UseActionToken marks the token used and returns it: ErrNotFound for no
// such token, domain.ErrActionGone when it was used or has expired.
func (t *tx) UseActionToken(ctx context.Context, hash string, now time.Time) (domain.ActionToken, error) {
	var a domain.ActionToken
	var expires, used, created sql.NullString
	err := t.tx.QueryRowContext(ctx, `SELECT token_hash, principal, conversation, turn_id, decision, expires_at, used_at, created_at
		FROM action_tokens WHERE token_hash = ?`, hash).Scan(&a.Hash, &a.Principal, &a.Conversation, &a.TurnID, &a.Decision, &expires, &used, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.ActionToken{}, domain.ErrNotFound
	}
	if err != nil {
		return domain.ActionToken{}, fmt.Errorf("read action token: %w", err)
	}
	a.ExpiresAt, a.CreatedAt = parseTS(expires), parseTS(created)
	if used.Valid || !now.Before(a.ExpiresAt) {
		return a, domain.ErrActionGone
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE action_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL`, ts(now), hash)
	if err != nil {
		return domain.ActionToken{}, fmt.Errorf("use action token: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return a, domain.ErrActionGone
	}
	return a, nil
}

func (t *tx) DeleteActionTokensOf(ctx context.Context, principal string) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM action_tokens WHERE principal = ?`, principal)
	return err
}
