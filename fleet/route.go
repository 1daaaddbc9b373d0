package fleet

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"akk/domain"
	"akk/handlers"
	"akk/persistence"
)

// The headers of a call one node forwards to another. The signature
// covers the caller node, the node it is meant for, a nonce, the method,
// the path and query, the time, the principal, the caller's
// AKK-Conversation and the body.
const (
	headerNode      = "AKK-Node"
	headerTarget    = "AKK-Node-Target"
	headerNonce     = "AKK-Node-Nonce"
	headerTime      = "AKK-Node-Time"
	headerPrincipal = "AKK-Node-Principal"
	headerSignature = "AKK-Node-Signature"
	headerConv      = "AKK-Conversation"
	// clockSkew bounds how far ahead of the receiver's clock (the
	// database's, which every node reads) a call's time may be.
	clockSkew = 5 * time.Second
	// ForwardWait is Config.ForwardWait's default.
	ForwardWait = 10 * time.Second
	// listWait bounds how long a list waits for another node's rows
	// (tens of milliseconds on a network; a node that does not answer in
	// this time is shown from its last record, without actions).
	listWait = 2 * time.Second
)

func (n *Node) mac(node, target, nonce, method, uri, at, principal, conv string, body []byte) string {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, n.Key)
	for _, part := range []string{node, target, nonce, method, uri, at, principal, conv, hex.EncodeToString(sum[:])} {
		m.Write([]byte(part))
		m.Write([]byte{'\n'})
	}
	return hex.EncodeToString(m.Sum(nil))
}

func principalText(p domain.Principal) string {
	if p.Operator {
		return "operator"
	}
	return "host:" + p.HostID
}

// sign makes req a call of this node to the node named target on behalf
// of p; body is req's body.
func (n *Node) sign(req *http.Request, target string, p domain.Principal, body []byte) {
	at := strconv.FormatInt(n.dbNow().UnixMilli(), 10)
	var b [16]byte
	rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	pt := principalText(p)
	req.Header.Del("Authorization")
	req.Header.Del("Cookie")
	req.Header.Set(headerNode, n.Name)
	req.Header.Set(headerTarget, target)
	req.Header.Set(headerNonce, nonce)
	req.Header.Set(headerTime, at)
	req.Header.Set(headerPrincipal, pt)
	if p.Conversation != "" {
		req.Header.Set(headerConv, p.Conversation)
	} else {
		req.Header.Del(headerConv)
	}
	req.Header.Set(headerSignature, n.mac(n.Name, target, nonce, req.Method, req.URL.RequestURI(), at, pt, p.Conversation, body))
}

// Verify implements handlers.Fleet: a call signed with the fleet's key by
// a node of the fleet, for this node, within half of ForwardWait (by the
// database's clock), and not seen before. The time and the signature are
// checked first: a call no node signed costs no database read. A signed
// call that arrives late, or at the wrong node, is 503 (nothing done); one
// an hour off or unsigned, 401.
func (n *Node) Verify(r *http.Request) (domain.Principal, error) {
	refused := domain.E(domain.CodeUnauthorized, "this call is not signed by a node of this fleet")
	at := r.Header.Get(headerTime)
	ms, err := strconv.ParseInt(at, 10, 64)
	if err != nil {
		return domain.Principal{}, refused
	}
	signed := time.UnixMilli(ms)
	age := n.dbNow().Sub(signed)
	if age < -clockSkew || age > time.Hour {
		return domain.Principal{}, refused
	}
	body, err := readBody(r)
	if err != nil {
		return domain.Principal{}, refused
	}
	name, target, nonce := r.Header.Get(headerNode), r.Header.Get(headerTarget), r.Header.Get(headerNonce)
	pt, conv := r.Header.Get(headerPrincipal), r.Header.Get(headerConv)
	want := n.mac(name, target, nonce, r.Method, r.URL.RequestURI(), at, pt, conv, body)
	if len(nonce) != 32 || !hmac.Equal([]byte(want), []byte(r.Header.Get(headerSignature))) {
		return domain.Principal{}, refused
	}
	if target != n.Name {
		// Signed by a node, for another one: this node is not where the
		// caller thinks (an advertise URL naming the wrong machine).
		return domain.Principal{}, domain.E(domain.CodeNodeUnreachable,
			"this call was meant for node "+target+" and reached node "+n.Name+": nothing was done; check the nodes' --advertise-url")
	}
	if age > n.ForwardWait/2 {
		// Its caller gives up on it at ForwardWait: a call this late would
		// be carried out for a client that was, or is about to be, told it
		// failed. Half the wait is left for carrying it out.
		return domain.Principal{}, domain.E(domain.CodeNodeUnreachable,
			"this forwarded call reached its node after its caller gave up on it: nothing was done")
	}
	if !n.firstUse(nonce, signed.Add(n.ForwardWait+clockSkew)) {
		return domain.Principal{}, domain.E(domain.CodeUnauthorized, "this signed call was replayed: refused")
	}
	if _, ok, err := n.node(r.Context(), name); err != nil {
		return domain.Principal{}, err
	} else if !ok {
		// A node that joined since the list was read.
		if _, err := n.readNodes(r.Context(), true); err != nil {
			return domain.Principal{}, err
		}
		if _, ok, _ := n.node(r.Context(), name); !ok {
			return domain.Principal{}, refused
		}
	}
	p := domain.Principal{Conversation: conv}
	switch {
	case pt == "operator":
		p.Operator = true
	case strings.HasPrefix(pt, "host:") && len(pt) > len("host:"):
		p.HostID = strings.TrimPrefix(pt, "host:")
	default:
		return domain.Principal{}, refused
	}
	return p, nil
}

// firstUse records a call's nonce until it expires and reports whether
// it was new: a signed call is carried out once.
func (n *Node) firstUse(nonce string, until time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := n.dbNowLocked()
	if len(n.nonces) > 1024 {
		for k, exp := range n.nonces {
			if now.After(exp) {
				delete(n.nonces, k)
			}
		}
	}
	if _, seen := n.nonces[nonce]; seen {
		return false
	}
	n.nonces[nonce] = until
	return true
}

// readBody reads r's body (already read whole and bounded by the HTTP
// layer) and puts it back for the handlers behind.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	return b, err
}

// Serve implements handlers.Fleet.
func (n *Node) Serve(w http.ResponseWriter, r *http.Request, p domain.Principal, next http.Handler) bool {
	if r.Method == http.MethodGet && r.URL.Path == "/v1/conversations" {
		n.list(w, r, p, next)
		return true
	}
	owner, err := n.ownerOf(r)
	if err != nil {
		handlers.WriteProblem(w, r, err)
		return true
	}
	if owner == "" || owner == n.Name {
		return false
	}
	n.forward(w, r, p, owner)
	return true
}

// ownerOf names the node that owns what r names ("" when r is not about
// one conversation, terminal, Turn or Watch, or when no node is known to
// own it: then this node answers, as a daemon on its own would).
func (n *Node) ownerOf(r *http.Request) (string, error) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(parts) < 2 || parts[0] != "v1" {
		return "", nil
	}
	ctx := r.Context()
	switch {
	case len(parts) >= 3 && (parts[1] == "conversations" || parts[1] == "terminals"):
		return n.endpointOwner(ctx, parts[2])
	case len(parts) >= 3 && parts[1] == "turns":
		if len(parts) == 4 && (parts[3] == "events" || parts[3] == "changes") {
			return "", nil // the record's events and changes: the store has them all
		}
		return n.recordOwner(ctx, "turns", parts[2])
	case len(parts) >= 3 && parts[1] == "watches":
		return n.recordOwner(ctx, "watches", parts[2])
	case len(parts) == 3 && parts[1] == "actions" && r.Method == http.MethodPost:
		// A one-tap action is carried out by the node whose monitor runs
		// its Turn (it alone sees the pane); the token names it.
		return n.recordOwner(ctx, "action_tokens", domain.ActionTokenHash(parts[2]))
	case len(parts) == 2 && r.Method == http.MethodPost && (parts[1] == "turns" || parts[1] == "watches"):
		body, err := readBody(r)
		if err != nil {
			return "", nil
		}
		var target struct {
			TerminalID     string `json:"terminal_id"`
			ConversationID string `json:"conversation_id"`
			SessionID      string `json:"session_id"`
		}
		if json.Unmarshal(body, &target) != nil {
			return "", nil // the handlers say what is wrong with it
		}
		switch {
		case target.TerminalID != "":
			return n.endpointOwner(ctx, target.TerminalID)
		case target.ConversationID != "":
			return n.endpointOwner(ctx, target.ConversationID)
		case target.SessionID != "":
			term, ok, err := n.Store.OwnerOf(ctx, "sessions", target.SessionID)
			if err != nil || !ok {
				return "", err
			}
			return n.endpointOwner(ctx, term)
		}
	}
	return "", nil
}

func (n *Node) recordOwner(ctx context.Context, table, id string) (string, error) {
	owner, _, err := n.Store.OwnerOf(ctx, table, id)
	return owner, err
}

// endpointOwner is the node that sees the conversation or terminal id:
// from the lists this node merged, else from the nodes' snapshots.
func (n *Node) endpointOwner(ctx context.Context, id string) (string, error) {
	n.mu.Lock()
	owner, ok := n.owners[id]
	n.mu.Unlock()
	if ok {
		return owner, nil
	}
	nodes, err := n.readNodes(ctx, false)
	if err != nil {
		return "", err
	}
	for _, x := range nodes {
		for _, e := range x.Endpoints {
			if e == id {
				return x.Name, nil
			}
		}
	}
	return "", nil
}

// forward carries r out on the node named owner and answers with its
// answer. A node that is not live is 503 node_unreachable before anything
// is sent; one that stops answering once the call reached it may have
// carried it out: the problem then says do_not_retry.
func (n *Node) forward(w http.ResponseWriter, r *http.Request, p domain.Principal, owner string) {
	x, ok, err := n.node(r.Context(), owner)
	if err != nil {
		handlers.WriteProblem(w, r, err)
		return
	}
	if !ok || !n.live(x) {
		handlers.WriteProblem(w, r, domain.E(domain.CodeNodeUnreachable,
			"the node "+owner+" that owns this does not answer (no heartbeat): nothing was sent; try again once it is back"))
		return
	}
	body, err := readBody(r)
	if err != nil {
		handlers.WriteProblem(w, r, err)
		return
	}
	// The owner answers within ForwardWait (a partition, a machine gone)
	// or the call ends; once it answered, its answer (a stream too) flows
	// for as long as it lasts.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.Method, strings.TrimRight(x.AdvertiseURL, "/")+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		handlers.WriteProblem(w, r, err)
		return
	}
	for _, h := range []string{"Content-Type", "Accept", "Idempotency-Key", "Last-Event-ID"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	n.sign(req, owner, p, body)
	late := time.AfterFunc(n.ForwardWait, cancel)
	resp, err := n.Client.Do(req)
	answered := late.Stop()
	if err == nil && !answered {
		resp.Body.Close()
		err = context.DeadlineExceeded
	}
	if err != nil {
		var op *net.OpError
		switch {
		case errors.As(err, &op) && op.Op == "dial":
			handlers.WriteProblem(w, r, domain.E(domain.CodeNodeUnreachable,
				"the node "+owner+" that owns this cannot be reached: nothing was sent; try again once it is back"))
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			handlers.WriteProblem(w, r, domain.E(domain.CodeNodeUnreachable,
				"the node "+owner+" that owns this did not answer within "+n.ForwardWait.String()+"; try again"))
		default:
			uncertain(w, r, owner, n.ForwardWait)
		}
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		if k == "Content-Length" || k == "Connection" || k == "Transfer-Encoding" {
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		k, err := resp.Body.Read(buf)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// uncertain answers a forwarded call whose node stopped answering after
// the call reached it: it may have been carried out.
func uncertain(w http.ResponseWriter, r *http.Request, owner string, wait time.Duration) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusServiceUnavailable)
	json.NewEncoder(w).Encode(map[string]any{
		"type": "about:blank", "title": "Service Unavailable", "status": http.StatusServiceUnavailable,
		"code":     string(domain.CodeNodeUnreachable),
		"detail":   "the node " + owner + " did not answer within " + wait.String() + " once the call was sent: it may have been carried out; do not retry it, look at the Turns and conversations once the node is back",
		"instance": r.URL.Path, "do_not_retry": true,
	})
}

// asSeenBy cuts a row of an unreachable node's snapshot (saved as the
// operator saw it) to what p would see were the node live: another
// host's Turn is only held_by_other, its id and state unseen.
func (n *Node) asSeenBy(ctx context.Context, row map[string]any, p domain.Principal) {
	if p.Operator {
		return
	}
	managed, _ := row["managed"].(map[string]any)
	if managed == nil {
		return
	}
	for _, key := range []string{"current_turn", "recent_turn"} {
		ref, _ := managed[key].(map[string]any)
		if ref == nil {
			continue
		}
		id, _ := ref["turn_id"].(string)
		host, ok, err := n.Store.OwnerOf(ctx, "turn_hosts", id)
		if err == nil && ok && host == p.HostID {
			continue
		}
		delete(managed, key)
		if key == "current_turn" {
			managed["held_by_other"] = true
		}
	}
}

type conversationList struct {
	Conversations []map[string]any `json:"conversations"`
	Unavailable   []map[string]any `json:"unavailable_managed_turns"`
}

// list answers GET /v1/conversations with every live node's rows (asked
// now, as the caller) and every unreachable node's last known rows,
// without actions.
func (n *Node) list(w http.ResponseWriter, r *http.Request, p domain.Principal, next http.Handler) {
	nodes, err := n.readNodes(r.Context(), false)
	if err != nil {
		handlers.WriteProblem(w, r, err)
		return
	}
	wait := n.askOthers(r, p, nodes)
	// This node's own rows meanwhile.
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
		return
	}
	var own conversationList
	if err := json.Unmarshal(rec.Body.Bytes(), &own); err != nil {
		handlers.WriteProblem(w, r, err)
		return
	}
	got := wait()
	n.lastRecords(r.Context(), got)
	out := n.merge(r.Context(), p, own, got)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(out)
}

// nodeAnswer is one other node's list (nil when it did not answer or is
// not live).
type nodeAnswer struct {
	node persistence.Node
	list *conversationList
}

// askOthers asks every other live node for its list at once; wait returns
// their answers by node name.
func (n *Node) askOthers(r *http.Request, p domain.Principal, nodes []persistence.Node) (wait func() []nodeAnswer) {
	var out []nodeAnswer
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, x := range nodes {
		if x.Name == n.Name {
			continue
		}
		if !n.live(x) {
			mu.Lock()
			out = append(out, nodeAnswer{node: x})
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := n.remoteList(r.Context(), x, p)
			if err != nil {
				n.Log.Debug("fleet list", "node", x.Name, "err", err)
			}
			mu.Lock()
			out = append(out, nodeAnswer{node: x, list: l})
			mu.Unlock()
		}()
	}
	return func() []nodeAnswer {
		wg.Wait()
		sort.Slice(out, func(i, j int) bool { return out[i].node.Name < out[j].node.Name })
		return out
	}
}

// lastRecords puts, for each node that did not answer, its last record
// read now, not from the list this call began with (up to a second old, it
// may predate the node's last record).
func (n *Node) lastRecords(ctx context.Context, answers []nodeAnswer) {
	var fresh []persistence.Node
	for i, a := range answers {
		if a.list != nil {
			continue
		}
		if fresh == nil {
			var err error
			if fresh, err = n.readNodes(ctx, true); err != nil {
				return // the list as read, then
			}
		}
		for _, x := range fresh {
			if x.Name == a.node.Name {
				answers[i].node = x
			}
		}
	}
}

// merge puts this node's rows and the others' together, each named by its
// node: a node that did not answer from its last record, as p would see it
// live and with no actions. A Turn is unavailable fleet-wide when no live
// node sees its pane (every node that answered lists it). The owners of
// the endpoints listed are remembered for routing.
func (n *Node) merge(ctx context.Context, p domain.Principal, own conversationList, answers []nodeAnswer) conversationList {
	out := conversationList{Conversations: []map[string]any{}, Unavailable: []map[string]any{}}
	owners := map[string]string{}
	add := func(node string, rows []map[string]any, live bool) {
		for _, row := range rows {
			row["node"] = node
			if live {
				row["node_state"] = "live"
				for _, id := range endpointsOf([]map[string]any{row}) {
					owners[id] = node
				}
			} else {
				row["node_state"] = "unreachable"
				row["available_actions"] = []any{}
				row["watches"] = []any{}
				delete(row, "session_id")
				delete(row, "approval")
				n.asSeenBy(ctx, row, p)
			}
			out.Conversations = append(out.Conversations, row)
		}
	}
	add(n.Name, own.Conversations, true)
	seen := map[string]int{}
	first := map[string]map[string]any{}
	count := func(l []map[string]any) {
		for _, t := range l {
			id, _ := t["turn_id"].(string)
			if seen[id] == 0 {
				first[id] = t
			}
			seen[id]++
		}
	}
	count(own.Unavailable)
	answered := 1
	for _, a := range answers {
		if a.list != nil {
			add(a.node.Name, a.list.Conversations, true)
			count(a.list.Unavailable)
			answered++
			continue
		}
		var rows []map[string]any
		_ = json.Unmarshal(a.node.Conversations, &rows)
		add(a.node.Name, rows, false)
	}
	for _, t := range own.Unavailable {
		if id, _ := t["turn_id"].(string); seen[id] == answered {
			out.Unavailable = append(out.Unavailable, first[id])
		}
	}
	n.mu.Lock()
	for id, node := range owners {
		n.owners[id] = node
	}
	n.mu.Unlock()
	return out
}

// remoteList asks the node at base for its own rows, as p.
func (n *Node) remoteList(ctx context.Context, x persistence.Node, p domain.Principal) (*conversationList, error) {
	ctx, cancel := context.WithTimeout(ctx, listWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(x.AdvertiseURL, "/")+"/v1/conversations", nil)
	if err != nil {
		return nil, err
	}
	n.sign(req, x.Name, p, nil)
	resp, err := n.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New("answered " + resp.Status)
	}
	var l conversationList
	if err := json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&l); err != nil {
		return nil, err
	}
	return &l, nil
}

// endpointsOf are the public ids rows answer to: conversation ids,
// terminal ids and a backend thread's cx_ id.
func endpointsOf(rows []map[string]any) []string {
	var out []string
	for _, row := range rows {
		if id, _ := row["conversation_id"].(string); id != "" {
			out = append(out, id)
		}
		if t, _ := row["terminal"].(map[string]any); t != nil {
			if id, _ := t["terminal_id"].(string); id != "" {
				out = append(out, id)
			}
		}
		if b, _ := row["backend"].(map[string]any); b != nil {
			if id, _ := b["native_thread_id"].(string); id != "" {
				out = append(out, domain.BackendEndpoint(id))
			}
		}
	}
	return out
}
