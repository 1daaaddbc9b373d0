package handlers_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// uiSignIn signs in as the dashboard does (same origin) and returns the
// session cookie.
func (e *env) uiSignIn(t *testing.T, token string) *http.Cookie {
	t.Helper()
	w := e.do("POST", "/v1/ui/session", "", `{"token":"`+token+`"}`, "Origin", "http://example.com")
	if w.Code != 201 {
		t.Fatalf("sign-in: %d %s", w.Code, w.Body)
	}
	for _, c := range w.Result().Cookies() {
		if c.Name == "akk_session" && c.Value != "" {
			return c
		}
	}
	t.Fatal("sign-in set no cookie")
	return nil
}

// newHost registers a host and returns its id and token.
func (e *env) newHost(t *testing.T, name string) (string, string) {
	t.Helper()
	w := e.do("POST", "/v1/hosts", e.operator, `{"name":"`+name+`","webhook_url":"http://127.0.0.1:9/x"}`)
	var h struct {
		HostID string `json:"host_id"`
		Token  string `json:"token"`
	}
	if json.Unmarshal(w.Body.Bytes(), &h); w.Code != 201 || h.Token == "" {
		t.Fatalf("create host: %d %s", w.Code, w.Body)
	}
	return h.HostID, h.Token
}

// A host that signs in to the dashboard over and over evicts only its own
// oldest sessions, never the operator's.
func TestUISignInFloodKeepsOtherPrincipalsSessions(t *testing.T) {
	e := newEnv(t)
	op := e.uiSignIn(t, e.operator)
	_, hostToken := e.newHost(t, "a")
	first := e.uiSignIn(t, hostToken)
	var last *http.Cookie
	for range 1000 {
		last = e.uiSignIn(t, hostToken)
	}
	if w := e.do("GET", "/v1/ui/session", "", "", "Cookie", op.String()); w.Code != 200 {
		t.Fatalf("the operator's session after a host's sign-in flood: %d %s", w.Code, w.Body)
	}
	if w := e.do("GET", "/v1/ui/session", "", "", "Cookie", last.String()); w.Code != 200 {
		t.Fatalf("the host's newest session: %d %s", w.Code, w.Body)
	}
	if w := e.do("GET", "/v1/ui/session", "", "", "Cookie", first.String()); w.Code != 401 {
		t.Fatalf("the host's first of 1001 sessions is still signed in: %d", w.Code)
	}
}

// A dashboard session's conversation name (echoed in events and webhooks)
// gives away nothing of its cookie.
func TestUIConversationNameHidesTheCookie(t *testing.T) {
	e := newEnv(t)
	for range 20 {
		c := e.uiSignIn(t, e.operator)
		w := e.do("GET", "/v1/ui/session", "", "", "Cookie", c.String())
		var s struct {
			Conversation string `json:"conversation"`
		}
		if json.Unmarshal(w.Body.Bytes(), &s); w.Code != 200 || !strings.HasPrefix(s.Conversation, "ui-") {
			t.Fatalf("session: %d %s", w.Code, w.Body)
		}
		for i := 0; i+6 <= len(c.Value); i++ {
			if strings.Contains(s.Conversation, c.Value[i:i+6]) {
				t.Fatalf("conversation %q holds %q of cookie %q", s.Conversation, c.Value[i:i+6], c.Value)
			}
		}
	}
}
