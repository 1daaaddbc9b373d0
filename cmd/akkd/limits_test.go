package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"akk/handlers"
)

// openStream opens GET /v1/events with token and, when it is 200, reads
// up to its opening retry: line. The caller closes the body.
func openStream(t *testing.T, url, token string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode == 200 {
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "retry:") {
			t.Fatalf("stream opened with %q: %v", line, err)
		}
	}
	return resp
}

// timedGet answers within limit or fails the test.
func timedGet(t *testing.T, url, token string, limit time.Duration) int {
	t.Helper()
	c := &http.Client{Timeout: limit, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s after %v: %v", url, time.Since(start), err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Connections that sent nothing do not hold the daemon: with more of them
// open than the connection cap, health and the operator are answered at
// once, and the idle sockets are closed.
func TestIdleSocketsDoNotDelayHealth(t *testing.T) {
	d := startDaemon(t, t.TempDir(), nil)
	defer d.stop()
	addr := strings.TrimPrefix(d.url, "http://")
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range maxConnections + 88 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	if status := timedGet(t, d.url+"/v1/health", "", 2*time.Second); status != 200 {
		t.Fatalf("health: %d", status)
	}
	if status := timedGet(t, d.url+"/v1/hosts", d.token, 2*time.Second); status != 200 {
		t.Fatalf("operator: %d", status)
	}
	// The oldest idle socket was closed to make room.
	idle[0].SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := idle[0].Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Fatalf("the oldest idle socket is still open: %v", err)
	}
}

// One host holds at most handlers.MaxStreamsPerHost event streams; the
// next is 429 stream_limit_reached, while the operator and health are
// still served, and a closed stream frees its place.
func TestEventStreamsPerHostAreCapped(t *testing.T) {
	d := startDaemon(t, t.TempDir(), nil)
	defer d.stop()
	var h hostCreds
	if status := call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"a","webhook_url":"http://127.0.0.1:9/a"}`, &h); status != 201 {
		t.Fatalf("create host: %d", status)
	}
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	for range handlers.MaxStreamsPerHost {
		r := openStream(t, d.url, h.Token)
		open = append(open, r)
		if r.StatusCode != 200 {
			t.Fatalf("stream %d: %d", len(open), r.StatusCode)
		}
	}
	r := openStream(t, d.url, h.Token)
	var p struct{ Code string }
	json.NewDecoder(r.Body).Decode(&p)
	r.Body.Close()
	if r.StatusCode != 429 || p.Code != "stream_limit_reached" || r.Header.Get("Content-Type") != "application/problem+json" {
		t.Fatalf("a stream beyond the cap: %d %q %s", r.StatusCode, p.Code, r.Header.Get("Content-Type"))
	}
	op := openStream(t, d.url, d.token)
	open = append(open, op)
	if op.StatusCode != 200 {
		t.Fatalf("operator stream: %d", op.StatusCode)
	}
	if status := timedGet(t, d.url+"/v1/health", "", 2*time.Second); status != 200 {
		t.Fatalf("health: %d", status)
	}
	open[0].Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := openStream(t, d.url, h.Token)
		if r.StatusCode == 200 {
			open = append(open, r)
			break
		}
		r.Body.Close()
		if time.Now().After(deadline) {
			t.Fatalf("a closed stream's place was not freed: %d", r.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
