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

func (t *tx) InsertOffer(ctx context.Context, o domain.Offer) error {
	ds := make([]string, len(o.Decisions))
	for i, d := range o.Decisions {
		ds[i] = string(d)
	}
	_, err := t.tx.ExecContext(ctx, `INSERT INTO offers(offer_id, kind, turn_id, terminal_id, host_id, conversation,
		fingerprint, decisions, created_at, expires_at, payload, public_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Kind, o.TurnID, o.TerminalID, o.HostID, o.Conversation, o.Fingerprint, strings.Join(ds, ","),
		ts(o.CreatedAt), ts(o.ExpiresAt), o.Payload, o.PublicID)
	if err != nil {
		return fmt.Errorf("insert offer: %w", err)
	}
	return nil
}

// LiveOffer returns the newest unconsumed, unexpired offer for this scope.
func (t *tx) LiveOffer(ctx context.Context, kind, terminalID, turnID, hostID, conversation string, now time.Time) (domain.Offer, error) {
	return t.offer(ctx, `AND expires_at > ? ORDER BY created_at DESC LIMIT 1`, kind, terminalID, turnID, hostID, conversation, ts(now))
}

// OfferByPublicID returns the newest unconsumed offer for this scope that
// showed publicID, expired or not.
func (t *tx) OfferByPublicID(ctx context.Context, kind, terminalID, turnID, hostID, conversation, publicID string) (domain.Offer, error) {
	return t.offer(ctx, `AND public_id = ? ORDER BY created_at DESC LIMIT 1`, kind, terminalID, turnID, hostID, conversation, publicID)
}

func (t *tx) offer(ctx context.Context, tail string, args ...any) (domain.Offer, error) {
	var o domain.Offer
	var ds string
	var created, expires sql.NullString
	err := t.tx.QueryRowContext(ctx, `SELECT offer_id, kind, turn_id, terminal_id, host_id, conversation, fingerprint,
		decisions, created_at, expires_at, payload, public_id FROM offers WHERE kind = ? AND terminal_id = ? AND turn_id = ?
		AND host_id = ? AND conversation = ? AND consumed_at IS NULL `+tail, args...).Scan(&o.ID, &o.Kind, &o.TurnID,
		&o.TerminalID, &o.HostID, &o.Conversation, &o.Fingerprint, &ds, &created, &expires, &o.Payload, &o.PublicID)
	if errors.Is(err, sql.ErrNoRows) {
		return o, domain.ErrNotFound
	}
	if err != nil {
		return o, err
	}
	for _, d := range strings.Split(ds, ",") {
		if d != "" {
			o.Decisions = append(o.Decisions, domain.ApprovalDecision(d))
		}
	}
	o.CreatedAt, o.ExpiresAt = parseTS(created), parseTS(expires)
	return o, nil
}

// ConsumeOffer marks the offer used and fences one occurrence of its
// prompt (key, of the prompt base); it fails with
// domain.ErrFingerprintConsumed when that occurrence was answered before.
func (t *tx) ConsumeOffer(ctx context.Context, offerID, base, key string, now time.Time) error {
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO consumed_fingerprints(fingerprint, base, consumed_at) VALUES (?, ?, ?)`,
		key, base, ts(now)); err != nil {
		if t.d.uniqueViolation(err, "consumed_fingerprints", "consumed_fingerprints_pkey", "fingerprint") {
			return domain.ErrFingerprintConsumed
		}
		return fmt.Errorf("fence fingerprint: %w", err)
	}
	_, err := t.tx.ExecContext(ctx, `UPDATE offers SET consumed_at = ? WHERE offer_id = ?`, ts(now), offerID)
	return err
}

// FingerprintConsumed reports whether a fence key was answered before.
func (t *tx) FingerprintConsumed(ctx context.Context, key string) (bool, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM consumed_fingerprints WHERE fingerprint = ?`, key).Scan(&n)
	return n > 0, err
}

// ProvenOccurrences counts the answers to the prompt base that were proven
// (VerifyFence): the occurrences of it that are over.
func (t *tx) ProvenOccurrences(ctx context.Context, base string) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT count(*) FROM consumed_fingerprints WHERE base = ? AND verified_at IS NOT NULL`, base).Scan(&n)
	return n, err
}

// VerifyFence records that the answer fenced by key was proven: the prompt
// left the screen, so that occurrence is over.
func (t *tx) VerifyFence(ctx context.Context, key string, now time.Time) error {
	_, err := t.tx.ExecContext(ctx, `UPDATE consumed_fingerprints SET verified_at = ? WHERE fingerprint = ? AND verified_at IS NULL`, ts(now), key)
	return err
}
