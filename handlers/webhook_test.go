package handlers_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// hookSecret is a header value no answer may carry.
const hookSecret = "oc-hook-token-7f3a9c"

// Every kind of refused header and subscription is a 422 naming the field,
// on create and on replace, and nothing is stored.
func TestWebhookHeadersAndEventsValidation(t *testing.T) {
	e := newEnv(t)
	w := e.do("POST", "/v1/hosts", e.operator, `{"name":"keep","webhook_url":"http://127.0.0.1:9/x","webhook_headers":{"Authorization":"Bearer `+hookSecret+`"},"webhook_events":["turn.completed"]}`)
	if w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	var keep struct {
		HostID string `json:"host_id"`
	}
	json.Unmarshal(w.Body.Bytes(), &keep)

	nine := map[string]string{}
	for i := range 9 {
		nine[fmt.Sprintf("X-H%d", i)] = "v"
	}
	nineJSON, _ := json.Marshal(nine)
	cases := []struct {
		name, headers, events, field string
	}{
		{"too many headers", string(nineJSON), "", "webhook_headers"},
		{"name with a space", `{"X Token":"v"}`, "", "webhook_headers"},
		{"name with a colon", `{"X-Token:":"v"}`, "", "webhook_headers"},
		{"empty name", `{"":"v"}`, "", "webhook_headers"},
		{"long name", `{"X-` + strings.Repeat("n", 63) + `":"v"}`, "", "webhook_headers"},
		{"value with CR LF", `{"X-Token":"a\r\nX-Evil: 1"}`, "", "webhook_headers"},
		{"value with LF", `{"X-Token":"a\nb"}`, "", "webhook_headers"},
		{"value with a tab", `{"X-Token":"a\tb"}`, "", "webhook_headers"},
		{"value with a control", `{"X-Token":"a\u0000b"}`, "", "webhook_headers"},
		{"value not ASCII", `{"X-Token":"caf\u00e9"}`, "", "webhook_headers"},
		{"empty value", `{"X-Token":""}`, "", "webhook_headers"},
		{"long value", `{"X-Token":"` + strings.Repeat("v", 1025) + `"}`, "", "webhook_headers"},
		{"same name twice", `{"X-Token":"a","x-token":"b"}`, "", "webhook_headers"},
		{"unknown event", "", `["turn.completed","turn.progress"]`, "webhook_events[1]"},
		{"made-up event", "", `["nope"]`, "webhook_events[0]"},
	}
	for _, name := range []string{"webhook-id", "Webhook-Timestamp", "WEBHOOK-SIGNATURE", "Idempotency-Key", "content-type",
		"Content-Length", "Host", "User-Agent", "Connection", "Keep-Alive", "Proxy-Authorization", "proxy-connection",
		"TE", "Trailer", "Transfer-Encoding", "Upgrade"} {
		cases = append(cases, struct{ name, headers, events, field string }{"reserved " + name, `{"` + name + `":"v"}`, "", "webhook_headers"})
	}
	for _, c := range cases {
		extra := ""
		if c.headers != "" {
			extra += `,"webhook_headers":` + c.headers
		}
		if c.events != "" {
			extra += `,"webhook_events":` + c.events
		}
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/v1/hosts", `{"name":"bad","webhook_url":"http://127.0.0.1:9/y"` + extra + `}`},
			{"PUT", "/v1/hosts/" + keep.HostID + "/webhook", `{"webhook_url":"http://127.0.0.1:9/y"` + extra + `}`},
		} {
			w := e.do(r.method, r.path, e.operator, r.body)
			if w.Code != 422 || problemCode(t, w) != "validation_failed" {
				t.Errorf("%s, %s: %d %s", c.name, r.method, w.Code, w.Body)
				continue
			}
			var p struct {
				Errors []struct {
					Field string `json:"field"`
				} `json:"errors"`
			}
			json.Unmarshal(w.Body.Bytes(), &p)
			if len(p.Errors) != 1 || p.Errors[0].Field != c.field {
				t.Errorf("%s, %s: fields %s, want %s", c.name, r.method, w.Body, c.field)
			}
			if strings.Contains(w.Body.String(), "X-Evil") || strings.Contains(w.Body.String(), "caf") {
				t.Errorf("%s: the problem quotes the value: %s", c.name, w.Body)
			}
		}
	}
	// Nothing stored: the one host, as it was.
	var list struct {
		Hosts []struct {
			Name        string   `json:"name"`
			WebhookURL  string   `json:"webhook_url"`
			HeaderNames []string `json:"webhook_header_names"`
			Events      []string `json:"webhook_events"`
		} `json:"hosts"`
	}
	json.Unmarshal(e.do("GET", "/v1/hosts", e.operator, "").Body.Bytes(), &list)
	if len(list.Hosts) != 1 || list.Hosts[0].WebhookURL != "http://127.0.0.1:9/x" ||
		strings.Join(list.Hosts[0].HeaderNames, ",") != "Authorization" || strings.Join(list.Hosts[0].Events, ",") != "turn.completed" {
		t.Fatalf("after refused requests: %+v", list)
	}
	// Only the operator may replace a host's webhook.
	var h struct {
		Token string `json:"token"`
	}
	json.Unmarshal(e.do("POST", "/v1/hosts", e.operator, `{"name":"other","webhook_url":"http://127.0.0.1:9/z"}`).Body.Bytes(), &h)
	if w := e.do("PUT", "/v1/hosts/"+keep.HostID+"/webhook", h.Token, `{"webhook_url":"http://127.0.0.1:9/y"}`); w.Code != 403 {
		t.Fatalf("a host replacing a webhook: %d", w.Code)
	}
	if w := e.do("PUT", "/v1/hosts/host_zzz/webhook", e.operator, `{"webhook_url":"http://127.0.0.1:9/y"}`); w.Code != 404 || problemCode(t, w) != "host_not_found" {
		t.Fatalf("unknown host: %d %s", w.Code, w.Body)
	}
	if w := e.do("PUT", "/v1/hosts/"+keep.HostID+"/webhook", e.operator, `{"webhook_url":"ftp://a/b"}`); w.Code != 422 {
		t.Fatalf("bad url: %d %s", w.Code, w.Body)
	}
}

// No route answers with a header value: create, list and replace show the
// names only; the host.* events hold names only too.
func TestWebhookHeaderValuesAreNeverReturned(t *testing.T) {
	e := newEnv(t)
	w := e.do("POST", "/v1/hosts", e.operator, `{"name":"claw","webhook_url":"http://127.0.0.1:9/hooks/akk","webhook_headers":{"x-openclaw-token":"`+hookSecret+`","Authorization":"Bearer `+hookSecret+`2"}}`)
	if w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	var c struct {
		HostID      string   `json:"host_id"`
		Token       string   `json:"token"`
		HeaderNames []string `json:"webhook_header_names"`
		Events      []string `json:"webhook_events"`
	}
	json.Unmarshal(w.Body.Bytes(), &c)
	if strings.Join(c.HeaderNames, ",") != "Authorization,x-openclaw-token" || c.Events == nil || len(c.Events) != 0 {
		t.Fatalf("create answer: %s", w.Body)
	}
	answers := []string{w.Body.String()}
	// A ping queues a notification of the host.
	if w := e.do("POST", "/v1/hosts/"+c.HostID+"/ping", e.operator, ""); w.Code != 202 {
		t.Fatalf("ping: %d", w.Code)
	}
	w = e.do("PUT", "/v1/hosts/"+c.HostID+"/webhook", e.operator, `{"webhook_url":"http://127.0.0.1:9/hooks/akk2","webhook_headers":{"X-Token":"`+hookSecret+`3"},"webhook_events":["turn.completed","turn.failed","turn.completed"]}`)
	var put struct {
		WebhookURL  string   `json:"webhook_url"`
		HeaderNames []string `json:"webhook_header_names"`
		Events      []string `json:"webhook_events"`
	}
	json.Unmarshal(w.Body.Bytes(), &put)
	if w.Code != 200 || put.WebhookURL != "http://127.0.0.1:9/hooks/akk2" || strings.Join(put.HeaderNames, ",") != "X-Token" ||
		strings.Join(put.Events, ",") != "turn.completed,turn.failed" {
		t.Fatalf("replace: %d %s", w.Code, w.Body)
	}
	answers = append(answers, w.Body.String())
	for _, r := range []struct{ path, token string }{
		{"/v1/hosts", e.operator}, {"/v1/notifications", e.operator}, {"/v1/notifications", c.Token},
		{"/v1/doctor", e.operator},
	} {
		w := e.do("GET", r.path, r.token, "")
		if w.Code != 200 {
			t.Fatalf("GET %s: %d %s", r.path, w.Code, w.Body)
		}
		answers = append(answers, w.Body.String())
	}
	for i, a := range answers {
		if strings.Contains(a, hookSecret) {
			t.Errorf("answer %d carries a header value: %s", i, a)
		}
	}
	// Absent headers and events on replace mean none and all.
	w = e.do("PUT", "/v1/hosts/"+c.HostID+"/webhook", e.operator, `{"webhook_url":"http://127.0.0.1:9/hooks/akk"}`)
	json.Unmarshal(w.Body.Bytes(), &put)
	if w.Code != 200 || len(put.HeaderNames) != 0 || len(put.Events) != 0 {
		t.Fatalf("replace with nothing: %d %s", w.Code, w.Body)
	}
}
