package memstore

import (
	"context"
	"fmt"
	"time"

	"akk/domain"
	"akk/persistence"
)

// Prune removes what is older than before and no longer needed, as
// persistence.Store's Prune does: finished notifications with their
// attempts, events no notification refers to, expired offers and action
// tokens.
func (s *Store) Prune(ctx context.Context, before time.Time) (persistence.Pruned, error) {
	var p persistence.Pruned
	err := s.update(ctx, func(t *tx) error {
		st := t.st
		for id, r := range st.outbox {
			if r.State != domain.NotificationPending && r.CreatedAt.Before(before) {
				p.Attempts += int64(st.attempts[id])
				p.Notifications++
				delete(st.attempts, id)
				delete(st.outbox, id)
			}
		}
		referred := map[int64]bool{}
		for _, r := range st.outbox {
			referred[r.EventID] = true
		}
		kept := st.events[:0:0]
		for _, e := range st.events {
			if e.CreatedAt.Before(before) && !referred[e.ID] {
				p.Events++
				continue
			}
			kept = append(kept, e)
		}
		st.events = kept
		for id, r := range st.offers {
			if r.ExpiresAt.Before(before) {
				p.Offers++
				delete(st.offers, id)
			}
		}
		for h, r := range st.tokens {
			if r.ExpiresAt.Before(before) {
				delete(st.tokens, h)
			}
		}
		return nil
	})
	if err != nil {
		return persistence.Pruned{}, fmt.Errorf("prune: %w", err)
	}
	return p, nil
}
