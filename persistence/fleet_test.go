package persistence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"akk/domain"
	"akk/persistence"
	"akk/persistence/storetest"
)

// Nodes of one fleet share a PostgreSQL database: each node's name is
// taken once; an event one node commits wakes the other's listener; Turns
// and Watches are each owned by the node that wrote them.
func TestFleetNodesShareOneDatabase(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := storetest.NewDatabase(t)
	a, err := persistence.OpenPostgresNode(ctx, url, "a")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := persistence.OpenPostgresNode(ctx, url, "b")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := persistence.OpenPostgresNode(ctx, url, "a"); !errors.Is(err, persistence.ErrDatabaseInUse) {
		t.Fatalf("a second daemon as node a: %v", err)
	}

	woke := make(chan persistence.Change, 16)
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	go b.Listen(lctx, func(c persistence.Change) { woke <- c })
	if c := <-woke; c.LastEventID != -1 {
		t.Fatalf("first call %+v, want the catch-up", c)
	}
	var id int64
	if err := a.InTx(ctx, func(tx domain.Tx) error {
		e, err := tx.AppendEvent(ctx, domain.Event{Type: "host.ping", Subject: "s", Data: map[string]any{}, CreatedAt: time.Now()})
		id = e.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-woke:
		if c.LastEventID != id {
			t.Fatalf("woken with %+v, want event %d", c, id)
		}
	case <-ctx.Done():
		t.Fatal("node b was not woken by node a's event")
	}

	ka, err := a.FleetKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if kb, err := b.FleetKey(ctx); err != nil || string(ka) != string(kb) || len(ka) != 32 {
		t.Fatalf("fleet keys %x %x %v", ka, kb, err)
	}
}
