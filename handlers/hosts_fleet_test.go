package handlers_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
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
		s.UseFleet("n1", func(context.Context) ([]string, error) { return []string{"n1", "n2"}, nil })
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

// The REST catalogue is what /mcp lists, tool for tool: names,
// descriptions, schemas and hints (MCP lists them by name, the catalogue
// in the guide's order); any principal may read it, no one
// without a token.
func TestToolCatalogueIsTheMCPList(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	if w := e.do("GET", "/v1/tools", "", ""); w.Code != 401 {
		t.Fatalf("no token: %d", w.Code)
	}
	w := e.do("GET", "/v1/tools", e.operator, "")
	var cat struct {
		Version string `json:"catalogue_version"`
		Tools   []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"input_schema"`
			ReadOnly    bool           `json:"read_only"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &cat); err != nil || w.Code != 200 || len(cat.Version) != 16 || len(cat.Tools) == 0 {
		t.Fatalf("catalogue: %d %s", w.Code, w.Body)
	}
	host := createHost(t, e, "h")
	if w := e.do("GET", "/v1/tools", host.Token, ""); w.Code != 200 || !strings.Contains(w.Body.String(), cat.Version) {
		t.Fatalf("a host's catalogue: %d", w.Code)
	}

	res, err := mcpClient(t, srv.URL, host.Token, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listed := res.Tools
	if len(listed) != len(cat.Tools) {
		t.Fatalf("MCP lists %d tools, the catalogue %d", len(listed), len(cat.Tools))
	}
	byName := map[string]int{}
	for i, c := range cat.Tools {
		byName[c.Name] = i
	}
	for i, tool := range listed {
		j, ok := byName[tool.Name]
		if !ok {
			t.Fatalf("MCP lists %s, the catalogue does not", tool.Name)
		}
		c := cat.Tools[j]
		a, _ := json.Marshal(tool.InputSchema)
		b, _ := json.Marshal(c.InputSchema)
		if tool.Name != c.Name || tool.Description != c.Description || string(a) != string(b) || tool.Annotations.ReadOnlyHint != c.ReadOnly {
			t.Fatalf("tool %d: MCP %s, catalogue %s", i, tool.Name, c.Name)
		}
	}
}
