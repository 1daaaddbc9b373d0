package handlers_test

import (
	"strings"
	"testing"
)

// bodyRoutes are the routes that take a JSON body, with ids that exist in
// no store: every body is decoded and validated, none may reach a 5xx.
var bodyRoutes = []struct{ method, path string }{
	{"POST", "/v1/hosts"},
	{"POST", "/v1/turns"},
	{"POST", "/v1/turns/turn_aaaaaaaaaa/respond"},
	{"POST", "/v1/turns/turn_aaaaaaaaaa/approval"},
	{"POST", "/v1/turns/turn_aaaaaaaaaa/interaction"},
	{"POST", "/v1/turns/turn_aaaaaaaaaa/close"},
	{"POST", "/v1/turns/turn_aaaaaaaaaa/retry-callback"},
	{"POST", "/v1/terminals/term_aaaaaaaaaa/approval"},
	{"POST", "/v1/watches"},
	{"POST", "/v1/watches/watch_aaaaaaaaaa/retry-callback"},
}

// FuzzRequestBodies posts arbitrary bodies to every body-taking route: the
// answer is never a 5xx, and a refusal is a problem with a code.
func FuzzRequestBodies(f *testing.F) {
	for _, seed := range []string{``, `{}`, `[]`, `null`, `{"name":"x","webhook_url":"http://a/b"}`,
		`{"terminal_id":"term_x","request":"hi","message_id":"m-1"}`, `{"request":"/clear"}`, `{"decision":"approve_once"}`,
		`{"interaction_id":"int_x","answers":[{"question_id":"q_x","response_kind":"single_select","selected_option_ids":["opt_x"]}]}`,
		`{"reason":"` + strings.Repeat("r", 600) + `"}`, "{\"request\":\"a\xffb\"}", `{"a":1} {"b":2}`} {
		for i := range bodyRoutes {
			f.Add(i, seed)
		}
	}
	e := newEnv(f)
	f.Fuzz(func(t *testing.T, route int, body string) {
		if route < 0 {
			route = -route
		}
		r := bodyRoutes[route%len(bodyRoutes)]
		w := e.do(r.method, r.path, e.operator, body, "Content-Type", "application/json")
		// This server has no terminals wired: a valid request that gets
		// that far is told so (503 unavailable), which is not a failure.
		if w.Code >= 500 && !(w.Code == 503 && strings.Contains(w.Body.String(), "not configured")) {
			t.Fatalf("%s %s with %q: %d %s", r.method, r.path, body, w.Code, w.Body)
		}
		if w.Code >= 400 {
			problemCode(t, w)
		}
	})
}
