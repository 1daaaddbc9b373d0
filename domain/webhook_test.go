package domain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"akk/callbacks"
	"akk/domain"
	"akk/persistence/storetest"
)

// A host subscribed to turn.completed only: turn.accepted is stored and
// streamed but queues no webhook, so it cannot hold back the completion;
// host.ping is delivered all the same.
func TestOnlySubscribedEventsAreDelivered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var types []string
		// The host's receiver is served in the test's bubble: the
		// dispatcher's client hands each request to it, with no network.
		srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var env struct {
				Type string `json:"type"`
			}
			b, _ := io.ReadAll(r.Body)
			json.Unmarshal(b, &env)
			mu.Lock()
			types = append(types, env.Type)
			mu.Unlock()
			w.WriteHeader(204)
		})
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		op := domain.WithPrincipal(context.Background(), domain.Principal{Operator: true})
		p, _ := domain.PrincipalFrom(w.host)
		hostID := p.HostID
		if _, err := w.svc.SetHostWebhook(op, hostID, domain.HostWebhook{URL: "http://127.0.0.1:9/hooks", Events: []string{"turn.completed"}}); err != nil {
			t.Fatal(err)
		}
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "fix the bug", MessageID: "m-1"})
		if err != nil {
			t.Fatal(err)
		}
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true, NativeTurnID: "nt-1"} })
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		ft.set(func(f *fakeTerm) { f.progress.Completed, f.progress.FinalMessage = true, "fixed" })
		w.waitState(t, r.Turn.ID, domain.TurnCompleted)
		if got := webhookTypes(t, w, r.Turn.ID); len(got) != 1 || got[0] != "turn.completed" {
			t.Fatalf("queued webhooks %v", got)
		}
		evs, err := w.svc.EventsAfter(context.Background(), domain.Principal{Operator: true}, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(evs, func(e domain.Event) bool { return e.Type == "turn.accepted" && e.Subject == r.Turn.ID }) {
			t.Fatal("turn.accepted is not in the event store")
		}
		if _, err := w.svc.PingHost(op, hostID); err != nil {
			t.Fatal(err)
		}
		recorded := &changes{ch: make(chan struct{})}
		d := &callbacks.Dispatcher{Store: attemptStore{w.store, recorded}, Clock: w.clock, Policy: domain.RetryPolicy{},
			Client: &http.Client{Transport: served{srv}}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { d.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		// Nothing else arrives later: nothing waits in the outbox once the
		// deliveries are recorded.
		w.untilOn(t, recorded.next, func() string {
			if _, pending, err := w.store.NextNotificationDue(context.Background()); err != nil || pending {
				return fmt.Sprintf("the outbox still holds a delivery (%v)", err)
			}
			return ""
		})
		mu.Lock()
		defer mu.Unlock()
		got := slices.Clone(types)
		slices.Sort(got)
		if len(got) != 2 || got[0] != "host.ping" || got[1] != "turn.completed" {
			t.Fatalf("delivered %v", got)
		}
	})
}

// attemptStore tells recorded of each delivery attempt once it is stored.
type attemptStore struct {
	storetest.Store
	recorded *changes
}

func (s attemptStore) RecordAttempt(ctx context.Context, a domain.Attempt) error {
	defer s.recorded.fire()
	return s.Store.RecordAttempt(ctx, a)
}

// served is a RoundTripper that hands each request to a handler.
type served struct{ h http.Handler }

func (s served) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}
