package persistence

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

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
