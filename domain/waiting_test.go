package domain_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"akk/domain"
)

// A waiting Turn says since when: the event that announced its prompt, on
// its status and on its row, whatever time passed since;
// a prompt in a pane no Turn holds, since this daemon first saw it, the
// same across listings until another prompt shows.
func TestWaitingSince(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, _, id := awaitingTurn(t)
		evs, err := w.store.EventsAfter(context.Background(), 0, domain.EventFilter{All: true, Subject: id}, 100)
		if err != nil {
			t.Fatal(err)
		}
		var announced time.Time
		for _, e := range evs {
			if e.Type == "turn.approval_required" {
				announced = e.CreatedAt
			}
		}
		w.Advance(30 * time.Second) // later, within the world's inactivity window (a minute)
		st, err := w.svc.Turn(w.host, id)
		if err != nil || announced.IsZero() || !st.WaitingSince.Equal(announced) {
			t.Fatalf("status waiting since %v, announced %v (%v)", st.WaitingSince, announced, err)
		}
		l, err := w.svc.List(w.host)
		if err != nil || len(l.Conversations) != 1 {
			t.Fatal(err)
		}
		if c := l.Conversations[0]; !c.WaitingSince.Equal(announced) || c.Approval == nil || !c.Approval.WaitingSince.Equal(announced) {
			t.Fatalf("row waiting since %v, its prompt %+v", c.WaitingSince, c.Approval)
		}
		if _, err := w.svc.Close(w.host, id, "test"); err != nil {
			t.Fatal(err)
		}

		// No Turn: first sight, kept across listings.
		list := func() time.Time {
			t.Helper()
			l, err := w.svc.List(w.host)
			if err != nil || len(l.Conversations) != 1 || l.Conversations[0].Approval == nil {
				t.Fatalf("list %+v %v", l, err)
			}
			return l.Conversations[0].Approval.WaitingSince
		}
		first := list()
		w.Advance(time.Minute)
		if again := list(); first.IsZero() || !again.Equal(first) {
			t.Fatalf("first seen %v, then %v", first, again)
		}
	})
}
