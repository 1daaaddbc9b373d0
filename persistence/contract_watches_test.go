package persistence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"akk/domain"
	"akk/persistence/storetest"
)

// A Watch changes by compare-and-swap; a Send's Watch is found by its
// Turn; the active ones are listed, every one this daemon's.
func TestWatchesContract(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		for i, id := range []string{"wat_1", "wat_2", "wat_3"} {
			w := domain.Watch{ID: id, TerminalID: "term_" + id[4:], TurnID: "turn_1", Mode: "exact", State: domain.WatchActive,
				CreatedAt: at0.Add(time.Duration(i) * time.Second), UpdatedAt: at0, Revision: 1, HardTimeout: time.Hour}
			if id == "wat_3" {
				w.TurnID = ""
			}
			write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.InsertWatch(ctx, w) })
		}
		w, err := s.Watch(ctx, "wat_1")
		if err != nil || w.Endpoint != (domain.EndpointRef{Kind: domain.EndpointPane, ID: "term_1"}) || w.HardTimeout != time.Hour {
			t.Fatalf("watch %+v, %v", w, err)
		}
		w.State, w.Reason, w.SeenActivity, w.EndedAt = domain.WatchState("completed"), "done", true, at0.Add(time.Minute)
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.UpdateWatch(ctx, w) })
		if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.UpdateWatch(ctx, w) }); !errors.Is(err, domain.ErrRevisionConflict) {
			t.Fatalf("a stale update: %v", err)
		}
		if got, err := s.Watch(ctx, "wat_1"); err != nil || got.Reason != "done" || !got.SeenActivity || got.Revision != 2 || !got.EndedAt.Equal(w.EndedAt) {
			t.Fatalf("updated %+v, %v", got, err)
		}
		if got, err := s.WatchOfTurn(ctx, "turn_1"); err != nil || got.ID != "wat_2" {
			t.Fatalf("the Turn's newest Watch %+v, %v", got, err)
		}
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			if _, err := tx.WatchOfTurn(ctx, ""); !errors.Is(err, domain.ErrNotFound) {
				t.Errorf("the Watch of no Turn: %v", err)
			}
			return nil
		})
		for _, list := range []func(context.Context) ([]domain.Watch, error){s.ActiveWatches, s.OwnedActiveWatches} {
			ws, err := list(ctx)
			if err != nil || len(ws) != 2 || ws[0].State != domain.WatchActive || ws[1].State != domain.WatchActive {
				t.Fatalf("active %+v, %v", ws, err)
			}
		}
		if _, err := s.Watch(ctx, "wat_9"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("no Watch: %v", err)
		}
	})
}
