package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-port", "0", "-quiet"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(strings.TrimPrefix(line, "fakemodel listening on "))
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q does not give a loopback URL", line)
	}
	go io.Copy(io.Discard, pr)
	resp, err := http.Get(url + "/_fake/requests")
	if err != nil {
		t.Fatal(err)
	}
	var reqs []any
	err = json.NewDecoder(resp.Body).Decode(&reqs)
	resp.Body.Close()
	if err != nil || len(reqs) != 0 {
		t.Fatalf("request log %v, %v; want an empty list", reqs, err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after its context was cancelled")
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	if err := run(context.Background(), []string{"-port", "nope"}, io.Discard, io.Discard); err == nil {
		t.Fatal("run accepted a bad -port")
	}
}
