package domain_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"akk/domain"
)

type fakeThreads []domain.NativeThread

func (f fakeThreads) Threads(context.Context, domain.Terminal) ([]domain.NativeThread, error) {
	return append([]domain.NativeThread(nil), f...), nil
}

func TestThreadsNewestFirstWithDisplayIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()} // shows thread-1
		w := newWorldRedacting(t, "", ft, secretRedactor{})
		now := w.now()
		w.svc.UseThreads(fakeThreads{
			{NativeThreadID: "aaaaaaaa-0000-4000-8000-000000000001", Title: "old", UpdatedAt: now.Add(-time.Hour)},
			{NativeThreadID: "thread-1", Title: "  the current one with sk-live-SECRET  ", UpdatedAt: now},
			{NativeThreadID: "aaaaaaaa-0000-4000-8000-000000000002", Title: strings.Repeat("x", 300), UpdatedAt: now.Add(-time.Minute)},
		})
		l, err := w.svc.Threads(w.host, "term_a")
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Threads) != 3 || l.Threads[0].NativeThreadID != "thread-1" || !l.Threads[0].Current || l.Threads[1].Current {
			t.Fatalf("order/current %+v", l.Threads)
		}
		for i, th := range l.Threads {
			if th.Number != i+1 {
				t.Fatalf("number %+v", th)
			}
		}
		if l.Threads[0].Title != "the current one with [REDACTED]" || len([]rune(l.Threads[1].Title)) > domain.ThreadTitleLimit {
			t.Fatalf("titles %+v", l.Threads)
		}
		// Two ids that share their first 8 characters get longer short ids.
		flat := func(id string) string { return strings.ReplaceAll(id, "-", "") }
		if a, b := l.Threads[1].ShortID, l.Threads[2].ShortID; a == b || len(a) <= 8 ||
			!strings.HasPrefix(flat(l.Threads[1].NativeThreadID), a) || !strings.HasPrefix(flat(l.Threads[2].NativeThreadID), b) {
			t.Fatalf("short ids %q %q", a, b)
		}
		if l.SnapshotID == "" || l.ExpiresAt.Sub(w.now()) > domain.ThreadSnapshotTTL {
			t.Fatalf("snapshot %+v", l)
		}
		if _, err := w.svc.Threads(w.host, "term_gone"); err == nil {
			t.Fatal("an unknown terminal listed")
		}
	})
}
