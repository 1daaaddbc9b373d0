package handlers_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"akk/handlers"
)

// mcpPost sends one JSON-RPC message to /mcp, on session sid when given,
// and returns the status and the session id the answer names.
func mcpPost(t *testing.T, url, token, sid, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

const mcpToolsList = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`

// eventually polls cond until it holds, or fails after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A session counts toward its principal's limit from its initialize on;
// one that never finishes its handshake ends after the handshake timeout,
// for AKK and for the SDK alike, and a session id AKK does not know is
// 404 for everyone.
func TestMCPUnfinishedSessionsCountAndExpire(t *testing.T) {
	// No session may idle long enough to make room (on a busy machine the
	// sixteen initializes took longer than the default second, and the
	// first made room for the seventeenth), and the handshake timeout
	// leaves the sixteen initializes ample time.
	e := newEnvWith(t, func(d *handlers.Deps) {
		d.MCPHandshakeTimeout = 4 * time.Second
		d.MCPIdleBeforeEviction = time.Hour
	})
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	a := createHost(t, e, "a")
	b := createHost(t, e, "b")
	var ids []string
	for range handlers.MaxMCPSessions {
		status, sid := mcpPost(t, srv.URL, a.Token, "", mcpInitialize)
		if status != 200 || sid == "" {
			t.Fatalf("initialize: %d %q", status, sid)
		}
		ids = append(ids, sid)
	}
	if status, _ := mcpPost(t, srv.URL, a.Token, "", mcpInitialize); status != 429 {
		t.Fatalf("an initialize beyond the limit of unfinished sessions: %d", status)
	}
	// The unfinished sessions end, and no one may use their ids.
	for _, id := range ids {
		eventually(t, "an unfinished session expires", func() bool {
			status, _ := mcpPost(t, srv.URL, a.Token, id, mcpToolsList)
			return status == 404
		})
		for _, tok := range []string{b.Token, e.operator} {
			if status, _ := mcpPost(t, srv.URL, tok, id, mcpToolsList); status != 404 {
				t.Fatalf("an expired session's id: %d", status)
			}
		}
	}
	eventually(t, "the places are free", func() bool {
		status, _ := mcpPost(t, srv.URL, a.Token, "", mcpInitialize)
		return status == 200
	})
	if status, _ := mcpPost(t, srv.URL, b.Token, "mcp_nosuchsession", mcpToolsList); status != 404 {
		t.Fatalf("an unknown session id: %d", status)
	}
}

// A one-shot client opens a session per call and never closes it: at
// the limit, its principal's longest-idle session ends to make room, so
// the next call is served, not refused.
func TestMCPLimitEndsTheLongestIdleSession(t *testing.T) {
	e := newEnvWith(t, func(d *handlers.Deps) { d.MCPIdleBeforeEviction = 50 * time.Millisecond })
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	a := createHost(t, e, "a")
	oneShot := func() string {
		t.Helper()
		status, sid := mcpPost(t, srv.URL, a.Token, "", mcpInitialize)
		if status != 200 || sid == "" {
			t.Fatalf("initialize: %d", status)
		}
		if status, _ := mcpPost(t, srv.URL, a.Token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != 202 {
			t.Fatalf("initialized: %d", status)
		}
		if status, _ := mcpPost(t, srv.URL, a.Token, sid, mcpToolsList); status != 200 {
			t.Fatalf("tools/list: %d", status)
		}
		return sid
	}
	var ids []string
	for range handlers.MaxMCPSessions {
		ids = append(ids, oneShot())
	}
	// The first session is used again: the second is now the longest idle.
	if status, _ := mcpPost(t, srv.URL, a.Token, ids[0], mcpToolsList); status != 200 {
		t.Fatalf("first session: %d", status)
	}
	eventually(t, "a call beyond the limit is served once sessions idle", func() bool {
		status, _ := mcpPost(t, srv.URL, a.Token, "", mcpInitialize)
		return status == 200
	})
	if status, _ := mcpPost(t, srv.URL, a.Token, ids[1], mcpToolsList); status != 404 {
		t.Fatalf("the longest-idle session after it made room: %d", status)
	}
	if status, _ := mcpPost(t, srv.URL, a.Token, ids[0], mcpToolsList); status != 200 {
		t.Fatalf("a session used since: %d", status)
	}
}

// streamOf opens GET /v1/events with the given header pairs and reads to
// its opening retry: line.
func streamOf(t *testing.T, url string, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url+"/v1/events", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	buf := make([]byte, len("retry:"))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "retry:" {
		t.Fatalf("stream opened with %q: %v", buf, err)
	}
	return resp
}

// ends waits for a stream to end (its body reaches its end), or fails
// the test after 10 s.
func ends(t *testing.T, what string, resp *http.Response) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the stream is still open", what)
	}
}

// Rotating a host's token, deleting the host and signing the dashboard
// out end the streams and MCP sessions opened with that credential at once.
func TestRevokingEndsOpenStreamsAndSessions(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	op := e.operator

	a := createHost(t, e, "a")
	s := streamOf(t, srv.URL, "Authorization", "Bearer "+a.Token)
	if w := e.do("POST", "/v1/hosts/"+a.HostID+"/rotate-token", op, ""); w.Code != 200 {
		t.Fatalf("rotate: %d", w.Code)
	}
	ends(t, "after rotate-token", s)

	b := createHost(t, e, "b")
	s = streamOf(t, srv.URL, "Authorization", "Bearer "+b.Token)
	if w := e.do("DELETE", "/v1/hosts/"+b.HostID, op, ""); w.Code != 204 {
		t.Fatalf("delete: %d", w.Code)
	}
	ends(t, "after the host was deleted", s)

	// A dashboard session's stream ends when it signs out, and when its
	// host's token is rotated.
	c := createHost(t, e, "c")
	for _, revoke := range []string{"sign-out", "rotate-token"} {
		w := e.do("POST", "/v1/ui/session", "", `{"token":"`+c.Token+`"}`, "Sec-Fetch-Site", "same-origin")
		if w.Code != 201 {
			t.Fatalf("sign in: %d %s", w.Code, w.Body)
		}
		cookie := strings.Split(w.Header().Get("Set-Cookie"), ";")[0]
		s = streamOf(t, srv.URL, "Cookie", cookie)
		if revoke == "sign-out" {
			if w := e.do("DELETE", "/v1/ui/session", "", "", "Cookie", cookie, "Sec-Fetch-Site", "same-origin"); w.Code != 204 {
				t.Fatalf("sign out: %d", w.Code)
			}
		} else {
			var rot hostCreds
			w := e.do("POST", "/v1/hosts/"+c.HostID+"/rotate-token", op, "")
			if json.Unmarshal(w.Body.Bytes(), &rot); w.Code != 200 {
				t.Fatalf("rotate: %d", w.Code)
			}
			c.Token = rot.Token
		}
		ends(t, "a dashboard stream after "+revoke, s)
	}

	// An MCP session: the SDK client sees it end, and its id is gone even
	// for the host's new token.
	d := createHost(t, e, "d")
	cs := mcpClient(t, srv.URL, d.Token, nil)
	sid := cs.ID()
	var rot hostCreds
	w := e.do("POST", "/v1/hosts/"+d.HostID+"/rotate-token", op, "")
	if json.Unmarshal(w.Body.Bytes(), &rot); w.Code != 200 {
		t.Fatalf("rotate: %d", w.Code)
	}
	if status, _ := mcpPost(t, srv.URL, rot.Token, sid, mcpToolsList); status != 404 {
		t.Fatalf("an MCP session opened with a rotated token: %d", status)
	}
	waited := make(chan struct{})
	go func() { cs.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("the MCP client's session is still open after rotate-token")
	}
}
