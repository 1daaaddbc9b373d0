package memstore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"akk/domain"
)

// tokenRow is a one-tap action token and whether it was used.
type tokenRow struct {
	domain.ActionToken
	used bool
}

// PushSubscriptions lists every subscription, oldest first.
func (s *Store) PushSubscriptions(ctx context.Context) ([]domain.PushSubscription, error) {
	var out []domain.PushSubscription
	for _, p := range s.committed().push {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b domain.PushSubscription) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.Endpoint, b.Endpoint))
	})
	return out, nil
}

// PutPushSubscription keeps a subscription, replacing one of its endpoint.
func (t *tx) PutPushSubscription(ctx context.Context, p domain.PushSubscription) error {
	p.CreatedAt = utc(p.CreatedAt)
	t.st.push[p.Endpoint] = p
	return nil
}

// DeletePushSubscriptions removes the subscriptions f matches (at least
// one field must be set).
func (t *tx) DeletePushSubscriptions(ctx context.Context, f domain.PushFilter) (int64, error) {
	if f == (domain.PushFilter{}) {
		return 0, errors.New("delete push subscriptions: no filter")
	}
	var n int64
	for ep, p := range t.st.push {
		if (f.Endpoint == "" || p.Endpoint == f.Endpoint) && (f.Principal == "" || p.Principal == f.Principal) &&
			(f.UISession == "" || p.UISession == f.UISession) {
			delete(t.st.push, ep)
			n++
		}
	}
	return n, nil
}

func (t *tx) InsertActionToken(ctx context.Context, a domain.ActionToken) error {
	if err := fresh("store action token", t.st.tokens, a.Hash); err != nil {
		return err
	}
	a.ExpiresAt, a.CreatedAt = utc(a.ExpiresAt), utc(a.CreatedAt)
	t.st.tokens[a.Hash] = tokenRow{ActionToken: a}
	return nil
}

// UseActionToken marks the token used and returns it: ErrNotFound for no
// such token, domain.ErrActionGone when it was used or has expired.
func (t *tx) UseActionToken(ctx context.Context, hash string, now time.Time) (domain.ActionToken, error) {
	r, ok := t.st.tokens[hash]
	if !ok {
		return domain.ActionToken{}, domain.ErrNotFound
	}
	if r.used || !now.Before(r.ExpiresAt) {
		return r.ActionToken, domain.ErrActionGone
	}
	r.used = true
	t.st.tokens[hash] = r
	return r.ActionToken, nil
}

// DeleteActionTokensOf ends every action token of a principal.
func (t *tx) DeleteActionTokensOf(ctx context.Context, principal string) error {
	for h, r := range t.st.tokens {
		if r.Principal == principal {
			delete(t.st.tokens, h)
		}
	}
	return nil
}
