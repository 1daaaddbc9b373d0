package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	neturl "net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"akk/fleet"
	"akk/persistence/storetest"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// TestE2EFleet runs three nodes on one PostgreSQL database, each on a
// machine of its own (a network namespace on the test's own network, see
// netLab), reaching PostgreSQL, the webhook receiver and each other over
// it, each with its own tmux server and a real agent: n1 and n2 a Claude
// Code pane, n3 a Codex pane; n2's clock runs 20 s behind. One host
// registered once works on every node (n2 live, its clock
// notwithstanding); a loopback webhook URL is refused unless pinned to a
// node; the list through any node shows every pane with its node; a Send
// through n1 to n3's Codex completes with one webhook of each kind; n2's
// permission prompt is answered through n3; a stream on n2 sees n3's Turn
// live and resumes after a reconnect; n2 cut off the network for 10 s:
// calls to it answer within the forward wait and nothing reaches its
// agent late; n3's machine dies mid-Turn (cut off, then killed): its
// rows unreachable with no actions, actions refused with 503
// node_unreachable, typing nothing, and started again within a minute it
// completes the Turn with its callbacks once; PostgreSQL stopped for 8 s
// mid-Turn loses nothing, and the first list after shows every node
// live; a call that claims to come from a node but is
// not signed by one is refused.
func TestE2EFleet(t *testing.T) {
	claude, codex := newestClaudeAndCodex(t)
	lab := newNetLab(t)
	daemonBinary(t)
	skewed := failpointBinary(t)
	srv := storetest.StartServerTCP(t, lab.hostIP())
	url := tcpURL(srv, srv.NewDatabase(t))
	rec := newReceiver(t, lab.hostIP()+":0")
	ps, pushCA := NewPushServiceTLS(t, lab.hostIP()) // a phone's push service, on the fleet's network

	envs := []*agenttest.Env{agenttest.New(t, claude, agenttest.Options{}), agenttest.New(t, claude, agenttest.Options{}),
		agenttest.New(t, codex, agenttest.Options{})}
	for _, e := range envs {
		e.StartReady()
	}
	machines := []*labMachine{lab.machine(1), lab.machine(2), lab.machine(3)}
	nodes := make([]*proc, 3)
	for i, e := range envs {
		nodes[i] = &proc{t: t, bin: daemonBinary(t), dir: t.TempDir(), machine: machines[i],
			env: []string{"AKK_STORE=" + url, "AKK_NODE=n" + string(rune('1'+i)),
				"AKK_TMUX_SOCKETS=" + e.SocketPath(), "AKK_WEBHOOK_RETRY_SCHEDULE=200ms,500ms,1s", "SSL_CERT_FILE=" + pushCA}}
		if i == 1 {
			nodes[i].bin = skewed
			nodes[i].env = append(nodes[i].env, "AKK_CLOCK_OFFSET=-20s")
		}
		nodes[i].start()
		t.Cleanup(nodes[i].kill)
	}
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]

	// A loopback webhook URL would be posted by whichever node delivers,
	// to its own machine: refused unless the host is pinned to a node.
	var bad sendAnswer
	if code := call(t, "POST", n1.url+"/v1/hosts", n1.token(), `{"name":"l","webhook_url":"http://127.0.0.1:9/h"}`, &bad); code != 422 {
		t.Fatalf("a loopback webhook in a fleet: %d %+v", code, bad)
	}
	var pinned hostCreds
	if code := call(t, "POST", n1.url+"/v1/hosts", n1.token(), `{"name":"l","webhook_url":"http://127.0.0.1:9/h","delivery_node":"n1"}`, &pinned); code != 201 {
		t.Fatalf("a loopback webhook pinned to n1: %d", code)
	}
	if code := call(t, "DELETE", n1.url+"/v1/hosts/"+pinned.HostID, n1.token(), "", nil); code != 204 {
		t.Fatalf("delete the pinned host: %d", code)
	}

	// Register once, on n1: the host and n1's operator token work on n2.
	var host hostCreds
	if code := call(t, "POST", n1.url+"/v1/hosts", n1.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host); code != 201 {
		t.Fatalf("register host: %d", code)
	}
	var nl struct {
		Nodes []struct{ Name, State, Version string } `json:"nodes"`
	}
	if code := call(t, "GET", n2.url+"/v1/nodes", n1.token(), "", &nl); code != 200 || len(nl.Nodes) != 3 {
		t.Fatalf("nodes through n2 with n1's operator token: %d %+v", code, nl)
	}
	for i, n := range nl.Nodes {
		if n.Name != "n"+string(rune('1'+i)) || n.State != "live" {
			t.Fatalf("nodes %+v", nl.Nodes)
		}
	}

	// A host lists through n1 every 300 ms for the whole test (users'
	// conditions): every answer is 200 or, while a node or the store is
	// out of reach, 503; never a 500.
	stopListing := make(chan struct{})
	type tally struct{ n, bad int }
	listings := make(chan tally, 1)
	go func() {
		var c tally
		defer func() { listings <- c }()
		for {
			select {
			case <-stopListing:
				return
			case <-time.After(300 * time.Millisecond):
			}
			req, _ := http.NewRequest("GET", n1.url+"/v1/conversations", nil)
			req.Header.Set("Authorization", "Bearer "+host.Token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				continue // n1 itself is never stopped; a refused connection would show below as too few answers
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			c.n++
			if resp.StatusCode != 200 && resp.StatusCode != 503 {
				c.bad++
			}
		}
	}()
	defer func() {
		close(stopListing)
		c := <-listings
		if c.bad > 0 || c.n < 10 {
			t.Errorf("a host listing every 300 ms: %d answers, %d neither 200 nor 503", c.n, c.bad)
		} else {
			t.Logf("a host listed every 300 ms: %d answers", c.n)
		}
	}()

	// The list through any node: every pane, named by its node.
	rows := make([]conversationRow, 3)
	for i, e := range envs {
		rows[i] = findRow(t, nodes[(i+1)%3].url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
		if want := "n" + string(rune('1'+i)); rows[i].Node != want || rows[i].NodeState != "live" {
			t.Fatalf("row of %s: node %q %q, want %s live", e.ProjectDir, rows[i].Node, rows[i].NodeState, want)
		}
	}

	// A stream on n2, open before the Send.
	stream := openEvents(t, n2.url, host.Token, "")

	// A Send through n1 to n3's Codex: one webhook of each kind.
	text := "Say hello across the fleet"
	var s sendAnswer
	if code := call(t, "POST", n1.url+"/v1/turns", host.Token, `{"terminal_id":"`+rows[2].Terminal.TerminalID+`","request":"`+text+`"}`, &s); code != 202 {
		t.Fatalf("send through n1 to n3: %d %+v", code, s)
	}
	done := rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
	if got, want := done.Data["final_message"], fakemodel.DefaultReply(text); got != want {
		t.Fatalf("final message %q, want %q", got, want)
	}
	if types, _ := rec.forTurn(t, s.TurnID); strings.Join(types, ",") != "turn.accepted,turn.completed" {
		t.Fatalf("webhooks %v", types)
	}
	if n := userRequests(envs[2].Model, text); n != 1 {
		t.Fatalf("the request reached n3's model %d times", n)
	}
	var st struct {
		State string `json:"state"`
	}
	if code := call(t, "GET", n2.url+"/v1/turns/"+s.TurnID, host.Token, "", &st); code != 200 || st.State != "completed" {
		t.Fatalf("the Turn through n2: %d %+v", code, st)
	}
	// n2's stream saw it live; a reconnect after turn.accepted resumes.
	accepted := stream.until(t, s.TurnID, "turn.accepted")
	stream.until(t, s.TurnID, "turn.completed")
	stream.close()
	again := openEvents(t, n2.url, host.Token, accepted.id)
	first := again.next(t)
	if eventID(t, first.id) <= eventID(t, accepted.id) {
		t.Fatalf("resumed after %s at %s", accepted.id, first.id)
	}
	if first.event != "turn.completed" || !strings.Contains(first.data, s.TurnID) {
		again.until(t, s.TurnID, "turn.completed")
	}
	again.close()

	// n2's permission prompt, answered through n3.
	var a sendAnswer
	if code := call(t, "POST", n3.url+"/v1/turns", host.Token, `{"terminal_id":"`+rows[1].Terminal.TerminalID+
		`","request":"[[akk:bash cmd=\"touch akk-fleet && echo akk-fleet-$((40+2))\"]] run the check"}`, &a); code != 202 {
		t.Fatalf("send through n3 to n2: %d %+v", code, a)
	}
	rec.waitTurn(t, a.TurnID, "turn.approval_required", 60*time.Second)
	var as approvalStatus
	if code := call(t, "GET", n3.url+"/v1/turns/"+a.TurnID, host.Token, "", &as); code != 200 || as.Approval == nil ||
		strings.Join(as.Approval.Decisions, ",") != "approve_once,reject" {
		t.Fatalf("approval status through n3: %d %+v", code, as)
	}
	var ar sendAnswer
	if code := call(t, "POST", n3.url+"/v1/turns/"+a.TurnID+"/approval", host.Token, `{"decision":"approve_once"}`, &ar); code != 200 || ar.Outcome != "done" {
		t.Fatalf("approve through n3: %d %+v", code, ar)
	}
	rec.waitTurn(t, a.TurnID, "turn.completed", 60*time.Second)
	if n := toolResultsWith(envs[1], "akk-fleet-42"); n != 1 {
		t.Fatalf("the approved command's output reached n2's model %d times", n)
	}

	// A push for n2's next prompt, to the operator's phone subscribed
	// through n1: one push, from n2 (its monitor alone sees the pane),
	// and its tap, which reaches n1, answers through n2 once.
	phone, _ := NewPushClient()
	sub, _ := json.Marshal(map[string]any{"endpoint": ps.Register("phone", phone), "keys": map[string]string{"p256dh": phone.P256dh(), "auth": phone.AuthSecret()}})
	if code := call(t, "POST", n1.url+"/v1/ui/push/subscriptions", n1.token(), string(sub), nil); code != 201 {
		t.Fatalf("subscribe through n1: %d", code)
	}
	var pa sendAnswer
	if code := call(t, "POST", n1.url+"/v1/turns", host.Token, `{"terminal_id":"`+rows[1].Terminal.TerminalID+
		`","request":"[[akk:bash cmd=\"touch akk-fleet-push && echo akk-fleet-push-$((40+3))\"]] run it from the phone"}`, &pa); code != 202 {
		t.Fatalf("send through n1 to n2: %d %+v", code, pa)
	}
	pctx, pcancel := context.WithTimeout(context.Background(), agenttest.Patient(60*time.Second))
	push, err := ps.Wait(pctx, func(p Push) bool { return strings.Contains(string(p.Payload), pa.TurnID) })
	pcancel()
	if err != nil {
		t.Fatalf("no push for n2's prompt: %v", err)
	}
	var pl pushPayload
	json.Unmarshal(push.Payload, &pl)
	tok := pl.token("approve_once")
	if tok == "" {
		t.Fatalf("the push has no Approve once: %s", push.Payload)
	}
	if code, v := postAction(t, n1.url, "POST", tok); code != 200 || v["outcome"] != "done" {
		t.Fatalf("the tap, at n1: %d %v", code, v)
	}
	rec.waitTurn(t, pa.TurnID, "turn.completed", 60*time.Second)
	if n := toolResultsWith(envs[1], "akk-fleet-push-43"); n != 1 {
		t.Fatalf("the tapped command's output reached n2's model %d times", n)
	}
	if code, _ := postAction(t, n3.url, "POST", tok); code != 410 {
		t.Fatalf("the same tap again, at n3: %d", code)
	}
	count := 0
	for _, p := range ps.Pushes() {
		if strings.Contains(string(p.Payload), pa.TurnID) && strings.Contains(string(p.Payload), "approve_once") {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("%d pushes for one prompt", count)
	}

	// A call that names a node but is not signed with the fleet's key.
	req, _ := http.NewRequest("GET", n2.url+"/v1/conversations", nil)
	req.Header.Set("AKK-Node", "n1")
	req.Header.Set("AKK-Node-Principal", "operator")
	req.Header.Set("AKK-Node-Time", "0")
	req.Header.Set("AKK-Node-Signature", strings.Repeat("0", 64))
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("an unsigned node call: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}

	// n2 cut off the network for 10 s. A Send to its pane through n1
	// answers 503 within the forward wait (the call may have reached n2
	// and is then refused there: it arrived after its caller gave up); a
	// read answers 503 too; once n2 is back, nothing of the Send reached
	// its agent, and a Send completes.
	findRow(t, n1.url, host.Token, envs[1].ProjectDir, 30*time.Second, hasSend)
	cut := time.Now()
	machines[1].cut()
	lost := "A task sent while n2 is cut off"
	var ls sendAnswer
	if code := call(t, "POST", n1.url+"/v1/turns", host.Token, `{"terminal_id":"`+rows[1].Terminal.TerminalID+`","request":"`+lost+`"}`, &ls); code != 503 ||
		ls.Code != "node_unreachable" || time.Since(cut) > fleetForwardWait+3*time.Second {
		t.Fatalf("a Send to a node cut off: %d %+v after %s", code, ls, time.Since(cut))
	}
	t.Logf("a Send to a node cut off answered 503 after %s (do_not_retry %v)", time.Since(cut).Round(time.Millisecond), ls.DoNotRetry)
	asked := time.Now()
	if code := call(t, "GET", n3.url+"/v1/turns?state=working", host.Token, "", nil); code != 200 {
		t.Fatalf("a list of Turns while n2 is cut off: %d", code)
	}
	if code := call(t, "GET", n1.url+"/v1/conversations/"+rows[1].ConversationID, host.Token, "", &ls); code != 503 || time.Since(asked) > fleetForwardWait+3*time.Second {
		t.Fatalf("a read of n2's conversation while it is cut off: %d %+v after %s", code, ls, time.Since(asked))
	}
	for time.Since(cut) < 10*time.Second {
		time.Sleep(100 * time.Millisecond) // the partition lasts 10 s, whatever the calls took
	}
	machines[1].heal()
	row2 := findRow(t, n1.url, host.Token, envs[1].ProjectDir, 60*time.Second, func(c conversationRow) bool { return c.NodeState == "live" && hasSend(c) })
	after := "A task once n2 is back"
	back := sendAccepted(t, n1.url, host.Token, row2.Terminal.TerminalID, after, rec)
	rec.waitTurn(t, back.TurnID, "turn.completed", 90*time.Second)
	if n, m := userRequests(envs[1].Model, lost), userRequests(envs[1].Model, after); n != 0 || m != 1 {
		t.Fatalf("n2's model saw the task sent while it was cut off %d times, the one after %d times", n, m)
	}

	// n3's machine dies mid-Turn: cut off the network (its connections
	// never close), then killed. Its rows unreachable, actions refused,
	// nothing typed; started again within a minute on a new machine of
	// the same address, it completes the Turn, callbacks once. Before,
	// PostgreSQL kept the dead node's session, and its lock, for two
	// hours: every start was refused.
	findRow(t, n1.url, host.Token, envs[2].ProjectDir, 30*time.Second, hasSend)
	slow := "[[akk:slow secs=12]] a slow task on n3"
	k := sendAccepted(t, n1.url, host.Token, rows[2].Terminal.TerminalID, slow, rec)
	// n3's last record names the Turn (it records its rows every 5 s).
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(30 * time.Second); ; {
		var convs string
		if err := db.QueryRow(`SELECT conversations FROM nodes WHERE name = 'n3'`).Scan(&convs); err == nil && strings.Contains(convs, k.TurnID) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("n3 never recorded its rows with the Turn: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	machines[2].cut()
	n3.kill()
	machines[2].die()
	gone := findRow(t, n1.url, host.Token, envs[2].ProjectDir, 20*time.Second, func(c conversationRow) bool {
		return c.NodeState == "unreachable" && c.ConversationID == rows[2].ConversationID
	})
	if gone.Node != "n3" || len(gone.AvailableActions) != 0 || gone.Managed.CurrentTurn == nil || gone.Managed.CurrentTurn.TurnID != k.TurnID {
		var convs, seenAt string
		db.QueryRow(`SELECT conversations, last_seen FROM nodes WHERE name = 'n3'`).Scan(&convs, &seenAt)
		var raw json.RawMessage
		call(t, "GET", n1.url+"/v1/conversations", host.Token, "", &raw)
		t.Fatalf("n3's row while it is dead: %+v\nits last record (last seen %s): %s\nn1's list: %s", gone, seenAt, convs, raw)
	}
	// Another host sees n3's last record as it would see n3 live: the
	// pane held by a Turn not its own, no id, no state.
	var other hostCreds
	if code := call(t, "POST", n1.url+"/v1/hosts", n1.token(), `{"name":"other","webhook_url":"http://`+rec.addr+`/other"}`, &other); code != 201 {
		t.Fatalf("register another host: %d", code)
	}
	seen := findRow(t, n2.url, other.Token, envs[2].ProjectDir, 20*time.Second, func(c conversationRow) bool {
		return c.NodeState == "unreachable" && c.ConversationID == rows[2].ConversationID
	})
	if seen.Managed.CurrentTurn != nil || !seen.Managed.HeldByOther {
		t.Fatalf("another host's view of n3's last record: %+v", seen.Managed)
	}
	refused := "A task for a dead node"
	var p sendAnswer
	if code := call(t, "POST", n1.url+"/v1/turns", host.Token, `{"terminal_id":"`+rows[2].Terminal.TerminalID+`","request":"`+refused+`"}`, &p); code != 503 || p.Code != "node_unreachable" {
		t.Fatalf("send to a dead node: %d %+v", code, p)
	}
	if code := call(t, "POST", n2.url+"/v1/turns/"+k.TurnID+"/cancel", host.Token, `{}`, &p); code != 503 || p.Code != "node_unreachable" {
		t.Fatalf("cancel on a dead node: %d %+v", code, p)
	}
	// Its heartbeat stops: the node list says so within 15 s.
	for deadline := time.Now().Add(agenttest.Patient(15 * time.Second)); ; {
		if code := call(t, "GET", n1.url+"/v1/nodes", n1.token(), "", &nl); code == 200 && nl.Nodes[2].State == "unreachable" {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("nodes with n3 dead: %d %+v", code, nl)
		}
		time.Sleep(200 * time.Millisecond)
	}
	machines[2].up()
	n3.startWait = time.Minute
	restart := time.Now()
	n3.start()
	t.Logf("n3 started again %s after its machine died", time.Since(restart).Round(time.Millisecond))
	rec.waitTurn(t, k.TurnID, "turn.completed", 90*time.Second)
	if n := rec.count(t, k.TurnID, "turn.completed"); n != 1 {
		t.Fatalf("turn.completed arrived %d times", n)
	}
	if userRequests(envs[2].Model, slow) != 1 || userRequests(envs[2].Model, refused) != 0 {
		t.Fatalf("n3's model saw the slow task %d times, the refused one %d", userRequests(envs[2].Model, slow), userRequests(envs[2].Model, refused))
	}

	// PostgreSQL stopped for 8 s mid-Turn (n1's pane, sent through n2):
	// no node could heartbeat meanwhile, yet the first list once it is
	// back shows every node live (before, each looked unreachable until
	// its next heartbeat), and every callback arrives once.
	findRow(t, n2.url, host.Token, envs[0].ProjectDir, 30*time.Second, hasSend)
	slow = "[[akk:slow secs=4]] a slow task while the store restarts"
	r := sendAccepted(t, n2.url, host.Token, rows[0].Terminal.TerminalID, slow, rec)
	srv.Stop()
	stopped := time.Now()
	for time.Since(stopped) < 8*time.Second {
		time.Sleep(100 * time.Millisecond) // the outage lasts longer than a node may miss heartbeats
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		var list struct{ Conversations []conversationRow }
		if code := call(t, "GET", n3.url+"/v1/conversations", host.Token, "", &list); code == 200 {
			for _, c := range list.Conversations {
				if c.NodeState != "live" {
					t.Fatalf("right after the store came back, %s's row is %s", c.Node, c.NodeState)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the list never answered after the store came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
	rec.waitTurn(t, r.TurnID, "turn.completed", 90*time.Second)
	if n := rec.count(t, r.TurnID, "turn.completed"); n != 1 {
		t.Fatalf("turn.completed arrived %d times after the store restarted", n)
	}
	for i, e := range envs {
		row := findRow(t, nodes[i].url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool { return c.NodeState == "live" })
		if row.Node != "n"+string(rune('1'+i)) {
			t.Fatalf("after the store restarted: %+v", row)
		}
	}
	for _, dl := range rec.deliveries() {
		verify(t, host.WebhookSecret, dl)
	}
}

// eventStream reads one SSE stream as it comes.
type eventStream struct {
	cancel context.CancelFunc
	events chan sseEvent
	seen   []string // id and type of each event read, for a failure's message
}

func openEvents(t testing.TB, base, token, lastID string) *eventStream {
	t.Helper()
	return openSSE(t, base+"/v1/events", token, lastID)
}

// openSSE opens the event stream at url.
func openSSE(t testing.TB, url, token, lastID string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		cancel()
		t.Fatalf("events: %v %v", err, resp)
	}
	s := &eventStream{cancel: cancel, events: make(chan sseEvent, 1024)}
	go func() {
		defer resp.Body.Close()
		defer close(s.events)
		scanSSE(resp.Body, func(e sseEvent) bool { s.events <- e; return true })
	}()
	t.Cleanup(s.close)
	return s
}

func (s *eventStream) close() { s.cancel() }

// ended waits until the server ends the stream.
func (s *eventStream) ended(t *testing.T) {
	t.Helper()
	timeout := time.After(agenttest.Patient(30 * time.Second))
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return
			}
		case <-timeout:
			t.Fatal("the event stream is still open")
		}
	}
}

func (s *eventStream) next(t testing.TB) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatalf("the event stream ended; it had sent %s", s.seen)
		}
		s.seen = append(s.seen, ev.id+" "+ev.event)
		return ev
	case <-time.After(agenttest.Patient(60 * time.Second)):
		t.Fatalf("no event within a minute; the stream had sent %s", s.seen)
	}
	return sseEvent{}
}

// until reads until the event of this type about subject.
func (s *eventStream) until(t *testing.T, subject, typ string) sseEvent {
	t.Helper()
	for {
		ev := s.next(t)
		if ev.event == typ && strings.Contains(ev.data, subject) {
			return ev
		}
	}
}

func eventID(t *testing.T, id string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatalf("event id %q: %v", id, err)
	}
	return n
}

// fleetForwardWait is the nodes' bound on a forwarded call (fleet.ForwardWait).
const fleetForwardWait = fleet.ForwardWait

// tcpURL is the TCP URL of the database whose socket URL is sock, on srv
// (StartServerTCP): how nodes on other machines reach it.
func tcpURL(srv *storetest.Server, sock string) string {
	u, err := neturl.Parse(sock)
	if err != nil {
		panic(err)
	}
	return srv.TCPURL(strings.TrimPrefix(u.Path, "/"))
}
