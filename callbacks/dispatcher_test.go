package callbacks_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"

	"akk/callbacks"
	"akk/domain"
	"akk/persistence"
	"akk/persistence/storetest"
)

type randomIDs struct{}

func (randomIDs) New(p string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return p + "_" + hex.EncodeToString(b)
}
func (randomIDs) Secret(n int) []byte { b := make([]byte, n); rand.Read(b); return b }

var operator = domain.WithPrincipal(context.Background(), domain.Principal{Operator: true})

func newService(t *testing.T) (*domain.Service, *persistence.Store) {
	t.Helper()
	store, err := storetest.OpenLocation(context.Background(), storetest.NewLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return domain.NewService(store, quartz.NewReal(), randomIDs{}, nil), store
}

// runDispatcher delivers until the test ends.
func runDispatcher(t *testing.T, d *callbacks.Dispatcher) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

// hookReceiver records each delivery's headers; it answers 503 failFirst
// times, then 204.
type hookReceiver struct {
	mu        sync.Mutex
	got       []http.Header
	failFirst int
	srv       *httptest.Server
}

func newHookReceiver(t *testing.T, failFirst int) *hookReceiver {
	r := &hookReceiver{failFirst: failFirst}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, req.Header.Clone())
		if len(r.got) <= r.failFirst {
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(204)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) wait(t *testing.T, n int) []http.Header {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		got := append([]http.Header(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d deliveries, got %d", n, len(got))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A host's own headers arrive exactly as registered, beside the Standard
// Webhooks ones, and Idempotency-Key is the webhook-id on the first
// attempt and on the retry.
func TestDeliveryCarriesHostHeadersAndIdempotencyKey(t *testing.T) {
	svc, store := newService(t)
	rec := newHookReceiver(t, 1)
	headers := map[string]string{"Authorization": "Bearer hooks-token-1", "x-openclaw-token": "hooks-token-2", "X-Empty-ish": "a b:c"}
	c, err := svc.RegisterHost(operator, domain.NewHost{Name: "claw", WebhookURL: rec.srv.URL + "/hooks/akk", WebhookHeaders: headers})
	if err != nil {
		t.Fatal(err)
	}
	n, err := svc.PingHost(operator, c.Host.ID)
	if err != nil {
		t.Fatal(err)
	}
	d := &callbacks.Dispatcher{Store: store, Clock: quartz.NewReal(),
		Policy: domain.RetryPolicy{Schedule: []time.Duration{20 * time.Millisecond, 20 * time.Millisecond}}}
	runDispatcher(t, d)
	got := rec.wait(t, 2)
	for i, h := range got {
		for name, value := range headers {
			if v := h.Values(name); len(v) != 1 || v[0] != value {
				t.Errorf("attempt %d: %s is %q, want %q", i, name, v, value)
			}
		}
		if h.Get("webhook-id") != n.ID || h.Get("Idempotency-Key") != n.ID || len(h.Values("Idempotency-Key")) != 1 {
			t.Errorf("attempt %d: webhook-id %q, Idempotency-Key %q, want %q", i, h.Get("webhook-id"), h.Values("Idempotency-Key"), n.ID)
		}
		if h.Get("webhook-signature") == "" || h.Get("webhook-timestamp") == "" || h.Get("Content-Type") != "application/json" ||
			h.Get("User-Agent") != "akk-webhooks/1" {
			t.Errorf("attempt %d: AKK's own headers %v", i, h)
		}
	}
	// A replaced webhook: the next delivery carries the new headers only.
	if _, err := svc.SetHostWebhook(operator, c.Host.ID, domain.HostWebhook{URL: rec.srv.URL + "/hooks/akk", Headers: map[string]string{"X-Other": "v2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PingHost(operator, c.Host.ID); err != nil {
		t.Fatal(err)
	}
	d.Wake()
	h := rec.wait(t, 3)[2]
	if h.Get("X-Other") != "v2" || h.Get("Authorization") != "" || h.Get("X-Openclaw-Token") != "" {
		t.Fatalf("after the replace: %v", h)
	}
	// The host.* events (streamed in /v1/events) name the headers only.
	evs, err := svc.EventsAfter(context.Background(), domain.Principal{Operator: true}, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if b, _ := json.Marshal(e.Data); strings.Contains(string(b), "hooks-token") || strings.Contains(string(b), "\"v2\"") {
			t.Fatalf("event %s carries a header value: %s", e.Type, b)
		}
	}
}

// failingTransport fails every request with an error that quotes its
// Authorization header, as a proxy might.
type failingTransport struct{}

func (failingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return nil, errors.New("proxy refused request with Authorization " + req.Header.Get("Authorization"))
}

// An error that would quote a header value is stored and logged with the
// value redacted.
func TestDeliveryErrorNeverHoldsAHeaderValue(t *testing.T) {
	svc, store := newService(t)
	const secret = "Bearer hooks-token-9c1e"
	c, err := svc.RegisterHost(operator, domain.NewHost{Name: "claw", WebhookURL: "http://127.0.0.1:9/hooks",
		WebhookHeaders: map[string]string{"Authorization": secret}})
	if err != nil {
		t.Fatal(err)
	}
	n, err := svc.PingHost(operator, c.Host.ID)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	runDispatcher(t, &callbacks.Dispatcher{Store: store, Clock: quartz.NewReal(), Policy: domain.RetryPolicy{},
		Client: &http.Client{Transport: failingTransport{}},
		Log:    slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))})
	deadline := time.Now().Add(10 * time.Second)
	for {
		cur, err := store.Notification(context.Background(), n.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.State == domain.NotificationFailed {
			if !strings.Contains(cur.LastError, "proxy refused") || !strings.Contains(cur.LastError, "[redacted]") || strings.Contains(cur.LastError, "hooks-token") {
				t.Fatalf("stored error %q", cur.LastError)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notification %+v", cur)
		}
		time.Sleep(5 * time.Millisecond)
	}
	ns, _ := svc.Notifications(operator, domain.NotificationFilter{})
	for _, x := range ns {
		if strings.Contains(x.LastError, "hooks-token") {
			t.Fatalf("listed error %q", x.LastError)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "webhook delivery failed") || strings.Contains(logs.String(), "hooks-token") {
		t.Fatalf("log %q", logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// flakyAttempts is a store whose first fail RecordAttempt calls find the
// store out of reach.
type flakyAttempts struct {
	*persistence.Store
	mu   sync.Mutex
	fail int
}

func (f *flakyAttempts) RecordAttempt(ctx context.Context, a domain.Attempt) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail > 0 {
		f.fail--
		return &domain.Error{Code: domain.CodeStoreUnavailable, Message: "the store cannot be reached"}
	}
	return f.Store.RecordAttempt(ctx, a)
}

// A delivery whose outcome cannot be stored at once (the store out of
// reach) is stored once the store answers, every second while its lease
// lasts: left leased, it would hold back every later callback of its Turn
// until the lease ended, and be delivered again.
func TestDeliveryOutcomeStoredOnceTheStoreIsBack(t *testing.T) {
	ctx := context.Background()
	svc, store := newService(t)
	rec := newHookReceiver(t, 0)
	c, err := svc.RegisterHost(operator, domain.NewHost{Name: "h", WebhookURL: rec.srv.URL + "/h"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := svc.PingHost(operator, c.Host.ID)
	if err != nil {
		t.Fatal(err)
	}
	mock := quartz.NewMock(t)
	mock.Set(time.Now())
	trap := mock.Trap().NewTimer("webhook", "record")
	defer trap.Close()
	runDispatcher(t, &callbacks.Dispatcher{Store: &flakyAttempts{Store: store, fail: 2}, Clock: mock, Policy: domain.RetryPolicy{}})
	rec.wait(t, 1)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for range 2 {
		trap.MustWait(wctx).MustRelease(wctx)
		mock.Advance(time.Second).MustWait(wctx)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		cur, err := store.Notification(ctx, n.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.State == domain.NotificationDelivered && cur.Attempts == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notification %+v", cur)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := len(rec.wait(t, 1)); got != 1 {
		t.Fatalf("%d deliveries", got)
	}
}

// BenchmarkDispatcher is one dispatcher delivering a backlog of 1,200
// pings of 24 hosts to a local receiver that answers at once, on each
// engine: deliveries per second.
func BenchmarkDispatcher(b *testing.B) {
	for _, engine := range storetest.Engines {
		b.Run(engine, func(b *testing.B) {
			store := storetest.OpenOn(b, engine)
			svc := domain.NewService(store, quartz.NewReal(), randomIDs{}, nil)
			var mu sync.Mutex
			got := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got++
				mu.Unlock()
				w.WriteHeader(204)
			}))
			defer srv.Close()
			var hosts []string
			for i := range 24 {
				c, err := svc.RegisterHost(operator, domain.NewHost{Name: "h" + string(rune('a'+i)), WebhookURL: srv.URL + "/h"})
				if err != nil {
					b.Fatal(err)
				}
				hosts = append(hosts, c.Host.ID)
			}
			for i := range 1200 {
				if _, err := svc.PingHost(operator, hosts[i%24]); err != nil {
					b.Fatal(err)
				}
			}
			mu.Lock()
			got = 0
			mu.Unlock()
			b.ResetTimer()
			d := &callbacks.Dispatcher{Store: store, Clock: quartz.NewReal(), Policy: domain.DefaultRetryPolicy(),
				Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { d.Run(ctx); close(done) }()
			t0 := time.Now()
			for {
				mu.Lock()
				n := got
				mu.Unlock()
				if n >= 1200 {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			elapsed := time.Since(t0)
			cancel()
			<-done
			b.ReportMetric(1200/elapsed.Seconds(), "deliveries/s")
		})
	}
}
