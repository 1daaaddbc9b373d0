package memstore

import (
	"context"
	"strings"
	"time"

	"akk/domain"
)

// offerRow is an offer: its decisions kept as the SQL store keeps them
// (joined by commas), and whether it was used.
type offerRow struct {
	domain.Offer
	decisions string
	consumed  bool
	seq       int64
}

// fence is one answered occurrence of a prompt.
type fence struct {
	base     string
	verified bool // the answer was proven
}

func (t *tx) InsertOffer(ctx context.Context, o domain.Offer) error {
	if err := fresh("insert offer", t.st.offers, o.ID); err != nil {
		return err
	}
	ds := make([]string, len(o.Decisions))
	for i, d := range o.Decisions {
		ds[i] = string(d)
	}
	o.Decisions, o.CreatedAt, o.ExpiresAt = nil, utc(o.CreatedAt), utc(o.ExpiresAt)
	t.st.offers[o.ID] = offerRow{Offer: o, decisions: strings.Join(ds, ","), seq: t.st.next()}
	return nil
}

// newestOffer returns the newest unconsumed offer of the scope that
// match lets through.
func (t *tx) newestOffer(kind, terminalID, turnID, hostID, conversation string, match func(offerRow) bool) (domain.Offer, error) {
	var best offerRow
	found := false
	for _, r := range t.st.offers {
		if r.Kind != kind || r.TerminalID != terminalID || r.TurnID != turnID || r.HostID != hostID ||
			r.Conversation != conversation || r.consumed || !match(r) {
			continue
		}
		if c := r.CreatedAt.Compare(best.CreatedAt); !found || c > 0 || (c == 0 && r.seq > best.seq) {
			best, found = r, true
		}
	}
	if !found {
		return domain.Offer{}, domain.ErrNotFound
	}
	o := best.Offer
	for _, d := range strings.Split(best.decisions, ",") {
		if d != "" {
			o.Decisions = append(o.Decisions, domain.ApprovalDecision(d))
		}
	}
	return o, nil
}

// LiveOffer returns the newest unconsumed, unexpired offer for this scope.
func (t *tx) LiveOffer(ctx context.Context, kind, terminalID, turnID, hostID, conversation string, now time.Time) (domain.Offer, error) {
	return t.newestOffer(kind, terminalID, turnID, hostID, conversation, func(r offerRow) bool { return r.ExpiresAt.After(now) })
}

// OfferByPublicID returns the newest unconsumed offer for this scope that
// showed publicID, expired or not.
func (t *tx) OfferByPublicID(ctx context.Context, kind, terminalID, turnID, hostID, conversation, publicID string) (domain.Offer, error) {
	return t.newestOffer(kind, terminalID, turnID, hostID, conversation, func(r offerRow) bool { return r.PublicID == publicID })
}

// ConsumeOffer marks the offer used and fences one occurrence of its
// prompt (key, of the prompt base); domain.ErrFingerprintConsumed when
// that occurrence was answered before.
func (t *tx) ConsumeOffer(ctx context.Context, offerID, base, key string, now time.Time) error {
	if _, ok := t.st.fences[key]; ok {
		return domain.ErrFingerprintConsumed
	}
	t.st.fences[key] = fence{base: base}
	if r, ok := t.st.offers[offerID]; ok {
		r.consumed = true
		t.st.offers[offerID] = r
	}
	return nil
}

// FingerprintConsumed reports whether a fence key was answered before.
func (t *tx) FingerprintConsumed(ctx context.Context, key string) (bool, error) {
	_, ok := t.st.fences[key]
	return ok, nil
}

// ProvenOccurrences counts the proven answers to the prompt base.
func (t *tx) ProvenOccurrences(ctx context.Context, base string) (int, error) {
	n := 0
	for _, f := range t.st.fences {
		if f.base == base && f.verified {
			n++
		}
	}
	return n, nil
}

// VerifyFence records that the answer fenced by key was proven.
func (t *tx) VerifyFence(ctx context.Context, key string, now time.Time) error {
	if f, ok := t.st.fences[key]; ok {
		f.verified = true
		t.st.fences[key] = f
	}
	return nil
}
