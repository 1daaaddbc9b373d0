package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"akk/callbacks"
)

// daemon is an akkd started in-process through run().
type daemon struct {
	url, token, stateDir string
	stop                 func()
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startDaemon(t testing.TB, stateDir string, env map[string]string) *daemon {
	t.Helper()
	getenv := func(k string) string {
		if k == "AKK_TMUX_DEFAULT_SOCKETS" && env["AKK_TMUX_SOCKETS"] != "" && env[k] == "" {
			return "off" // the test's own server only (see ownServerOnly)
		}
		return env[k]
	}
	var d *daemon
	for attempt := 1; ; attempt++ {
		addr := freeAddr(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			// Warnings and errors (a 5xx names its cause there) go to stderr.
			done <- run(ctx, []string{"akkd", "--listen", addr, "--state-dir", stateDir, "--log-level", "warn"}, getenv, os.Stderr)
		}()
		d = &daemon{url: "http://" + addr, stateDir: stateDir}
		d.stop = func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		}
		err := healthyOrExited(t, d.url, done)
		if err == nil {
			break
		}
		cancel()
		if attempt < 5 && portTaken(err, "") {
			continue
		}
		t.Fatalf("daemon exited: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(stateDir, "operator.token"))
	if err != nil {
		t.Fatal(err)
	}
	d.token = strings.TrimSpace(string(b))
	return d
}

func waitHealthy(t testing.TB, url string, done <-chan error) {
	t.Helper()
	if err := healthyOrExited(t, url, done); err != nil {
		t.Fatalf("daemon exited: %v", err)
	}
}

// healthyOrExited waits until the daemon at url answers its health check
// (nil) or exits (its error).
func healthyOrExited(t testing.TB, url string, done <-chan error) error {
	t.Helper()
	return healthyOrExitedWithin(t, url, done, 0)
}

// healthyOrExitedWithin is healthyOrExited with a bound of its own (20 s
// when 0).
func healthyOrExitedWithin(t testing.TB, url string, done <-chan error, within time.Duration) error {
	t.Helper()
	if within == 0 {
		within = 20 * time.Second
	}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			if err == nil {
				err = errors.New("exit status 0")
			}
			return err
		default:
		}
		resp, err := http.Get(url + "/v1/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("daemon did not become healthy")
	return nil
}

// portTaken: a daemon's start failed because another process took the port
// freeAddr found free before the daemon bound it; the start is tried again
// on another port.
func portTaken(err error, output string) bool {
	return strings.Contains(output, "address already in use") || (err != nil && strings.Contains(err.Error(), "address already in use"))
}

// call makes an authenticated JSON request and decodes the answer into out.
func call(t testing.TB, method, url, token, body string, out any) int {
	t.Helper()
	return callConv(t, method, url, token, body, "", out)
}

// callConv is call with an AKK-Conversation header.
func callConv(t testing.TB, method, url, token, body, conversation string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if conversation != "" {
		req.Header.Set("AKK-Conversation", conversation)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, url, b, err)
		}
	}
	return resp.StatusCode
}

// receiver is a webhook endpoint that records deliveries and can be made to fail.
type receiver struct {
	mu       sync.Mutex
	got      []delivery
	failNext int // answer 503 this many times first
	srv      *http.Server
	addr     string
	arrived  chan struct{}
}

type delivery struct {
	id, timestamp, signature string
	body                     []byte
	status                   int
	at                       time.Time // when it arrived
}

func newReceiver(t testing.TB, addr string) *receiver {
	t.Helper()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{addr: ln.Addr().String(), arrived: make(chan struct{}, 100)}
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		status := 204
		if r.failNext > 0 {
			r.failNext--
			status = 503
		}
		r.got = append(r.got, delivery{req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"),
			req.Header.Get("webhook-signature"), b, status, time.Now()})
		r.mu.Unlock()
		w.WriteHeader(status)
		select { // a full buffer has woken every waiter already
		case r.arrived <- struct{}{}:
		default:
		}
	})}
	go r.srv.Serve(ln)
	t.Cleanup(func() { r.srv.Close() })
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func (r *receiver) wait(t testing.TB, n int) []delivery {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for len(r.deliveries()) < n {
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("want %d deliveries, got %d", n, len(r.deliveries()))
		}
	}
	return r.deliveries()
}

type hostCreds struct {
	HostID        string `json:"host_id"`
	Token         string `json:"token"`
	WebhookSecret string `json:"webhook_secret"`
}

func verify(t *testing.T, secret string, d delivery) {
	t.Helper()
	var ts int64
	for _, c := range d.timestamp {
		ts = ts*10 + int64(c-'0')
	}
	want, err := callbacks.Sign(secret, d.id, time.Unix(ts, 0), d.body)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Fields(d.signature), want) {
		t.Fatalf("signature %q, want one of them %q", d.signature, want)
	}
}

// After a secret rotation both the new and the old secret sign, for the
// grace period, so a receiver can switch without refusing a delivery.
func TestRotatedSecretSignsBesideTheNewOne(t *testing.T) {
	rec := newReceiver(t, "")
	d := startDaemon(t, t.TempDir(), nil)
	defer d.stop()
	var h hostCreds
	call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"bot","webhook_url":"http://`+rec.addr+`/hook"}`, &h)
	call(t, "POST", d.url+"/v1/hosts/"+h.HostID+"/ping", d.token, "", nil)
	first := rec.wait(t, 1)[0]
	if n := len(strings.Fields(first.signature)); n != 1 {
		t.Fatalf("before any rotation %d signatures: %q", n, first.signature)
	}
	var rot struct {
		WebhookSecret string `json:"webhook_secret"`
	}
	call(t, "POST", d.url+"/v1/hosts/"+h.HostID+"/rotate-secret", d.token, "", &rot)
	call(t, "POST", d.url+"/v1/hosts/"+h.HostID+"/ping", d.token, "", nil)
	second := rec.wait(t, 2)[1]
	verify(t, rot.WebhookSecret, second)
	verify(t, h.WebhookSecret, second)
	if n := len(strings.Fields(second.signature)); n != 2 {
		t.Fatalf("after a rotation %d signatures: %q", n, second.signature)
	}
}

func TestPingWebhookRetriedThroughOutageWithSameID(t *testing.T) {
	rec := newReceiver(t, "")
	rec.failNext = 2
	d := startDaemon(t, t.TempDir(), map[string]string{"AKK_WEBHOOK_RETRY_SCHEDULE": "100ms,200ms,300ms"})
	defer d.stop()

	var h hostCreds
	if code := call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"bot","webhook_url":"http://`+rec.addr+`/hook"}`, &h); code != 201 {
		t.Fatalf("create host: %d", code)
	}
	if !strings.HasPrefix(h.WebhookSecret, "whsec_") || h.Token == "" {
		t.Fatalf("credentials: %+v", h)
	}
	var n struct {
		NotificationID string `json:"notification_id"`
	}
	if code := call(t, "POST", d.url+"/v1/hosts/"+h.HostID+"/ping", d.token, "", &n); code != 202 {
		t.Fatalf("ping: %d", code)
	}
	got := rec.wait(t, 3)
	for i, dl := range got {
		if dl.id != n.NotificationID {
			t.Errorf("attempt %d webhook-id %q, want %q", i, dl.id, n.NotificationID)
		}
		if string(dl.body) != string(got[0].body) {
			t.Errorf("attempt %d body changed", i)
		}
		verify(t, h.WebhookSecret, dl)
	}
	var env struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	json.Unmarshal(got[0].body, &env)
	if env.Type != "host.ping" || env.Data["host_id"] != h.HostID {
		t.Fatalf("body %s", got[0].body)
	}
	// The outbox shows the attempts and the final state.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list struct {
			Notifications []struct {
				State    string `json:"state"`
				Attempts int    `json:"attempts"`
			} `json:"notifications"`
		}
		call(t, "GET", d.url+"/v1/notifications", h.Token, "", &list)
		if len(list.Notifications) == 1 && list.Notifications[0].State == "delivered" {
			if list.Notifications[0].Attempts != 3 {
				t.Fatalf("attempts %d, want 3", list.Notifications[0].Attempts)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notification not delivered: %+v", list)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestOperatorTokenPersistsAndHostsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	d := startDaemon(t, dir, nil)
	var h hostCreds
	if code := call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"a","webhook_url":"http://127.0.0.1:9/x"}`, &h); code != 201 {
		t.Fatalf("create: %d", code)
	}
	first := d.token
	d.stop()

	st, err := os.Stat(filepath.Join(dir, "operator.token"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("operator.token mode: %v %v", st.Mode(), err)
	}
	for _, name := range []string{"akk.db", "akk.db-wal", "akk.db-shm", "akkd.lock"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().Perm() != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, st.Mode().Perm())
		}
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Fatalf("state dir mode %v", st.Mode())
	}
	d2 := startDaemon(t, dir, nil)
	defer d2.stop()
	if d2.token != first {
		t.Fatal("operator token changed across restart")
	}
	var list struct {
		Hosts []map[string]any `json:"hosts"`
	}
	if code := call(t, "GET", d2.url+"/v1/hosts", d2.token, "", &list); code != 200 || len(list.Hosts) != 1 {
		t.Fatalf("hosts after restart: %d %+v", code, list)
	}
	if _, ok := list.Hosts[0]["token"]; ok {
		t.Fatal("host list shows a token")
	}
	if _, ok := list.Hosts[0]["webhook_secret"]; ok {
		t.Fatal("host list shows a secret")
	}
	// The host token still works, and is not the operator: hosts are operator only.
	var p struct{ Code string }
	if code := call(t, "GET", d2.url+"/v1/hosts", h.Token, "", &p); code != 403 || p.Code != "forbidden" {
		t.Fatalf("host listing hosts: %d %s", code, p.Code)
	}
	if code := call(t, "GET", d2.url+"/v1/notifications", h.Token, "", nil); code != 200 {
		t.Fatalf("host token after restart: %d", code)
	}
	// The database keeps only the hash of tokens.
	db, _ := os.ReadFile(filepath.Join(dir, "akk.db"))
	wal, _ := os.ReadFile(filepath.Join(dir, "akk.db-wal"))
	if strings.Contains(string(db)+string(wal), h.Token) || strings.Contains(string(db)+string(wal), first) {
		t.Fatal("a token is stored in clear")
	}
}

// sseEvent is one parsed server-sent event.
type sseEvent struct{ id, event, data string }

// scanSSE reads an event stream, calling each with every event until it
// returns false or the stream ends, and says whether the stream opened
// with retry:.
func scanSSE(body io.Reader, each func(sseEvent) bool) (sawRetry bool, err error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "retry: "):
			sawRetry = true
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "event: "):
			cur.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
		case line == "" && (cur.id != "" || cur.event != ""): // screen events carry no id
			if !each(cur) {
				return sawRetry, nil
			}
			cur = sseEvent{}
		}
	}
	return sawRetry, sc.Err()
}

func readSSE(t *testing.T, url, token, lastID string, n int) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, ct)
	}
	var out []sseEvent
	sawRetry, err := scanSSE(resp.Body, func(e sseEvent) bool { out = append(out, e); return len(out) < n })
	if !sawRetry {
		t.Error("stream did not open with retry:")
	}
	if len(out) < n {
		t.Fatalf("got %d events, want %d: %v", len(out), n, err)
	}
	return out
}

func TestEventsStreamReplaysAfterLastEventIDAndScopesHosts(t *testing.T) {
	rec := newReceiver(t, "")
	d := startDaemon(t, t.TempDir(), nil)
	defer d.stop()
	var a, b hostCreds
	call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"a","webhook_url":"http://`+rec.addr+`/a"}`, &a)
	call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"b","webhook_url":"http://`+rec.addr+`/b"}`, &b)
	call(t, "POST", d.url+"/v1/hosts/"+a.HostID+"/ping", d.token, "", nil)
	call(t, "POST", d.url+"/v1/hosts/"+b.HostID+"/ping", d.token, "", nil)
	call(t, "POST", d.url+"/v1/hosts/"+a.HostID+"/ping", d.token, "", nil)

	// The operator sees everything from the start: 2 host.created + 3 pings.
	all := readSSE(t, d.url+"/v1/events?since=0", d.token, "", 5)
	if all[0].event != "host.created" || all[2].event != "host.ping" {
		t.Fatalf("operator stream: %+v", all)
	}
	// Host a sees only its own pings; resuming after the first replays the second.
	mine := readSSE(t, d.url+"/v1/events?since=0", a.Token, "", 2)
	for _, e := range mine {
		if e.event != "host.ping" || !strings.Contains(e.data, a.HostID) {
			t.Fatalf("host a saw %+v", e)
		}
	}
	resumed := readSSE(t, d.url+"/v1/events", a.Token, mine[0].id, 1)
	if resumed[0].id != mine[1].id {
		t.Fatalf("resume after %s gave %s, want %s", mine[0].id, resumed[0].id, mine[1].id)
	}
	// Live: a stream opened now gets an event stored after it connected.
	got := make(chan []sseEvent, 1)
	go func() { got <- readSSE(t, d.url+"/v1/events", b.Token, "", 1) }()
	time.Sleep(300 * time.Millisecond)
	call(t, "POST", d.url+"/v1/hosts/"+b.HostID+"/ping", d.token, "", nil)
	live := <-got
	if live[0].event != "host.ping" || !strings.Contains(live[0].data, b.HostID) {
		t.Fatalf("live event %+v", live[0])
	}
}

// A second daemon on the same state dir refuses to start (both would type
// into the same panes); once the first stops, a new one starts.
func TestSecondDaemonOnOneStateDirRefusesToStart(t *testing.T) {
	dir := t.TempDir()
	first := startDaemon(t, dir, nil)
	err := run(context.Background(), []string{"akkd", "--listen", freeAddr(t), "--state-dir", dir, "--log-level", "warn"}, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "already uses the state directory") || !strings.Contains(err.Error(), strconv.Itoa(os.Getpid())) {
		t.Fatalf("second daemon: %v", err)
	}
	first.stop()
	startDaemon(t, dir, nil).stop()
}

// A receiver that hangs holds up only its own host: host B's ping arrives
// while host A's deliveries are all still hanging.
func TestHangingReceiverDelaysOnlyItsHost(t *testing.T) {
	release := make(chan struct{})
	var hung atomic.Int32
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hung.Add(1)
		<-release
	}))
	defer hang.Close()
	defer close(release)
	rec := newReceiver(t, "")
	d := startDaemon(t, t.TempDir(), nil)
	defer d.stop()
	var a, b hostCreds
	call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"a","webhook_url":"`+hang.URL+`/a"}`, &a)
	call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"b","webhook_url":"http://`+rec.addr+`/b"}`, &b)
	for range 8 {
		call(t, "POST", d.url+"/v1/hosts/"+a.HostID+"/ping", d.token, "", nil)
	}
	deadline := time.Now().Add(10 * time.Second)
	for hung.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("host A's receiver was never called")
		}
		time.Sleep(10 * time.Millisecond)
	}
	call(t, "POST", d.url+"/v1/hosts/"+b.HostID+"/ping", d.token, "", nil)
	// B's ping must arrive before A's attempts could end (the webhook
	// client waits 15 s): while all of them still hang.
	select {
	case <-rec.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("host B's ping waited behind host A's hanging receiver")
	}
	if n := hung.Load(); n != 1 {
		t.Fatalf("host A had %d deliveries in flight at once, want 1", n)
	}
}

// The on/off switches take on or off, from a flag or the environment, and
// refuse anything else with the flag's name.
func TestOnOffSwitches(t *testing.T) {
	env := map[string]string{"AKK_CODEX_BACKEND": "off", "AKK_STATE_DIR": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	bare := func(k string) string { return map[string]string{"AKK_STATE_DIR": env["AKK_STATE_DIR"]}[k] }
	cfg, err := parseConfig([]string{"akkd", "--tmux-control", "off"}, getenv, io.Discard)
	if err != nil || !cfg.noControl || !cfg.noBackend {
		t.Fatalf("off and off: %+v %v", cfg, err)
	}
	if cfg, err = parseConfig([]string{"akkd"}, bare, io.Discard); err != nil || cfg.noControl || cfg.noBackend {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	if cfg.onlyListed {
		t.Fatal("the user's socket folder is listed by default")
	}
	if cfg, err = parseConfig([]string{"akkd", "--tmux-default-sockets", "off"}, bare, io.Discard); err != nil || !cfg.onlyListed {
		t.Fatalf("--tmux-default-sockets off: %+v %v", cfg, err)
	}
	for _, args := range [][]string{{"akkd", "--codex-backend", "yes"}, {"akkd", "--tmux-control", "1"}, {"akkd", "--tmux-default-sockets", "no"}} {
		if _, err := parseConfig(args, bare, io.Discard); err == nil || !strings.Contains(err.Error(), args[1]) {
			t.Fatalf("%v: %v", args, err)
		}
	}
}

// --codex-homes takes absolute Codex homes, colon-separated, from the flag or
// AKK_CODEX_HOMES, and needs the backend on.
func TestCodexHomes(t *testing.T) {
	state := t.TempDir()
	env := map[string]string{"AKK_STATE_DIR": state, "AKK_CODEX_HOMES": "/home/a/.codex: /srv/codex/ "}
	cfg, err := parseConfig([]string{"akkd"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || strings.Join(cfg.codexHomes, ",") != "/home/a/.codex,/srv/codex" {
		t.Fatalf("from the environment: %q %v", cfg.codexHomes, err)
	}
	bare := func(k string) string { return map[string]string{"AKK_STATE_DIR": state}[k] }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"akkd", "--codex-homes", "relative/.codex"}, "not an absolute path"},
		{[]string{"akkd", "--codex-homes", "/h/.codex", "--codex-backend", "off"}, "needs --codex-backend on"},
	} {
		if _, err := parseConfig(c.args, bare, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// --codex-projects takes existing absolute folders (each once), needs a
// Codex home, and finds codex on PATH unless --codex-bin names it.
func TestCodexProjects(t *testing.T) {
	state, p1, p2 := t.TempDir(), t.TempDir(), t.TempDir()
	bin := filepath.Join(t.TempDir(), "codex")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AKK_STATE_DIR": state, "AKK_CODEX_HOMES": "/h/.codex:/g/.codex",
		"AKK_CODEX_PROJECTS": p1 + ":" + p2 + "/:" + p1, "AKK_CODEX_BIN": bin}
	cfg, err := parseConfig([]string{"akkd"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || strings.Join(cfg.codexProjects, ",") != p1+","+p2 || cfg.codexBin != bin {
		t.Fatalf("from the environment: %q %q %v", cfg.codexProjects, cfg.codexBin, err)
	}
	delete(env, "AKK_CODEX_BIN")
	t.Setenv("PATH", filepath.Dir(bin)) // exec.LookPath reads the process's own
	if cfg, err = parseConfig([]string{"akkd"}, func(k string) string { return env[k] }, io.Discard); err != nil || cfg.codexBin != bin {
		t.Fatalf("codex on PATH: %q %v", cfg.codexBin, err)
	}
	t.Setenv("PATH", "")
	file := filepath.Join(p1, "f")
	os.WriteFile(file, nil, 0o644)
	base := []string{"akkd", "--state-dir", state}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--codex-homes", "/h", "--codex-projects", "rel", "--codex-bin", bin}, "not an absolute path"},
		{[]string{"--codex-homes", "/h", "--codex-projects", p1 + "/missing", "--codex-bin", bin}, "is not a folder"},
		{[]string{"--codex-homes", "/h", "--codex-projects", file, "--codex-bin", bin}, "is not a folder"},
		{[]string{"--codex-projects", p1, "--codex-bin", bin}, "needs --codex-homes"},
		{[]string{"--codex-homes", "/h", "--codex-projects", p1}, "--codex-bin"},
		{[]string{"--codex-homes", "/h", "--codex-projects", p1, "--codex-bin", file}, "not an executable"},
		{[]string{"--codex-homes", "/h", "--codex-bin", bin}, "only used with --codex-projects"},
	} {
		if _, err := parseConfig(append(base, c.args...), func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// --version prints the stamped version and starts nothing; --log-format
// json writes one JSON object a line; any other format is refused.
func TestVersionAndLogFormat(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"akkd", "--version"}, func(string) string { return "" }, &out); err != nil || out.String() != "akkd "+version+"\n" {
		t.Fatalf("--version: %v %q", err, out.String())
	}
	if _, err := parseConfig([]string{"akkd", "--log-format", "yaml"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "--log-format") {
		t.Fatalf("--log-format yaml: %v", err)
	}
	env := map[string]string{"AKK_STATE_DIR": t.TempDir(), "AKK_LOG_FORMAT": "json", "AKK_TMUX_DEFAULT_SOCKETS": "off", "AKK_CODEX_BACKEND": "off"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"akkd", "--listen", freeAddr(t)}, func(k string) string { return env[k] }, &logs)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "listening") {
		if time.Now().After(deadline) {
			t.Fatalf("no listening line in 30 s: %q", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["level"] == nil || rec["msg"] == nil {
			t.Fatalf("not a JSON log line: %q (%v)", l, err)
		}
	}
}
