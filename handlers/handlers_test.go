package handlers_test

import (
	"github.com/coder/quartz"

	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"akk/api"
	"akk/callbacks"
	"akk/domain"
	"akk/handlers"
	"akk/persistence/storetest"
)

type fixedIDs struct{ n int }

func (f *fixedIDs) New(prefix string) string {
	f.n++
	return prefix + "_" + strings.Repeat("a", 10) + string(rune('A'+f.n%26)) + time.Now().Format("150405.000000000")[7:]
}
func (f *fixedIDs) Secret(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

type env struct {
	h        http.Handler
	operator string
	store    domain.Store
}

// newEnv serves a fresh store; heartbeat, if given, is the SSE heartbeat.
func newEnv(t testing.TB, heartbeat ...time.Duration) *env {
	t.Helper()
	o := envOpts{}
	if len(heartbeat) > 0 {
		o.heartbeat = heartbeat[0]
	}
	return newEnvOpts(t, o)
}

// envOpts vary newEnv: wire plugs fakes of the terminal ports into the
// service, deps changes the handler's dependencies.
type envOpts struct {
	heartbeat time.Duration
	wire      func(*domain.Service)
	deps      func(*handlers.Deps)
}

// newEnvWith serves a fresh store with the dependencies set changes.
func newEnvWith(t testing.TB, set func(*handlers.Deps)) *env {
	return newEnvOpts(t, envOpts{deps: set})
}

func newEnvOpts(t testing.TB, o envOpts) *env {
	t.Helper()
	store, err := storetest.OpenLocation(context.Background(), storetest.NewLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := domain.NewService(store, quartz.NewReal(), &fixedIDs{}, handlers.NewValidator())
	if err := svc.UseOperatorToken(context.Background(), "op-token"); err != nil {
		t.Fatal(err)
	}
	if o.wire != nil {
		o.wire(svc)
	}
	// httptest.NewRequest's Host is example.com.
	deps := handlers.Deps{Service: svc, Hub: callbacks.NewHub(), Metrics: handlers.NewMetrics(), Version: "test", Heartbeat: o.heartbeat,
		AllowedHosts: []string{"example.com"}}
	if o.deps != nil {
		o.deps(&deps)
	}
	h, err := handlers.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	return &env{h: h, operator: "op-token", store: store}
}

func (e *env) do(method, path, token, body string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
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

func problemCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("content type %q for status %d: %s", ct, w.Code, w.Body)
	}
	var p struct {
		Code   string `json:"code"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if p.Status != w.Code || p.Code == "" {
		t.Fatalf("problem %s does not match status %d", w.Body, w.Code)
	}
	return p.Code
}

func TestBadInputGetsAProblemWithACode(t *testing.T) {
	e := newEnv(t)
	w := e.do("POST", "/v1/hosts", e.operator, `{"name":"h","webhook_url":"http://127.0.0.1:9/x"}`)
	if w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	var h struct{ HostID, Token string }
	json.Unmarshal(w.Body.Bytes(), &struct {
		HostID *string `json:"host_id"`
		Token  *string `json:"token"`
	}{&h.HostID, &h.Token})

	cases := []struct {
		name, method, path, token, body string
		header                          []string
		status                          int
		code                            string
	}{
		{"no token", "GET", "/v1/hosts", "", "", nil, 401, "unauthorized"},
		{"wrong token", "GET", "/v1/hosts", "nope", "", nil, 401, "unauthorized"},
		{"basic auth", "GET", "/v1/hosts", "", "", []string{"Authorization", "Basic eDp5"}, 401, "unauthorized"},
		{"host lists hosts", "GET", "/v1/hosts", h.Token, "", nil, 403, "forbidden"},
		{"host creates host", "POST", "/v1/hosts", h.Token, `{"name":"x","webhook_url":"http://a/b"}`, nil, 403, "forbidden"},
		{"host pings", "POST", "/v1/hosts/" + h.HostID + "/ping", h.Token, "", nil, 403, "forbidden"},
		{"host rotates", "POST", "/v1/hosts/" + h.HostID + "/rotate-secret", h.Token, "", nil, 403, "forbidden"},
		{"malformed json", "POST", "/v1/hosts", e.operator, `{"name":`, nil, 400, "invalid_request"},
		{"no body", "POST", "/v1/hosts", e.operator, ``, nil, 400, "invalid_request"},
		{"array body", "POST", "/v1/hosts", e.operator, `[]`, nil, 400, "invalid_request"},
		{"missing url", "POST", "/v1/hosts", e.operator, `{"name":"x"}`, nil, 400, "invalid_request"},
		{"empty name", "POST", "/v1/hosts", e.operator, `{"name":"","webhook_url":"http://a/b"}`, nil, 400, "invalid_request"},
		{"control characters in name", "POST", "/v1/hosts", e.operator, `{"name":"a\u0000b","webhook_url":"http://a/b"}`, nil, 422, "validation_failed"},
		{"blank name", "POST", "/v1/hosts", e.operator, `{"name":"   ","webhook_url":"http://a/b"}`, nil, 422, "validation_failed"},
		{"long name", "POST", "/v1/hosts", e.operator, `{"name":"` + strings.Repeat("n", 101) + `","webhook_url":"http://a/b"}`, nil, 400, "invalid_request"},
		{"unknown field", "POST", "/v1/hosts", e.operator, `{"name":"x","webhook_url":"http://a/b","admin":true}`, nil, 400, "invalid_request"},
		{"wrong type", "POST", "/v1/hosts", e.operator, `{"name":5,"webhook_url":"http://a/b"}`, nil, 400, "invalid_request"},
		{"ftp url", "POST", "/v1/hosts", e.operator, `{"name":"x","webhook_url":"ftp://a/b"}`, nil, 422, "validation_failed"},
		{"relative url", "POST", "/v1/hosts", e.operator, `{"name":"x","webhook_url":"/hook"}`, nil, 422, "validation_failed"},
		{"url with credentials", "POST", "/v1/hosts", e.operator, `{"name":"x","webhook_url":"http://u:p@a/b"}`, nil, 422, "validation_failed"},
		{"bad host id", "POST", "/v1/hosts/nothost/ping", e.operator, "", nil, 400, "invalid_request"},
		{"unknown host ping", "POST", "/v1/hosts/host_zzz/ping", e.operator, "", nil, 404, "host_not_found"},
		{"unknown host rotate", "POST", "/v1/hosts/host_zzz/rotate-secret", e.operator, "", nil, 404, "host_not_found"},
		{"bad state", "GET", "/v1/notifications?state=lost", e.operator, "", nil, 400, "invalid_request"},
		{"limit zero", "GET", "/v1/notifications?limit=0", e.operator, "", nil, 400, "invalid_request"},
		{"limit text", "GET", "/v1/notifications?limit=ten", e.operator, "", nil, 400, "invalid_request"},
		{"limit huge", "GET", "/v1/notifications?limit=100000", e.operator, "", nil, 400, "invalid_request"},
		{"bad notification id", "POST", "/v1/notifications/x/retry", e.operator, "", nil, 400, "invalid_request"},
		{"unknown notification", "POST", "/v1/notifications/msg_zzz/retry", e.operator, "", nil, 404, "notification_not_found"},
		{"negative since", "GET", "/v1/events?since=-1", e.operator, "", nil, 400, "invalid_request"},
		{"text since", "GET", "/v1/events?since=abc", e.operator, "", nil, 400, "invalid_request"},
		{"bad last event id", "GET", "/v1/events", e.operator, "", []string{"Last-Event-ID", "x1"}, 400, "invalid_request"},
		{"long conversation", "GET", "/v1/notifications", e.operator, "", []string{"AKK-Conversation", strings.Repeat("c", 300)}, 422, "validation_failed"},
		{"unknown route", "GET", "/v1/nothing", e.operator, "", nil, 404, "not_found"},
		{"wrong method", "DELETE", "/v1/hosts", e.operator, "", nil, 405, "method_not_allowed"},
		{"trailing json", "POST", "/v1/hosts", e.operator, `{"name":"x","webhook_url":"http://a/b"} {"name":"y"}`, nil, 400, "invalid_request"},
		{"trailing garbage", "POST", "/v1/hosts", e.operator, `{"name":"x","webhook_url":"http://a/b"}xyz`, nil, 400, "invalid_request"},
		{"invalid utf-8", "POST", "/v1/hosts", e.operator, "{\"name\":\"a\xffb\",\"webhook_url\":\"http://a/b\"}", nil, 400, "invalid_request"},
		{"body too large", "POST", "/v1/hosts", e.operator, `{"name":"x","webhook_url":"http://a/b","pad":"` + strings.Repeat("p", handlers.MaxBodyBytes) + `"}`, nil, 413, "payload_too_large"},
		{"body too large unauthenticated", "POST", "/v1/hosts", "", strings.Repeat("p", handlers.MaxBodyBytes+1), nil, 413, "payload_too_large"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := e.do(c.method, c.path, c.token, c.body, c.header...)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d: %s", w.Code, c.status, w.Body)
			}
			if got := problemCode(t, w); got != c.code {
				t.Fatalf("code %q, want %q", got, c.code)
			}
		})
	}
	// Nothing rejected was written: still exactly one host.
	w = e.do("GET", "/v1/hosts", e.operator, "")
	var list struct{ Hosts []any }
	json.Unmarshal(w.Body.Bytes(), &list)
	if len(list.Hosts) != 1 {
		t.Fatalf("hosts after rejected requests: %d", len(list.Hosts))
	}
}

// A body without a declared length is cut at MaxBodyBytes, not read whole.
func TestChunkedBodyOverTheLimit(t *testing.T) {
	e := newEnv(t)
	big := io.MultiReader(strings.NewReader(`{"name":"x","webhook_url":"http://a/b","pad":"`), strings.NewReader(strings.Repeat("p", 4*handlers.MaxBodyBytes)))
	req := httptest.NewRequest("POST", "/v1/hosts", io.NopCloser(big))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+e.operator)
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	if w.Code != 413 || problemCode(t, w) != "payload_too_large" {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
}

// Any method a client makes up is counted under one label.
func TestMetricsMethodLabelIsBounded(t *testing.T) {
	e := newEnv(t)
	e.do("BREW", "/v1/hosts", e.operator, "")
	w := e.do("GET", "/metrics", "", "")
	if strings.Contains(w.Body.String(), `method="BREW"`) || !strings.Contains(w.Body.String(), `method="OTHER"`) {
		t.Fatalf("metrics:\n%s", w.Body)
	}
}

// The auth scheme is case-insensitive (RFC 9110).
func TestBearerSchemeAnyCase(t *testing.T) {
	e := newEnv(t)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		w := e.do("GET", "/v1/hosts", "", "", "Authorization", scheme+" "+e.operator)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", scheme, w.Code, w.Body)
		}
	}
}

func TestPublicPathsAreTheContractsUnauthenticatedOperations(t *testing.T) {
	spec, err := openapi3.NewLoader().LoadFromData(api.Spec)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			if strings.Contains(path, "{") {
				continue
			}
			public := op.Security != nil && len(*op.Security) == 0
			w := e.do(method, path, "", "")
			if public && w.Code == 401 {
				t.Errorf("%s %s is public in the contract but asks for a token", method, path)
			}
			if !public && w.Code != 401 {
				t.Errorf("%s %s needs a token in the contract but answered %d without one", method, path, w.Code)
			}
		}
	}
}

func TestServesContractHealthAndMetrics(t *testing.T) {
	e := newEnv(t)
	w := e.do("GET", "/openapi.yaml", "", "")
	if w.Code != 200 || w.Body.String() != string(api.Spec) {
		t.Fatalf("openapi.yaml: %d", w.Code)
	}
	w = e.do("GET", "/v1/health", "", "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"version":"test"`) {
		t.Fatalf("health: %d %s", w.Code, w.Body)
	}
	e.do("GET", "/v1/hosts", e.operator, "")
	w = e.do("GET", "/metrics", "", "")
	body, _ := io.ReadAll(w.Body)
	if w.Code != 200 || !strings.Contains(string(body), `akk_http_requests_total{method="GET",route="/v1/hosts",status="200"} 1`) {
		t.Fatalf("metrics: %d\n%s", w.Code, body)
	}
}

// FuzzCreateHost throws arbitrary bodies at the decoder: never a 5xx, and
// anything rejected is a problem with a code.
func FuzzCreateHost(f *testing.F) {
	for _, s := range []string{`{"name":"a","webhook_url":"http://a/b"}`, `{}`, `{"name":null}`, `[`, `"x"`, `{"name":"\u0000","webhook_url":"http://[::1]:0/"}`} {
		f.Add(s)
	}
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, body string) {
		w := e.do("POST", "/v1/hosts", e.operator, body)
		if w.Code >= 500 {
			t.Fatalf("%d for %q: %s", w.Code, body, w.Body)
		}
		if w.Code >= 400 {
			problemCode(t, w)
		}
	})
}

// Rotating a host's token refuses the old one at once; removing a host
// refuses its token, unlists it, and fails its pending webhooks.
func TestRotateTokenAndDeleteHost(t *testing.T) {
	e := newEnv(t)
	w := e.do("POST", "/v1/hosts", e.operator, `{"name":"h","webhook_url":"http://127.0.0.1:9/x"}`)
	var h struct {
		HostID string `json:"host_id"`
		Token  string `json:"token"`
	}
	json.Unmarshal(w.Body.Bytes(), &h)
	if w := e.do("GET", "/v1/notifications", h.Token, ""); w.Code != 200 {
		t.Fatalf("host token before rotation: %d", w.Code)
	}
	if w := e.do("POST", "/v1/hosts/"+h.HostID+"/rotate-token", h.Token, ""); w.Code != 403 {
		t.Fatalf("a host rotating its own token: %d", w.Code)
	}
	w = e.do("POST", "/v1/hosts/"+h.HostID+"/rotate-token", e.operator, "")
	var rot struct {
		HostID string `json:"host_id"`
		Token  string `json:"token"`
	}
	if json.Unmarshal(w.Body.Bytes(), &rot); w.Code != 200 || rot.Token == "" || rot.Token == h.Token || rot.HostID != h.HostID {
		t.Fatalf("rotate: %d %s", w.Code, w.Body)
	}
	if w := e.do("GET", "/v1/notifications", h.Token, ""); w.Code != 401 {
		t.Fatalf("old token after rotation: %d", w.Code)
	}
	if w := e.do("GET", "/v1/notifications", rot.Token, ""); w.Code != 200 {
		t.Fatalf("new token: %d", w.Code)
	}
	// A pending ping, then the host goes.
	if w := e.do("POST", "/v1/hosts/"+h.HostID+"/ping", e.operator, ""); w.Code != 202 {
		t.Fatalf("ping: %d", w.Code)
	}
	if w := e.do("DELETE", "/v1/hosts/"+h.HostID, e.operator, ""); w.Code != 204 {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	if w := e.do("GET", "/v1/notifications", rot.Token, ""); w.Code != 401 {
		t.Fatalf("a removed host's token: %d", w.Code)
	}
	var list struct{ Hosts []any }
	json.Unmarshal(e.do("GET", "/v1/hosts", e.operator, "").Body.Bytes(), &list)
	if len(list.Hosts) != 0 {
		t.Fatalf("a removed host is listed: %+v", list)
	}
	var ns struct {
		Notifications []struct {
			State string `json:"state"`
		} `json:"notifications"`
	}
	json.Unmarshal(e.do("GET", "/v1/notifications", e.operator, "").Body.Bytes(), &ns)
	if len(ns.Notifications) != 1 || ns.Notifications[0].State != "failed" {
		t.Fatalf("the removed host's notifications: %+v", ns)
	}
	for _, c := range []struct{ method, path string }{{"DELETE", "/v1/hosts/" + h.HostID}, {"POST", "/v1/hosts/" + h.HostID + "/ping"}, {"POST", "/v1/hosts/" + h.HostID + "/rotate-token"}} {
		if w := e.do(c.method, c.path, e.operator, ""); w.Code != 404 || problemCode(t, w) != "host_not_found" {
			t.Fatalf("%s %s on a removed host: %d", c.method, c.path, w.Code)
		}
	}
}

// With a metrics token, /metrics needs exactly that bearer token; other
// tokens, the operator's among them, are refused.
func TestMetricsToken(t *testing.T) {
	e := newEnvOpts(t, envOpts{deps: func(d *handlers.Deps) { d.MetricsToken = "m-secret" }})
	for _, auth := range []string{"", "Bearer nope", "Bearer m-secre", "Bearer m-secret2", "Bearer op-token", "Basic bS1zZWNyZXQ="} {
		w := e.do("GET", "/metrics", "", "", "Authorization", auth)
		if w.Code != 401 || problemCode(t, w) != "unauthorized" || w.Header().Get("WWW-Authenticate") == "" {
			t.Fatalf("Authorization %q: %d %s", auth, w.Code, w.Body)
		}
	}
	w := e.do("GET", "/metrics", "", "", "Authorization", "Bearer m-secret")
	if w.Code != 200 || !strings.Contains(w.Body.String(), "akk_http_requests_total") {
		t.Fatalf("with the metrics token: %d %s", w.Code, w.Body)
	}
	if w := e.do("GET", "/v1/health", "", ""); w.Code != 200 {
		t.Fatalf("health stays public: %d", w.Code)
	}
}

// A deeply nested body is refused before anything decodes or validates it:
// quickly, with a small problem, signed in or not.
func TestDeeplyNestedBodyIsRefusedCheaply(t *testing.T) {
	e := newEnv(t)
	nested := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	cases := []struct{ name, path, token, body string }{
		{"objects, signing in", "/v1/ui/session", "", `{"token":"x","a":` + nested(`{"a":`, `}`, 5000) + `}`},
		{"arrays, signing in", "/v1/ui/session", "", nested(`[`, `]`, 20000)},
		{"objects, operator", "/v1/hosts", e.operator, `{"name":"x","webhook_url":"http://a/b","pad":` + nested(`{"a":`, `}`, 5000) + `}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			w := e.do("POST", c.path, c.token, c.body)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
			if w.Code != 400 || problemCode(t, w) != "json_too_deep" {
				t.Fatalf("status %d: %.300s", w.Code, w.Body)
			}
			if w.Body.Len() > 1000 {
				t.Fatalf("problem of %d bytes", w.Body.Len())
			}
		})
	}
	// A body as deep as the limit still reaches the contract's validation.
	w := e.do("POST", "/v1/hosts", e.operator, `{"name":"x","webhook_url":"http://a/b","pad":`+nested(`[`, `]`, handlers.MaxJSONDepth-1)+`}`)
	if w.Code != 400 || problemCode(t, w) != "invalid_request" {
		t.Fatalf("at the limit: %d %s", w.Code, w.Body)
	}
	// Brackets inside strings (after an escaped quote too) do not count.
	w = e.do("POST", "/v1/hosts", e.operator, `{"name":"`+strings.Repeat("[{", 20)+`\"`+strings.Repeat("[", 20)+`","webhook_url":"http://a/b"}`)
	if w.Code != 201 {
		t.Fatalf("brackets in a string: %d %s", w.Code, w.Body)
	}
}

// A schema error's detail names the field and the reason, bounded, never
// the whole value or the schema.
func TestSchemaErrorDetailStaysShort(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("k", 40000)
	for name, body := range map[string]string{
		"long unknown property": `{"name":"x","webhook_url":"http://a/b","` + long + `":1}`,
		"long wrong value":      `{"name":"x","webhook_url":["` + long + `"]}`,
		"long nested property":  `{"token":{"` + long + `":{"` + long[:10000] + `":1}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			path, token := "/v1/hosts", e.operator
			if strings.HasPrefix(body, `{"token"`) {
				path, token = "/v1/ui/session", ""
			}
			w := e.do("POST", path, token, body)
			if w.Code != 400 || problemCode(t, w) != "invalid_request" {
				t.Fatalf("status %d: %.300s", w.Code, w.Body)
			}
			var p struct {
				Detail string
				Errors []struct{ Field, Message string }
			}
			json.Unmarshal(w.Body.Bytes(), &p)
			if p.Detail == "" || len(p.Detail) > 300 {
				t.Fatalf("detail of %d bytes: %.400s", len(p.Detail), p.Detail)
			}
			for _, f := range p.Errors {
				if len(f.Field) > 300 || len(f.Message) > 300 {
					t.Fatalf("field error of %d+%d bytes", len(f.Field), len(f.Message))
				}
			}
			if w.Body.Len() > 2000 {
				t.Fatalf("problem of %d bytes", w.Body.Len())
			}
		})
	}
}
