package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"akk/handlers"
)

// bearer adds a token to every request of an MCP client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func mcpClient(t *testing.T, url, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "akk-test", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
	s, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func callTool(t *testing.T, s *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var v map[string]any
	json.Unmarshal(b, &v)
	return res, v
}

// The catalogue is the contract's: every action the list can advertise
// has its tool, every tool's routes exist, schemas are objects, and the
// descriptions carry the guide's safety rules.
func TestMCPToolsFollowTheContract(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	s := mcpClient(t, srv.URL, e.operator, nil)
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		names[tool.Name] = tool
		b, _ := json.Marshal(tool.InputSchema)
		var schema map[string]any
		json.Unmarshal(b, &schema)
		if schema["type"] != "object" {
			t.Errorf("%s: input schema %s", tool.Name, b)
		}
		if strings.Contains(string(b), "$ref") {
			t.Errorf("%s: schema keeps a $ref: %s", tool.Name, b)
		}
	}
	// Every action name the domain advertises (act("name", ...)) has akk_<name>.
	actions := regexp.MustCompile(`act\("([a-z_]+)"`).FindAllStringSubmatch(domainSource(t), -1)
	seen := map[string]bool{}
	for _, m := range actions {
		if !seen[m[1]] {
			seen[m[1]] = true
			if names["akk_"+m[1]] == nil {
				t.Errorf("the domain advertises %q but there is no tool akk_%s", m[1], m[1])
			}
		}
	}
	if len(seen) < 10 {
		t.Fatalf("found only %d action names in the domain", len(seen))
	}
	send := names["akk_send"]
	if send == nil {
		t.Fatal("no akk_send")
	}
	b, _ := json.Marshal(send.InputSchema)
	for _, want := range []string{`"request"`, `"terminal_id"`, `"session_id"`, `"maxLength"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("akk_send schema lacks %s: %s", want, b)
		}
	}
	for _, rule := range []string{"uncertain", "never send it again"} {
		if !strings.Contains(send.Description, rule) {
			t.Errorf("akk_send description lacks %q", rule)
		}
	}
	if !strings.Contains(names["akk_list"].Description, "fresh") || !strings.Contains(names["akk_status"].Description, "wake-up") {
		t.Error("list/status descriptions lack the guide's rules")
	}
	var sorted []string
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	t.Logf("%d tools: %s", len(sorted), strings.Join(sorted, " "))
}

// A refused call is a tool result with the REST problem's code, not a
// protocol error; bad arguments are refused before any route runs.
func TestMCPProblemsAreToolResults(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	s := mcpClient(t, srv.URL, e.operator, nil)
	for _, c := range []struct {
		tool string
		args map[string]any
		code string
	}{
		{"akk_send", map[string]any{"terminal_id": "term_nope", "request": "/clear"}, ""},
		{"akk_list", map[string]any{}, "unavailable"}, // this test's service has no terminals
		{"akk_status", map[string]any{"turn_id": "not a turn id"}, "invalid_request"},
		{"akk_status", map[string]any{}, "invalid_request"},
		{"akk_status", map[string]any{"turn_id": "turn_a", "watch_id": "watch_b"}, "invalid_request"},
		{"akk_cancel", map[string]any{"turn_id": "turn_a", "keys": "C-c"}, "invalid_request"},
		// A host's own conversation reference (set by its code, see
		// ConversationArgument) is the call's AKK-Conversation, checked as
		// the header is.
		{"akk_list", map[string]any{"akk_conversation": 5}, "invalid_request"},
		{"akk_list", map[string]any{"akk_conversation": strings.Repeat("x", 257)}, "validation_failed"},
		{"akk_list", map[string]any{"akk_conversation": "chat\r\nX-Injected: 1"}, "validation_failed"},
		{"akk_list", map[string]any{"akk_conversation": "chat\x00"}, "validation_failed"},
		{"akk_list", map[string]any{"akk_conversation": "agent:main:one"}, "unavailable"},
	} {
		res, v := callTool(t, s, c.tool, c.args)
		if !res.IsError {
			t.Errorf("%s %v: not an error: %v", c.tool, c.args, v)
			continue
		}
		if v["code"] == nil || v["code"] == "" || (c.code != "" && v["code"] != c.code) {
			t.Errorf("%s %v: code %v, want %s", c.tool, c.args, v["code"], c.code)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if !strings.HasPrefix(text, "Refused (") {
			t.Errorf("%s: summary %q", c.tool, text)
		}
	}
}

// A session belongs to the token that opened it; no token, no MCP. (That
// events reach only their host's session is shown end to end with agents.)
func TestMCPSessionsAndNotificationsFollowTheHost(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	hostA := createHost(t, e, "a")
	hostB := createHost(t, e, "b")
	a := mcpClient(t, srv.URL, hostA.Token, nil)
	if err := a.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	b := mcpClient(t, srv.URL, hostB.Token, nil)

	// Host B cannot take over A's session id.
	sid := a.ID()
	req, _ = http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+hostB.Token)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("host B on host A's session: %d", resp.StatusCode)
	}

	// Each host is served on its own session.
	for _, c := range []*mcp.ClientSession{a, b} {
		if _, err := c.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
	}
}

type hostCreds struct {
	HostID string `json:"host_id"`
	Token  string `json:"token"`
}

func createHost(t *testing.T, e *env, name string) hostCreds {
	t.Helper()
	w := e.do("POST", "/v1/hosts", e.operator, `{"name":"`+name+`","webhook_url":"http://127.0.0.1:9/`+name+`"}`)
	if w.Code != 201 {
		t.Fatalf("create host: %d %s", w.Code, w.Body)
	}
	var c hostCreds
	json.Unmarshal(w.Body.Bytes(), &c)
	return c
}

// domainSource is the domain package's Go source (not its tests).
func domainSource(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob("../domain/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("domain sources: %v", err)
	}
	var b strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		x, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(x)
	}
	return b.String()
}

// One principal holds at most MaxMCPSessions open sessions; closing one
// frees its place.
func TestMCPSessionLimit(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	host := createHost(t, e, "a")
	var open []*mcp.ClientSession
	for range handlers.MaxMCPSessions {
		open = append(open, mcpClient(t, srv.URL, host.Token, nil))
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "akk-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{host.Token, http.DefaultTransport}}}
	if s, err := c.Connect(context.Background(), tr, nil); err == nil {
		s.Close()
		t.Fatal("a session beyond the limit was opened")
	} else if !strings.Contains(err.Error(), "429") && !strings.Contains(err.Error(), "Too Many") {
		t.Fatalf("beyond the limit: %v", err)
	}
	// Another principal is not limited by this one.
	mcpClient(t, srv.URL, e.operator, nil)
	open[0].Close()
	mcpClient(t, srv.URL, host.Token, nil)
}
