package persistence

import (
	"context"
	"fmt"
	"time"

	"akk/domain"
)

// Pruned counts what Prune removed.
type Pruned struct {
	Events, Notifications, Attempts, Offers int64
}

// Prune removes what is older than before and no longer needed: delivered
// or failed notifications with their attempts, events no notification
// refers to, and expired offers. Pending notifications, Turns, Watches,
// Sessions and consumed fingerprints (the fence against answering a prompt
// twice) are kept.
func (s *Store) Prune(ctx context.Context, before time.Time) (Pruned, error) {
	var p Pruned
	var tokens int64 // expired one-tap action tokens (counted with nothing)
	cut := ts(before)
	err := s.InTx(ctx, func(dt domain.Tx) error {
		t := dt.(*tx)
		steps := []struct {
			n   *int64
			sql string
		}{
			{&p.Attempts, `DELETE FROM notification_attempts WHERE notification_id IN
				(SELECT notification_id FROM notifications WHERE state != 'pending' AND created_at < ?)`},
			{&p.Notifications, `DELETE FROM notifications WHERE state != 'pending' AND created_at < ?`},
			{&p.Events, `DELETE FROM events WHERE created_at < ?
				AND event_id NOT IN (SELECT event_id FROM notifications)`},
			{&p.Offers, `DELETE FROM offers WHERE expires_at < ?`},
			{&tokens, `DELETE FROM action_tokens WHERE expires_at < ?`},
		}
		for _, st := range steps {
			res, err := t.tx.ExecContext(ctx, st.sql, cut)
			if err != nil {
				return err
			}
			*st.n, _ = res.RowsAffected()
		}
		return nil
	})
	if err != nil {
		return Pruned{}, fmt.Errorf("prune: %w", err)
	}
	return p, nil
}
