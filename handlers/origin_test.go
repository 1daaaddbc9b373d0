package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"akk/handlers"
)

// doHost is e.do with the request's Host set.
func (e *env) doHost(host, method, path, token, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = host
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	return w
}

// A request that names a host the daemon does not serve is refused
// before anything else (DNS rebinding: a page of evil.example whose name
// now points at this machine), on every route; the loopback names and
// the configured ones pass, with any port.
func TestRequestsNamingAnotherHostAreRefused(t *testing.T) {
	e := newEnv(t) // allows example.com, httptest's Host
	for _, c := range []struct{ method, path, token, body string }{
		{"POST", "/v1/ui/session", "", `{"token":"op-token"}`},
		{"GET", "/v1/health", "", ""},
		{"GET", "/openapi.yaml", "", ""},
		{"GET", "/metrics", "", ""},
		{"GET", "/", "", ""},
		{"GET", "/ui/app.js", "", ""},
		{"GET", "/v1/hosts", "op-token", ""},
		{"POST", "/mcp", "op-token", `{}`},
	} {
		for _, host := range []string{"evil.example:7788", "evil.example", "127.0.0.1.evil.example", "localhost.evil.example:7788"} {
			w := e.doHost(host, c.method, c.path, c.token, c.body, "Origin", "http://"+host)
			if w.Code != 403 || problemCode(t, w) != "host_not_allowed" {
				t.Fatalf("%s %s with Host %s: %d %s", c.method, c.path, host, w.Code, w.Body)
			}
		}
	}
	for _, host := range []string{"localhost", "localhost:7788", "LOCALHOST:9", "127.0.0.1:7788", "[::1]:7788", "[::1]", "example.com", "example.com:8080", "example.com."} {
		if w := e.doHost(host, "GET", "/v1/health", "", ""); w.Code != 200 {
			t.Fatalf("Host %s: %d %s", host, w.Code, w.Body)
		}
	}
	// The sign-in with a served Host and its own Origin works.
	if w := e.doHost("localhost:7788", "POST", "/v1/ui/session", "", `{"token":"op-token"}`, "Origin", "http://localhost:7788"); w.Code != 201 {
		t.Fatalf("sign-in on localhost: %d %s", w.Code, w.Body)
	}
}

// "*" turns the Host check off (a reverse proxy checks it); an Origin
// must still name the request's own host.
func TestAllowedHostsStarAcceptsAnyHost(t *testing.T) {
	e := newEnvOpts(t, envOpts{deps: func(d *handlers.Deps) { d.AllowedHosts = []string{"*"} }})
	if w := e.doHost("akk.example.net", "GET", "/v1/health", "", ""); w.Code != 200 {
		t.Fatalf("any host: %d %s", w.Code, w.Body)
	}
	w := e.doHost("akk.example.net", "POST", "/v1/ui/session", "", `{"token":"op-token"}`, "Origin", "https://akk.example.net", "Sec-Fetch-Site", "same-origin")
	if w.Code != 201 {
		t.Fatalf("sign-in behind a proxy: %d %s", w.Code, w.Body)
	}
	cookie := w.Result().Cookies()[0].String()
	if w := e.doHost("akk.example.net", "GET", "/v1/hosts", "", "", "Cookie", cookie, "Origin", "https://evil.example"); w.Code != 403 || problemCode(t, w) != "origin_not_allowed" {
		t.Fatalf("a cookie with another origin: %d %s", w.Code, w.Body)
	}
	if w := e.doHost("akk.example.net", "GET", "/v1/hosts", "", "", "Cookie", cookie); w.Code != 200 {
		t.Fatalf("a cookie with no origin: %d %s", w.Code, w.Body)
	}
}

// A foreign Origin is refused on /mcp (whatever the token) and on every
// request a dashboard cookie authenticates, reads too; an Origin of an
// allowed host passes.
func TestForeignOriginIsRefused(t *testing.T) {
	e := newEnv(t)
	cookie := e.uiSignIn(t, e.operator).String()
	for _, origin := range []string{"http://evil.example", "https://evil.example:443", "null", "file://", "http://example.com.evil.example"} {
		w := e.do("POST", "/mcp", e.operator, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, "Origin", origin, "Accept", "application/json, text/event-stream")
		if w.Code != 403 || problemCode(t, w) != "origin_not_allowed" {
			t.Fatalf("/mcp with Origin %s: %d %s", origin, w.Code, w.Body)
		}
		for _, path := range []string{"/v1/ui/session", "/v1/hosts", "/v1/conversations"} {
			w := e.do("GET", path, "", "", "Cookie", cookie, "Origin", origin)
			if w.Code != 403 || problemCode(t, w) != "origin_not_allowed" {
				t.Fatalf("cookie GET %s with Origin %s: %d %s", path, origin, w.Code, w.Body)
			}
		}
		w = e.do("POST", "/v1/ui/session", "", `{"token":"op-token"}`, "Origin", origin)
		if w.Code != 403 {
			t.Fatalf("sign-in with Origin %s: %d %s", origin, w.Code, w.Body)
		}
	}
	for _, origin := range []string{"", "http://example.com", "https://localhost:7788", "http://127.0.0.1:9"} {
		w := e.do("POST", "/mcp", e.operator, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			"Origin", origin, "Accept", "application/json, text/event-stream")
		if w.Code != http.StatusOK {
			t.Fatalf("/mcp with Origin %q: %d %s", origin, w.Code, w.Body)
		}
		if w := e.do("GET", "/v1/hosts", "", "", "Cookie", cookie, "Origin", origin); w.Code != 200 {
			t.Fatalf("cookie GET with Origin %q: %d %s", origin, w.Code, w.Body)
		}
	}
}
