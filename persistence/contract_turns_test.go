package persistence_test

import (
	"context"
	"errors"
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

// aTurn is a Turn of host_a's session ses_1 that holds terminal.
func aTurn(id, terminal string, created time.Time) domain.Turn {
	return domain.Turn{ID: id, HostID: "host_a", SessionID: "ses_1", TerminalID: terminal, Request: "task", OriginalRequest: "task",
		State: domain.TurnWorking, SubmitStage: domain.SubmitNothing, CreatedAt: created, UpdatedAt: created, Revision: 1}
}

// turnsWorld stores hosts host_a and host_b and session ses_1.
func turnsWorld(t *testing.T, s storetest.Store) {
	t.Helper()
	addHosts(t, s, "host_a", "host_b")
	write(t, s, func(ctx context.Context, tx domain.Tx) error {
		return tx.InsertSession(ctx, domain.Session{ID: "ses_1", HostID: "host_a", TerminalID: "term_1", CreatedAt: at0, Revision: 1})
	})
}

// A Turn is found again by its owner's message id, and only by its owner;
// a second Turn with one owner's message id is refused.
func TestTurnsByMessageID(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		turnsWorld(t, s)
		first, other, operator := aTurn("turn_1", "term_1", at0), aTurn("turn_2", "term_2", at0), aTurn("turn_3", "term_3", at0)
		first.MessageID, other.MessageID, operator.MessageID = "m-1", "m-1", "m-1"
		other.HostID, operator.HostID = "host_b", ""
		for _, x := range []domain.Turn{first, other, operator} {
			write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.InsertTurn(ctx, x) })
		}
		again := aTurn("turn_4", "term_4", at0)
		again.MessageID = "m-1"
		if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.InsertTurn(ctx, again) }); err == nil {
			t.Fatal("a second Turn with one host's message id was stored")
		}
		for _, c := range []struct{ host, msg, want string }{{"host_a", "m-1", "turn_1"}, {"host_b", "m-1", "turn_2"}, {"", "m-1", "turn_3"}} {
			if got, err := s.TurnByMessageID(ctx, c.host, c.msg); err != nil || got.ID != c.want {
				t.Errorf("%q's m-1: %s, %v; want %s", c.host, got.ID, err, c.want)
			}
		}
		if _, err := s.TurnByMessageID(ctx, "host_a", "m-2"); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("an unknown message id: %v", err)
		}
		if _, err := s.TurnByMessageID(ctx, "host_a", ""); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("no message id: %v", err)
		}
	})
}

// One Turn holds an endpoint; an ended one frees it; an update that would
// make a second holder is refused. An update writes the Turn's progress,
// never who owns it or what it holds.
func TestTurnHoldsItsEndpoint(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		turnsWorld(t, s)
		pane := domain.EndpointRef{Kind: domain.EndpointPane, ID: "term_1"}
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			return tx.InsertTurn(ctx, aTurn("turn_1", "term_1", at0))
		})
		if h, err := s.HoldingTurn(ctx, domain.EndpointRef{ID: "term_1"}); err != nil || h.ID != "turn_1" || h.Endpoint != pane {
			t.Fatalf("the holder %+v, %v", h, err)
		}
		done := aTurn("turn_1", "term_9", at0)
		done.HostID, done.MessageID, done.State, done.LatestText, done.EndedAt = "host_b", "m-9", domain.TurnCompleted, "done", at0.Add(time.Minute)
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.UpdateTurn(ctx, done) })
		got, err := s.Turn(ctx, "turn_1")
		if err != nil || got.State != domain.TurnCompleted || got.LatestText != "done" || !got.EndedAt.Equal(done.EndedAt) || got.Revision != 2 {
			t.Fatalf("updated %+v, %v", got, err)
		}
		if got.HostID != "host_a" || got.MessageID != "" || got.TerminalID != "term_1" || got.Endpoint != pane {
			t.Fatalf("an update changed who owns the Turn or what it holds: %+v", got)
		}
		if _, err := s.HoldingTurn(ctx, pane); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("an ended Turn holds: %v", err)
		}
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			return tx.InsertTurn(ctx, aTurn("turn_2", "term_1", at0))
		})
		back := got
		back.State = domain.TurnWorking
		err = s.InTx(ctx, func(tx domain.Tx) error { return tx.UpdateTurn(ctx, back) })
		var de *domain.Error
		if !errors.As(err, &de) || de.Code != domain.CodeConflictActiveTurn {
			t.Fatalf("a second holder by update: %v", err)
		}
		if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.UpdateTurn(ctx, aTurn("turn_x", "term_1", at0)) }); !errors.Is(err, domain.ErrRevisionConflict) {
			t.Fatalf("an update of no Turn: %v", err)
		}
		if _, err := s.Turn(ctx, "turn_x"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("no Turn: %v", err)
		}
	})
}

// A Turn is read back as it was stored: its endpoint from its public id
// when it names none, the managed path by default, times in UTC, limits
// in milliseconds, no actions as none.
func TestTurnIsReadAsStored(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		turnsWorld(t, s)
		x := aTurn("turn_1", "cx_thread-1", at0.In(time.FixedZone("east", 3600)))
		x.InactivityLimit, x.HardTimeout = 1500*time.Millisecond+time.Microsecond, time.Hour
		x.Actions, x.NewChanges = []domain.ProgressAction{}, []domain.TurnChange{{Path: "a"}}
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.InsertTurn(ctx, x) })
		got, err := s.Turn(ctx, "turn_1")
		if err != nil {
			t.Fatal(err)
		}
		if want := domain.ParseEndpoint("cx_thread-1"); got.Endpoint != want || want.Kind == domain.EndpointPane {
			t.Errorf("endpoint %+v, want %+v", got.Endpoint, want)
		}
		if got.DeliveryPath != domain.PathManaged || got.InactivityLimit != 1500*time.Millisecond || got.HardTimeout != time.Hour {
			t.Errorf("path %q, limits %v %v", got.DeliveryPath, got.InactivityLimit, got.HardTimeout)
		}
		if got.CreatedAt != at0 || got.CreatedAt.Location() != time.UTC || !got.AcceptedAt.IsZero() {
			t.Errorf("times %v %v", got.CreatedAt, got.AcceptedAt)
		}
		if got.Actions != nil || got.NewChanges != nil {
			t.Errorf("actions %#v, new changes %#v", got.Actions, got.NewChanges)
		}
		x.Actions, x.Revision = []domain.ProgressAction{{Type: "edit", Status: "ok"}}, 1
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.UpdateTurn(ctx, x) })
		if got, err := s.Turn(ctx, "turn_1"); err != nil || len(got.Actions) != 1 || got.Actions[0].Type != "edit" {
			t.Errorf("actions %+v, %v", got.Actions, err)
		}
	})
}

// Turns are listed newest first, by owner, state, terminal and holding;
// the recent Turns of endpoints come in one read, newest first.
func TestTurnsListed(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		turnsWorld(t, s)
		for i, c := range []struct{ id, term string }{{"turn_1", "term_1"}, {"turn_2", "term_2"}, {"turn_3", "term_1"}, {"turn_4", "term_1"}} {
			x := aTurn(c.id, c.term, at0.Add(time.Duration(i)*time.Second))
			if c.id != "turn_4" {
				x.State = domain.TurnCompleted
			}
			if c.id == "turn_2" {
				x.HostID = "host_b"
			}
			write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.InsertTurn(ctx, x) })
		}
		ids := func(f domain.TurnFilter) string {
			ts, err := s.Turns(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			out := ""
			for _, x := range ts {
				out += x.ID[5:]
			}
			return out
		}
		for _, c := range []struct {
			f    domain.TurnFilter
			want string
		}{
			{domain.TurnFilter{All: true}, "4321"}, {domain.TurnFilter{HostID: "host_a"}, "431"}, {domain.TurnFilter{}, ""},
			{domain.TurnFilter{All: true, State: domain.TurnCompleted}, "321"}, {domain.TurnFilter{All: true, Holding: true}, "4"},
			{domain.TurnFilter{All: true, Terminal: "term_2"}, "2"}, {domain.TurnFilter{All: true, Limit: 2}, "43"},
			{domain.TurnFilter{All: true, Owned: true}, "4321"},
		} {
			if got := ids(c.f); got != c.want {
				t.Errorf("%+v: %q, want %q", c.f, got, c.want)
			}
		}
		one, two := domain.EndpointRef{Kind: domain.EndpointPane, ID: "term_1"}, domain.EndpointRef{Kind: domain.EndpointPane, ID: "term_2"}
		recent, err := s.RecentTurnsOf(ctx, []domain.EndpointRef{one, two, {ID: "term_3"}}, 2)
		if err != nil || len(recent) != 2 || len(recent[one]) != 2 || recent[one][0].ID != "turn_4" || recent[one][1].ID != "turn_3" ||
			len(recent[two]) != 1 {
			t.Fatalf("recent %+v, %v", recent, err)
		}
		if c, err := s.Counts(ctx); err != nil || c.Turns[domain.TurnCompleted] != 3 || c.Turns[domain.TurnWorking] != 1 {
			t.Fatalf("counts %+v, %v", c, err)
		}
	})
}

// A session binds its thread once per revision.
func TestSessionBinds(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		turnsWorld(t, s)
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.BindSession(ctx, "ses_1", 1, "thread-1") })
		if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.BindSession(ctx, "ses_1", 1, "thread-2") }); !errors.Is(err, domain.ErrRevisionConflict) {
			t.Fatalf("a stale bind: %v", err)
		}
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			if got, err := tx.Session(ctx, "ses_1"); err != nil || got.NativeThreadID != "thread-1" || got.Revision != 2 {
				return fmt.Errorf("session in a transaction %+v, %v", got, err)
			}
			return nil
		})
		if _, err := s.Session(ctx, "ses_9"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("no session: %v", err)
		}
	})
}

// Transactions run as if one at a time: writers that each read a Turn and
// write it back in one transaction never meet a revision conflict and lose
// no write.
func TestWritersTakeTurns(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		turnsWorld(t, s)
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			return tx.InsertTurn(ctx, aTurn("turn_1", "term_1", at0))
		})
		const writers = 8
		errs := make(chan error, writers)
		for range writers {
			go func() {
				errs <- s.InTx(ctx, func(tx domain.Tx) error {
					x, err := tx.Turn(ctx, "turn_1")
					if err != nil {
						return err
					}
					x.LatestText += "a"
					return tx.UpdateTurn(ctx, x)
				})
			}()
		}
		for range writers {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if x, err := s.Turn(ctx, "turn_1"); err != nil || len(x.LatestText) != writers || x.Revision != 1+writers {
			t.Fatalf("after %d writers %q, revision %d, %v", writers, x.LatestText, x.Revision, err)
		}
	})
}
