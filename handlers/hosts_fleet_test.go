package handlers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"akk/domain"
)

// Where a host's webhooks are delivered from: on a daemon on its own a
// loopback URL is fine and delivery_node is refused; in a fleet a loopback
// URL needs delivery_node, which must name a node. Every refusal is 422
// naming its field, and changes nothing.
func TestDeliveryNode(t *testing.T) {
	alone := newEnv(t)
	if w := alone.do("POST", "/v1/hosts", alone.operator, `{"name":"a","webhook_url":"http://127.0.0.1:9/h"}`); w.Code != 201 {
		t.Fatalf("a loopback URL on a daemon on its own: %d %s", w.Code, w.Body)
	}
	if w := alone.do("POST", "/v1/hosts", alone.operator, `{"name":"a","webhook_url":"http://127.0.0.1:9/h","delivery_node":"n1"}`); w.Code != 422 ||
		!strings.Contains(w.Body.String(), `"delivery_node"`) {
		t.Fatalf("delivery_node on a daemon on its own: %d %s", w.Code, w.Body)
	}

	fleet := newEnvOpts(t, envOpts{wire: func(s *domain.Service) {
		s.UseFleet(func(context.Context) ([]string, error) { return []string{"n1", "n2"}, nil })
	}})
	for _, c := range []struct {
		body, field string
		code        int
	}{
		{`{"name":"a","webhook_url":"http://127.0.0.1:9/h"}`, "webhook_url", 422},
		{`{"name":"a","webhook_url":"http://localhost:9/h"}`, "webhook_url", 422},
		{`{"name":"a","webhook_url":"http://[::1]:9/h"}`, "webhook_url", 422},
		{`{"name":"a","webhook_url":"http://127.0.0.1:9/h","delivery_node":"n9"}`, "delivery_node", 422},
		{`{"name":"a","webhook_url":"http://127.0.0.1:9/h","delivery_node":"bad name"}`, "delivery_node", 400},
		{`{"name":"a","webhook_url":"http://127.0.0.1:9/h","delivery_node":"n1"}`, "", 201},
		{`{"name":"a","webhook_url":"http://10.0.0.5:9/h"}`, "", 201},
	} {
		w := fleet.do("POST", "/v1/hosts", fleet.operator, c.body)
		if w.Code != c.code || (c.field != "" && !strings.Contains(w.Body.String(), `"`+c.field+`"`)) {
			t.Errorf("%s: %d %s", c.body, w.Code, w.Body)
		}
	}
	w := fleet.do("GET", "/v1/hosts", fleet.operator, "")
	var hosts struct {
		Hosts []struct {
			HostID       string `json:"host_id"`
			DeliveryNode string `json:"delivery_node"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &hosts); err != nil || len(hosts.Hosts) != 2 || hosts.Hosts[0].DeliveryNode != "n1" || hosts.Hosts[1].DeliveryNode != "" {
		t.Fatalf("hosts: %s", w.Body)
	}
	other := hosts.Hosts[1].HostID
	if w := fleet.do("PUT", "/v1/hosts/"+other+"/webhook", fleet.operator, `{"webhook_url":"http://127.0.0.1:9/h"}`); w.Code != 422 {
		t.Fatalf("a webhook changed to loopback, unpinned: %d %s", w.Code, w.Body)
	}
	if w := fleet.do("PUT", "/v1/hosts/"+other+"/webhook", fleet.operator, `{"webhook_url":"http://127.0.0.1:9/h","delivery_node":"n2"}`); w.Code != 200 ||
		!strings.Contains(w.Body.String(), `"delivery_node":"n2"`) {
		t.Fatalf("a webhook changed to loopback, pinned: %d %s", w.Code, w.Body)
	}
}

// Every API answer, a problem too, tells caches to keep nothing: they
// carry Turn texts and commands (a browser kept them past sign-out).
func TestAPIAnswersAreNotStored(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct{ method, path, token string }{
		{"GET", "/v1/health", ""}, {"GET", "/v1/hosts", e.operator}, {"GET", "/v1/conversations", e.operator},
		{"GET", "/v1/turns/turn_nosuch", e.operator}, {"GET", "/v1/hosts", "wrong"},
	} {
		w := e.do(c.method, c.path, c.token, "")
		if got := w.Header().Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s %s (%d): Cache-Control %q", c.method, c.path, w.Code, got)
		}
	}
}
