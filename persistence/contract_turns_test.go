package persistence_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"akk/domain"
	"akk/persistence/storetest"
)

// TestTurnChanges: a Turn's changes are numbered in order across writes,
// kept up to the limit, and go with a deleted Turn.
func TestTurnChanges(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		at := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
		add := func(id string, cs ...domain.TurnChange) {
			t.Helper()
			if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.AddTurnChanges(ctx, id, cs) }); err != nil {
				t.Fatal(err)
			}
		}
		add("turn_1", domain.TurnChange{Path: "a.txt", Op: domain.FileCreated, Diff: "--- /dev/null\n+++ b/a.txt\n", At: at})
		add("turn_1", domain.TurnChange{Path: "b.txt", Op: domain.FileUpdated, Diff: "d", Truncated: true, At: at},
			domain.TurnChange{Path: "c.txt", Op: domain.FileDeleted, Diff: "d"})
		add("turn_2", domain.TurnChange{Path: "x", Op: domain.FileUpdated, Diff: "d"})
		got, err := s.TurnChanges(ctx, "turn_1")
		if err != nil || len(got) != 3 {
			t.Fatalf("changes %+v, %v", got, err)
		}
		for i, c := range got {
			if c.Seq != i+1 {
				t.Errorf("change %d numbered %d", i, c.Seq)
			}
		}
		if g := got[1]; g.Path != "b.txt" || g.Op != domain.FileUpdated || !g.Truncated || !g.At.Equal(at) || got[0].Diff != "--- /dev/null\n+++ b/a.txt\n" {
			t.Errorf("stored %+v", got)
		}
		many := make([]domain.TurnChange, domain.MaxTurnChanges)
		for i := range many {
			many[i] = domain.TurnChange{Path: fmt.Sprint(i), Op: domain.FileUpdated, Diff: "d"}
		}
		add("turn_2", many...)
		if got, err := s.TurnChanges(ctx, "turn_2"); err != nil || len(got) != domain.MaxTurnChanges || got[len(got)-1].Path != fmt.Sprint(domain.MaxTurnChanges-2) {
			t.Fatalf("beyond the limit: %d changes, %v", len(got), err)
		}
		if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.DeleteTurn(ctx, "turn_1") }); err != nil {
			t.Fatal(err)
		}
		if got, err := s.TurnChanges(ctx, "turn_1"); err != nil || len(got) != 0 {
			t.Fatalf("a deleted Turn's changes: %+v, %v", got, err)
		}
	})
}
