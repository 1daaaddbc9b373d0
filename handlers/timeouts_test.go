package handlers_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// With a read timeout on the server, a client that declares a body and
// sends one byte loses its connection, while an event stream stays open
// past the timeout and still receives events.
func TestReadTimeoutCutsSlowBodiesNotEventStreams(t *testing.T) {
	e := newEnv(t, 300*time.Millisecond)
	const timeout = 200 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: e.h, ReadHeaderTimeout: timeout, ReadTimeout: timeout}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()

	// A slow body: the server answers or closes; it never waits forever.
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.Write([]byte("POST /v1/hosts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + e.operator + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"))
	slow.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := bufio.NewReader(slow).ReadString('\n'); err != nil && !strings.Contains(err.Error(), "EOF") && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("slow body: %v (the server held the connection)", err)
	}

	// An event stream: still open after several read timeouts, and an
	// event created then arrives.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/v1/events?since=0", nil)
	req.Header.Set("Authorization", "Bearer "+e.operator)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	time.Sleep(4 * timeout) // let the read deadline pass
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), ": ping") {
			return // a heartbeat written after the read deadline passed
		}
	}
	t.Fatalf("the event stream ended: %v", lines.Err())
}
