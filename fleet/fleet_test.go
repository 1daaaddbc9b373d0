package fleet

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"akk/domain"
	"akk/persistence"
)

// fakeStore is the fleet's store: nodes and record owners in memory.
type fakeStore struct {
	nodes  []persistence.Node
	owners map[string]string // "table/id" → node (or a session's terminal)
}

func (f *fakeStore) Heartbeat(_ context.Context, n persistence.Node) (time.Time, error) {
	return n.LastSeen, nil
}
func (f *fakeStore) Nodes(context.Context) ([]persistence.Node, error) {
	return f.nodes, nil
}
func (f *fakeStore) OwnerOf(_ context.Context, table, id string) (string, bool, error) {
	o, ok := f.owners[table+"/"+id]
	return o, ok, nil
}

func newNodes(t *testing.T, now time.Time) (*fakeStore, *Node, *Node) {
	t.Helper()
	st := &fakeStore{owners: map[string]string{}}
	clock := func() time.Time { return now }
	key := bytes.Repeat([]byte{7}, 32)
	a := New(Config{Store: st, Name: "a", AdvertiseURL: "http://a.invalid", Key: key, Now: clock})
	b := New(Config{Store: st, Name: "b", AdvertiseURL: "http://b.invalid", Key: key, Now: clock})
	st.nodes = []persistence.Node{{Name: "a", LastSeen: now}, {Name: "b", LastSeen: now, Endpoints: []string{"term_b1", "conv_b1"}}}
	return st, a, b
}

func signed(n *Node, method, target, body string, p domain.Principal) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	n.sign(r, p, []byte(body))
	return r
}

// A call one node signs is verified by another as the principal it
// carries; anything changed on the way, too old, or from a name that is
// not a node of the fleet is refused.
func TestNodeCallsAreSignedAndVerified(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	_, a, b := newNodes(t, now)
	host := domain.Principal{HostID: "host_1", Conversation: "chat-7"}

	r := signed(a, "POST", "/v1/turns?x=1", `{"request":"hi"}`, host)
	p, err := b.Verify(r)
	if err != nil || p.HostID != "host_1" || p.Operator || p.Conversation != "chat-7" {
		t.Fatalf("verified %+v, %v", p, err)
	}
	if body, _ := io.ReadAll(r.Body); string(body) != `{"request":"hi"}` {
		t.Fatalf("body after verify %q", body)
	}
	if p, err := b.Verify(signed(a, "GET", "/v1/conversations", "", domain.Principal{Operator: true})); err != nil || !p.Operator {
		t.Fatalf("operator %+v, %v", p, err)
	}

	for name, change := range map[string]func(*http.Request){
		"body":         func(r *http.Request) { r.Body = io.NopCloser(strings.NewReader(`{"request":"rm"}`)) },
		"path":         func(r *http.Request) { r.URL.Path = "/v1/turns/turn_x/cancel" },
		"principal":    func(r *http.Request) { r.Header.Set(headerPrincipal, "operator") },
		"conversation": func(r *http.Request) { r.Header.Set(headerConv, "chat-8") },
		"node":         func(r *http.Request) { r.Header.Set(headerNode, "b") },
		"not a node":   func(r *http.Request) { r.Header.Set(headerNode, "mallory") },
		"old": func(r *http.Request) {
			r.Header.Set(headerTime, "1799999000")
		},
	} {
		r := signed(a, "POST", "/v1/turns", `{"request":"hi"}`, host)
		change(r)
		if _, err := b.Verify(r); domain.ErrorCode(err) != domain.CodeUnauthorized {
			t.Errorf("%s changed: %v", name, err)
		}
	}
	// Another fleet's key.
	other := New(Config{Store: a.Store, Name: "a", Key: bytes.Repeat([]byte{8}, 32), Now: a.Now})
	if _, err := b.Verify(signed(other, "GET", "/v1/conversations", "", host)); domain.ErrorCode(err) != domain.CodeUnauthorized {
		t.Errorf("another fleet's key: %v", err)
	}
}

// A call is served where what it names lives: a Turn or Watch by the node
// that owns it, a conversation or terminal by the node that sees it (a
// Send's body names it), anything else here; a node that stopped
// heartbeating answers 503 node_unreachable without being asked.
func TestCallsGoToTheOwner(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	st, a, _ := newNodes(t, now)
	st.owners["turns/turn_1"] = "b"
	st.owners["turns/turn_2"] = "a"
	st.owners["sessions/ses_1"] = "term_b1"
	for _, c := range []struct {
		method, target, body, owner string
	}{
		{"GET", "/v1/turns/turn_1", "", "b"},
		{"POST", "/v1/turns/turn_1/approval", `{}`, "b"},
		{"GET", "/v1/turns/turn_1/events", "", ""},
		{"GET", "/v1/turns/turn_2", "", "a"},
		{"GET", "/v1/turns/turn_unknown", "", ""},
		{"GET", "/v1/conversations/conv_b1", "", "b"},
		{"POST", "/v1/terminals/term_b1/model", `{}`, "b"},
		{"POST", "/v1/turns", `{"terminal_id":"term_b1","request":"x"}`, "b"},
		{"POST", "/v1/turns", `{"session_id":"ses_1","request":"x"}`, "b"},
		{"POST", "/v1/turns", `{"terminal_id":"term_here","request":"x"}`, ""},
		{"POST", "/v1/watches", `{"terminal_id":"term_b1"}`, "b"},
		{"GET", "/v1/hosts", "", ""},
		{"GET", "/v1/events", "", ""},
	} {
		r := httptest.NewRequest(c.method, c.target, strings.NewReader(c.body))
		owner, err := a.ownerOf(r)
		if err != nil || owner != c.owner {
			t.Errorf("%s %s %s: owner %q, %v; want %q", c.method, c.target, c.body, owner, err, c.owner)
		}
		if body, _ := io.ReadAll(r.Body); string(body) != c.body {
			t.Errorf("%s %s: body after routing %q", c.method, c.target, body)
		}
	}

	// b stops heartbeating: a call about its Turn is refused here.
	st.nodes[1].LastSeen = now.Add(-persistence.NodeTimeout - time.Second)
	a.readAt = time.Time{}
	w := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/v1/turns/turn_1/cancel", strings.NewReader(`{}`))
	if !a.Serve(w, r, domain.Principal{HostID: "host_1"}, http.NotFoundHandler()) || w.Code != 503 ||
		!strings.Contains(w.Body.String(), `"node_unreachable"`) {
		t.Fatalf("a dead node's Turn: %d %s", w.Code, w.Body)
	}
}
