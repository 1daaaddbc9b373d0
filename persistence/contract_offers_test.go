package persistence_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"akk/domain"
	"akk/persistence/storetest"
)

// The live offer of a scope is its newest unconsumed, unexpired one; an
// offer is found by the id it showed, expired or not; an occurrence of a
// prompt is answered once (the fence), and counted once proven.
func TestOffersAndFences(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		both := []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject}
		for _, o := range []domain.Offer{
			{ID: "off_1", PublicID: "p1", CreatedAt: at0, ExpiresAt: at0.Add(time.Minute), Decisions: both},
			{ID: "off_2", PublicID: "p2", CreatedAt: at0.Add(time.Second), ExpiresAt: at0.Add(30 * time.Second), Payload: "private"},
			{ID: "off_3", PublicID: "p3", CreatedAt: at0.Add(2 * time.Second), ExpiresAt: at0.Add(time.Minute), HostID: "host_a"},
		} {
			o.Kind, o.TerminalID, o.TurnID, o.Fingerprint = "approval", "term_1", "turn_1", "fp-"+o.ID
			write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.InsertOffer(ctx, o) })
		}
		offer := func(read func(tx domain.Tx) (domain.Offer, error)) (o domain.Offer, err error) {
			err = s.InTx(ctx, func(tx domain.Tx) error { o, err = read(tx); return err })
			return o, err
		}
		live := func(at time.Time) (domain.Offer, error) {
			return offer(func(tx domain.Tx) (domain.Offer, error) {
				return tx.LiveOffer(ctx, "approval", "term_1", "turn_1", "", "", at)
			})
		}
		byID := func(id string) (domain.Offer, error) {
			return offer(func(tx domain.Tx) (domain.Offer, error) {
				return tx.OfferByPublicID(ctx, "approval", "term_1", "turn_1", "", "", id)
			})
		}
		if o, err := live(at0.Add(10 * time.Second)); err != nil || o.ID != "off_2" || o.Payload != "private" || o.Decisions != nil {
			t.Fatalf("live %+v, %v", o, err)
		}
		if o, err := live(at0.Add(40 * time.Second)); err != nil || o.ID != "off_1" || !slices.Equal(o.Decisions, both) || !o.ExpiresAt.Equal(at0.Add(time.Minute)) {
			t.Fatalf("live after the newest expired %+v, %v", o, err)
		}
		if _, err := live(at0.Add(time.Minute)); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("live at the expiry: %v", err)
		}
		if o, err := byID("p2"); err != nil || o.ID != "off_2" {
			t.Fatalf("an expired offer by its id %+v, %v", o, err)
		}
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			return tx.ConsumeOffer(ctx, "off_2", "base", "base#1", at0)
		})
		if _, err := byID("p2"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("a used offer by its id: %v", err)
		}
		if o, err := live(at0.Add(10 * time.Second)); err != nil || o.ID != "off_1" {
			t.Fatalf("live after a use %+v, %v", o, err)
		}
		if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.ConsumeOffer(ctx, "off_1", "base", "base#1", at0) }); !errors.Is(err, domain.ErrFingerprintConsumed) {
			t.Fatalf("an occurrence answered twice: %v", err)
		}
		if _, err := byID("p1"); err != nil {
			t.Fatalf("an offer whose answer was refused is still there: %v", err)
		}
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			if err := tx.ConsumeOffer(ctx, "off_1", "base", "base#2", at0); err != nil {
				return err
			}
			return errors.Join(tx.VerifyFence(ctx, "base#1", at0), tx.VerifyFence(ctx, "base#1", at0), tx.VerifyFence(ctx, "none", at0))
		})
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			one, err1 := tx.FingerprintConsumed(ctx, "base#1")
			three, err3 := tx.FingerprintConsumed(ctx, "base#3")
			n, errN := tx.ProvenOccurrences(ctx, "base")
			if err := errors.Join(err1, err3, errN); err != nil || !one || three || n != 1 {
				t.Errorf("fences: #1 %v, #3 %v, proven %d, %v", one, three, n, err)
			}
			return nil
		})
	})
}
