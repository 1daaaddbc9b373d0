package callbacks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"akk/domain"
)

// DeliveryObserver is told about each attempt (metrics).
type DeliveryObserver func(eventType string, outcome string, d time.Duration)

// Dispatcher delivers outbox rows. It leases due rows, so a dispatcher that
// dies mid-delivery leaves rows that are retried once the lease expires; a
// receiver must deduplicate by webhook-id, as the Standard Webhooks spec says.
type Dispatcher struct {
	Store    domain.Store
	Clock    domain.Clock
	Policy   domain.RetryPolicy
	Client   *http.Client
	Log      *slog.Logger
	Observe  DeliveryObserver
	Lease    time.Duration // how long a claimed row is ours; default 2 min
	Parallel int           // concurrent deliveries, one per host at most; default 8
	// MaxWait bounds how long the dispatcher waits before it looks for
	// due rows again; default 1 min. A fleet node looks more often: a
	// dead node's leased rows become due without a wake.
	MaxWait time.Duration

	wake chan struct{}
	once sync.Once

	mu   sync.Mutex
	busy map[string]bool // hosts with a delivery in flight
}

// NewHTTPClient is the webhook client: 15 s timeout, no redirects followed.
func NewHTTPClient() *http.Client {
	return &http.Client{
		Timeout: 15 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

func (d *Dispatcher) init() {
	d.once.Do(func() {
		d.wake = make(chan struct{}, 1)
		if d.Client == nil {
			d.Client = NewHTTPClient()
		}
		if d.Log == nil {
			d.Log = slog.Default()
		}
		if d.Lease == 0 {
			d.Lease = 2 * time.Minute
		}
		if d.Parallel == 0 {
			d.Parallel = 8
		}
		if d.MaxWait == 0 {
			d.MaxWait = time.Minute
		}
		d.busy = map[string]bool{}
	})
}

// Wake makes the dispatcher look for due rows now. It never blocks.
func (d *Dispatcher) Wake() {
	d.init()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run delivers until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) {
	d.init()
	sem := make(chan struct{}, d.Parallel)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		now := d.Clock.Now()
		batch, err := d.Store.ClaimDueNotifications(ctx, now, now.Add(d.Lease), d.Parallel, d.busyHosts())
		if err != nil && ctx.Err() == nil {
			d.Log.Error("claim webhooks", "err", err)
		}
		for _, del := range batch {
			d.setBusy(del.HostID, true)
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { d.setBusy(del.HostID, false); <-sem; wg.Done(); d.Wake() }()
				d.deliver(ctx, del)
			}()
		}
		if len(batch) > 0 {
			continue
		}
		wait := d.MaxWait
		if next, ok, err := d.Store.NextNotificationDue(ctx); err == nil && ok {
			wait = min(max(next.Sub(d.Clock.Now()), 10*time.Millisecond), d.MaxWait)
		}
		if len(d.busyHosts()) > 0 {
			// The due rows may all be of hosts in flight: their deliveries
			// wake this loop when they end; do not spin meanwhile.
			wait = max(wait, min(250*time.Millisecond, d.MaxWait))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-d.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

func (d *Dispatcher) setBusy(host string, busy bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if busy {
		d.busy[host] = true
	} else {
		delete(d.busy, host)
	}
}

func (d *Dispatcher) busyHosts() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.busy))
	for h := range d.busy {
		out = append(out, h)
	}
	return out
}

func (d *Dispatcher) deliver(ctx context.Context, del domain.Delivery) {
	start := d.Clock.Now()
	code, retryAfter, err := d.send(ctx, del, start)
	err = withoutHeaderValues(err, del.Headers) // the error is logged and stored
	elapsed := d.Clock.Now().Sub(start)
	if ctx.Err() != nil {
		return // shutting down: the lease expires and the row is tried again
	}
	a := domain.Attempt{NotificationID: del.ID, At: start, StatusCode: code, Duration: elapsed, Lease: del.Lease}
	outcome := "delivered"
	if err == nil {
		a.State = domain.NotificationDelivered
	} else {
		a.Error = err.Error()
		if next, ok := d.Policy.After(start, del.Attempts+1, retryAfter); ok {
			a.State, a.NextAt, outcome = domain.NotificationPending, next, "retry"
		} else {
			a.State, outcome = domain.NotificationFailed, "failed"
		}
		d.Log.Warn("webhook delivery failed", "notification_id", del.ID, "type", del.Type,
			"attempt", del.Attempts+1, "status", code, "err", err, "next", a.NextAt)
	}
	if d.Observe != nil {
		d.Observe(del.Type, outcome, elapsed)
	}
	d.record(ctx, a)
}

// record stores an attempt's outcome. While the store is out of reach it
// tries again every second as long as the lease lasts: a row left leased
// would hold back every later callback of its Turn until the lease ends,
// then be delivered again (under its webhook-id).
func (d *Dispatcher) record(ctx context.Context, a domain.Attempt) {
	for {
		err := d.Store.RecordAttempt(context.WithoutCancel(ctx), a)
		if err == nil {
			return
		}
		d.Log.Error("record webhook attempt", "notification_id", a.NotificationID, "err", err)
		if domain.ErrorCode(err) != domain.CodeStoreUnavailable || !d.Clock.Now().Add(time.Second).Before(a.Lease) {
			return
		}
		t := d.Clock.NewTimer(time.Second, "webhook", "record")
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// send makes one signed POST. It returns the status code, the receiver's
// Retry-After, and an error unless the receiver answered 2xx.
func (d *Dispatcher) send(ctx context.Context, del domain.Delivery, at time.Time) (int, time.Duration, error) {
	sig, err := Sign(del.Secret, del.ID, at, del.Payload)
	if err != nil {
		return 0, 0, err
	}
	if del.PreviousSecret != "" && at.Before(del.PreviousSecretUntil) {
		// A receiver still on the rotated-out secret verifies this one.
		old, err := Sign(del.PreviousSecret, del.ID, at, del.Payload)
		if err != nil {
			return 0, 0, err
		}
		sig += " " + old
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, del.WebhookURL, bytes.NewReader(del.Payload))
	if err != nil {
		return 0, 0, fmt.Errorf("build request: %w", err)
	}
	// The host's own headers first: AKK's below always win (the host's
	// are validated never to name them).
	for name, value := range del.Headers {
		req.Header.Set(name, value)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "akk-webhooks/1")
	req.Header.Set("webhook-id", del.ID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	// The same key on every attempt: a receiver that deduplicates on
	// Idempotency-Key rather than webhook-id sees a retry as one.
	req.Header.Set("Idempotency-Key", del.ID)
	resp, err := d.Client.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("post: %w", withoutURLSecrets(err, del.WebhookURL))
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, 0, nil
	}
	return resp.StatusCode, retryAfter(resp.Header.Get("Retry-After"), at), fmt.Errorf("receiver answered %d", resp.StatusCode)
}

// withoutHeaderValues hides the host's header values in an error (a proxy
// or transport may echo a request's headers): it is logged and stored.
func withoutHeaderValues(err error, headers map[string]string) error {
	if err == nil || len(headers) == 0 {
		return err
	}
	msg := err.Error()
	redacted := msg
	for _, v := range headers {
		if v != "" {
			redacted = strings.ReplaceAll(redacted, v, "[redacted]")
		}
	}
	if redacted == msg {
		return err
	}
	return errors.New(redacted)
}

func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}

// withoutURLSecrets drops the path, query and credentials from the URL
// an HTTP client error names, and the path wherever else the message
// quotes it: a webhook URL may carry a token in any of them (Discord's and
// Slack's are in the path), and the error is logged and stored as the
// notification's last error. The scheme and host stay, to say where.
func withoutURLSecrets(err error, webhookURL string) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	inner := ue.Err
	if hook, perr := url.Parse(webhookURL); perr == nil && len(hook.EscapedPath()) > 1 {
		if msg := inner.Error(); strings.Contains(msg, hook.EscapedPath()) || strings.Contains(msg, hook.Path) {
			msg = strings.ReplaceAll(strings.ReplaceAll(msg, hook.EscapedPath(), "/[redacted]"), hook.Path, "/[redacted]")
			inner = errors.New(msg)
		}
	}
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.RawQuery, u.Fragment, u.User = "", "", nil
		if len(u.Path) > 1 {
			u.Path, u.RawPath = "/[redacted]", ""
		}
		return &url.Error{Op: ue.Op, URL: u.String(), Err: inner}
	}
	return &url.Error{Op: ue.Op, URL: "(webhook URL)", Err: inner}
}
