package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
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
	reads  int               // reads of the node list
}

func (f *fakeStore) Heartbeat(_ context.Context, n persistence.Node) (time.Time, error) {
	return n.LastSeen, nil
}
func (f *fakeStore) Nodes(context.Context) ([]persistence.Node, error) {
	f.reads++
	return f.nodes, nil
}
func (f *fakeStore) RemoveNode(_ context.Context, name string, before time.Time) (bool, error) {
	for i, n := range f.nodes {
		if n.Name == name && n.LastSeen.Before(before) {
			f.nodes = append(f.nodes[:i], f.nodes[i+1:]...)
			return true, nil
		}
	}
	return false, nil
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

// signed is a call n signs for node b.
func signed(n *Node, method, target, body string, p domain.Principal) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	n.sign(r, "b", p, []byte(body))
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
			r.Header.Set(headerTime, "1799999000000")
		},
		"target": func(r *http.Request) { r.Header.Set(headerTarget, "a") },
		"nonce":  func(r *http.Request) { r.Header.Set(headerNonce, strings.Repeat("0", 32)) },
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

// A signed call is carried out once, by the node it was signed for, and
// only while its caller still waits for it; a call no node signed costs
// no read of the node list.
func TestSignedCallsOnceForTheirNodeInTime(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	st, a, b := newNodes(t, now)
	host := domain.Principal{HostID: "host_1"}

	r := signed(a, "POST", "/v1/turns", `{"request":"hi"}`, host)
	replay := r.Clone(r.Context())
	replay.Body = io.NopCloser(strings.NewReader(`{"request":"hi"}`))
	if _, err := b.Verify(r); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Verify(replay); domain.ErrorCode(err) != domain.CodeUnauthorized || !strings.Contains(err.Error(), "replayed") {
		t.Fatalf("a replayed call: %v", err)
	}

	// Signed for b, sent to a (an advertise URL naming the wrong node).
	if _, err := a.Verify(signed(a, "GET", "/v1/turns/turn_1", "", host)); domain.ErrorCode(err) != domain.CodeNodeUnreachable {
		t.Fatalf("a call meant for another node: %v", err)
	}

	// Signed more than ForwardWait ago: its caller has answered already.
	early := New(Config{Store: st, Name: "a", Key: a.Key, Now: func() time.Time { return now.Add(-a.ForwardWait - time.Second) }})
	if _, err := b.Verify(signed(early, "POST", "/v1/turns", `{}`, host)); domain.ErrorCode(err) != domain.CodeNodeUnreachable ||
		!strings.Contains(err.Error(), "gave up") {
		t.Fatalf("a call that arrived after its caller gave up: %v", err)
	}

	// Unsigned, under a made-up node name: refused before any read.
	b.readAt = time.Time{}
	reads := st.reads
	for range 100 {
		u := httptest.NewRequest("GET", "/v1/conversations", nil)
		u.Header.Set(headerNode, "mallory")
		u.Header.Set(headerTime, strconv.FormatInt(now.UnixMilli(), 10))
		u.Header.Set(headerSignature, "00")
		if _, err := b.Verify(u); domain.ErrorCode(err) != domain.CodeUnauthorized {
			t.Fatalf("an unsigned call: %v", err)
		}
	}
	if st.reads != reads {
		t.Fatalf("100 unsigned calls read the node list %d times", st.reads-reads)
	}
}

// A forwarded call whose node does not answer is answered within
// ForwardWait: a GET 503 to try again, anything else 503 do_not_retry (it
// may have been carried out). Before, it hung until the node came back.
func TestForwardAnswersWithinItsWait(t *testing.T) {
	hang := make(chan struct{})
	owner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-hang }))
	defer owner.Close()
	defer close(hang)
	st := &fakeStore{owners: map[string]string{"turns/turn_1": "b"}}
	key := bytes.Repeat([]byte{7}, 32)
	a := New(Config{Store: st, Name: "a", AdvertiseURL: "http://a.invalid", Key: key, ForwardWait: 300 * time.Millisecond})
	st.nodes = []persistence.Node{{Name: "a", LastSeen: time.Now()}, {Name: "b", AdvertiseURL: owner.URL, LastSeen: time.Now().Add(time.Hour)}}
	for _, c := range []struct {
		method, path string
		doNotRetry   bool
	}{{"POST", "/v1/turns/turn_1/cancel", true}, {"GET", "/v1/turns/turn_1", false}} {
		w := httptest.NewRecorder()
		start := time.Now()
		if !a.Serve(w, httptest.NewRequest(c.method, c.path, strings.NewReader(`{}`)), domain.Principal{HostID: "host_1"}, http.NotFoundHandler()) {
			t.Fatal("not forwarded")
		}
		took := time.Since(start)
		if w.Code != 503 || strings.Contains(w.Body.String(), `"do_not_retry":true`) != c.doNotRetry || took > 5*time.Second {
			t.Fatalf("%s %s to a node that does not answer: %d %s after %s", c.method, c.path, w.Code, w.Body, took)
		}
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
	st.owners["action_tokens/"+domain.ActionTokenHash("tok_b")] = "b"
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
		{"POST", "/v1/actions/tok_b", "", "b"},
		{"GET", "/v1/actions/tok_b", "", ""},
		{"POST", "/v1/actions/tok_unknown", "", ""},
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

// An unreachable node's rows (its snapshot, saved as the operator saw
// them) show a host only what it would see were the node live: another
// host's Turn is held_by_other, with no id or state; its own stays.
// Before, every host saw every Turn id and state on an unreachable node.
func TestUnreachableRowsAsEachHostSeesThem(t *testing.T) {
	now := time.Now()
	st, a, _ := newNodes(t, now)
	st.nodes[1].LastSeen = now.Add(-persistence.NodeTimeout - time.Second)
	st.nodes[1].Conversations = json.RawMessage(`[{"conversation_id":"conv_b1","managed":{"held_by_other":false,
		"current_turn":{"turn_id":"turn_x","state":"working"},"recent_turn":{"turn_id":"turn_y","state":"completed"}}}]`)
	st.owners["turn_hosts/turn_x"] = "host_2"
	st.owners["turn_hosts/turn_y"] = "host_1"
	own := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"conversations":[],"unavailable_managed_turns":[]}`))
	})
	managed := func(p domain.Principal) map[string]any {
		t.Helper()
		w := httptest.NewRecorder()
		a.Serve(w, httptest.NewRequest("GET", "/v1/conversations", nil), p, own)
		var l conversationList
		if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil || len(l.Conversations) != 1 {
			t.Fatalf("list: %d %s", w.Code, w.Body)
		}
		return l.Conversations[0]["managed"].(map[string]any)
	}
	m := managed(domain.Principal{HostID: "host_1"})
	if m["current_turn"] != nil || m["held_by_other"] != true || m["recent_turn"] == nil {
		t.Fatalf("host_1 sees %v", m)
	}
	if m := managed(domain.Principal{HostID: "host_2"}); m["current_turn"] == nil || m["recent_turn"] != nil || m["held_by_other"] != false {
		t.Fatalf("host_2 sees %v", m)
	}
	if m := managed(domain.Principal{Operator: true}); m["current_turn"] == nil || m["recent_turn"] == nil {
		t.Fatalf("the operator sees %v", m)
	}
}

// A node is removed only once it no longer heartbeats; this node and an
// unknown name are refused, and a removed node's ids route nowhere.
func TestRemoveNode(t *testing.T) {
	now := time.Now()
	st, a, _ := newNodes(t, now)
	ctx := context.Background()
	for name, want := range map[string]domain.Code{"a": domain.CodeNodeLive, "b": domain.CodeNodeLive, "c": domain.CodeNodeNotFound} {
		if err := a.RemoveNode(ctx, name); domain.ErrorCode(err) != want {
			t.Fatalf("remove %s: %v, want %s", name, err, want)
		}
	}
	st.nodes[1].LastSeen = now.Add(-persistence.NodeTimeout - time.Second)
	if err := a.RemoveNode(ctx, "b"); err != nil {
		t.Fatalf("remove a stopped node: %v", err)
	}
	if len(st.nodes) != 1 {
		t.Fatalf("nodes after the removal: %+v", st.nodes)
	}
	if owner, err := a.endpointOwner(ctx, "term_b1"); err != nil || owner != "" {
		t.Fatalf("a removed node's terminal routes to %q, %v", owner, err)
	}
}

// A node records its rows only when what they depend on changed, at
// most every Snapshot, and at least every SnapshotMaxAge; without a change
// signal, every Snapshot.
func TestSnapshotOnlyWhenChanged(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		name       string
		age        time.Duration
		fp, lastFP string
		signal     bool
		want       bool
	}{
		{"unchanged", Snapshot, "a", "a", true, false},
		{"changed", Snapshot, "b", "a", true, true},
		{"changed too soon", Snapshot - time.Millisecond, "b", "a", true, false},
		{"unchanged but old", SnapshotMaxAge, "a", "a", true, true},
		{"no signal", Snapshot, "", "", false, true},
		{"first", time.Since(time.Time{}), "a", "", true, true},
	} {
		last := t0.Add(-c.age)
		if c.name == "first" {
			last = time.Time{}
		}
		if got := snapshotDue(t0, last, c.fp, c.lastFP, c.signal); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
