package memstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"akk/domain"
)

func (t *tx) InsertWatch(ctx context.Context, w domain.Watch) error {
	if err := insertable(t.st, "insert watch", t.st.watches, w.ID, w.HostID); err != nil {
		return err
	}
	w.Endpoint, w.HardTimeout = endpointOf(w.Endpoint, w.TerminalID), w.HardTimeout.Truncate(time.Millisecond)
	w.IdleSince, w.CreatedAt, w.UpdatedAt, w.EndedAt = utc(w.IdleSince), utc(w.CreatedAt), utc(w.UpdatedAt), utc(w.EndedAt)
	t.st.watches[w.ID] = w
	return nil
}

// UpdateWatch writes w if the stored row is still at revision w.Revision.
func (t *tx) UpdateWatch(ctx context.Context, w domain.Watch) error {
	cur, err := atRevision(t.st.watches, w.ID, w.Revision, func(w domain.Watch) int64 { return w.Revision })
	if err != nil {
		return err
	}
	cur.State, cur.Mark, cur.NativeTurnID, cur.FinalMessage = w.State, w.Mark, w.NativeTurnID, w.FinalMessage
	cur.LatestText, cur.Reason, cur.SeenActivity, cur.ApprovalShown = w.LatestText, w.Reason, w.SeenActivity, w.ApprovalShown
	cur.IdleSince, cur.CreatedAt, cur.UpdatedAt, cur.EndedAt = utc(w.IdleSince), utc(w.CreatedAt), utc(w.UpdatedAt), utc(w.EndedAt)
	cur.Revision++
	t.st.watches[w.ID] = cur
	return nil
}

// Watch returns one Watch.
func (s *Store) Watch(ctx context.Context, id string) (domain.Watch, error) {
	w, ok := s.committed().watches[id]
	if !ok {
		return domain.Watch{}, domain.ErrNotFound
	}
	return w, nil
}

// watchOfTurn returns the newest Watch a Send attached to the Turn.
func (st *state) watchOfTurn(turnID string) (domain.Watch, error) {
	var out domain.Watch
	found := false
	for _, w := range st.watches {
		if turnID != "" && w.TurnID == turnID && (!found || w.CreatedAt.After(out.CreatedAt)) {
			out, found = w, true
		}
	}
	if !found {
		return out, domain.ErrNotFound
	}
	return out, nil
}

func (t *tx) WatchOfTurn(ctx context.Context, turnID string) (domain.Watch, error) {
	return t.st.watchOfTurn(turnID)
}

// WatchOfTurn returns the Watch of a Send's Turn.
func (s *Store) WatchOfTurn(ctx context.Context, turnID string) (domain.Watch, error) {
	return s.committed().watchOfTurn(turnID)
}

// ActiveWatches returns every active Watch, oldest first.
func (s *Store) ActiveWatches(ctx context.Context) ([]domain.Watch, error) {
	var out []domain.Watch
	for _, w := range s.committed().watches {
		if w.State == domain.WatchActive {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b domain.Watch) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// OwnedActiveWatches is ActiveWatches: every Watch is this store's own.
func (s *Store) OwnedActiveWatches(ctx context.Context) ([]domain.Watch, error) {
	return s.ActiveWatches(ctx)
}
