package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"akk/persistence/storetest"
	"akk/terminaldrivers/agenttest"
)

// BenchmarkE2EFleet measures a fleet of three nodes on one PostgreSQL
// database, each with its own tmux server of 10 stand-in panes: list
// latency through one node (median, p95); an event stored through n3 to
// an SSE client of n2 (median, p95); webhook deliveries per second to a
// local receiver from a backlog, with 3 and with 1 delivering node (and
// how fast the backlog was queued); and how long a dead
// node's leased delivery waits before another node makes it. Run with
// -benchtime=1x (make bench-fleet).
//
// Then what failures cost: the answer time of a forwarded call to a node
// cut off the network (while its heartbeat is fresh, and once it is
// stale); how long a node whose machine died hard (cut off, killed) takes
// to start again; and how many calls with a made-up AKK-Node header one
// node refuses per second while the operator reads, and the operator's
// read latency meanwhile. Each node runs on a machine of its own
// (netLab).
func BenchmarkE2EFleet(b *testing.B) {
	s := agenttest.InstallStandin(b, b.TempDir(), agenttest.KindClaude)
	lab := newNetLab(b)
	pg := storetest.StartServerTCP(b, lab.hostIP())
	url := tcpURL(pg, pg.NewDatabase(b))
	var nodes []*proc
	var machines []*labMachine
	var projects, finish []string
	for i := range 3 {
		ts := startScaleServer(b, s, 10)
		projects, finish = append(projects, ts.projects...), append(finish, ts.finish...)
		m := lab.machine(i + 1)
		p := &proc{t: b, bin: daemonBinary(b), dir: b.TempDir(), machine: m,
			env: []string{"AKK_STORE=" + url, fmt.Sprintf("AKK_NODE=n%d", i+1), "AKK_TMUX_SOCKETS=" + ts.socket}}
		p.start()
		b.Cleanup(p.kill)
		nodes, machines = append(nodes, p), append(machines, m)
	}
	n1, n2, n3 := nodes[0], nodes[1], nodes[2]
	op := n1.token()
	hook := newGate(b, lab.hostIP())
	var hosts []hostCreds
	for i := range 24 {
		var h hostCreds
		if code := call(b, "POST", n1.url+"/v1/hosts", op, fmt.Sprintf(`{"name":"h%d","webhook_url":"http://%s/h"}`, i, hook.addr), &h); code != 201 {
			b.Fatalf("register: %d", code)
		}
		hosts = append(hosts, h)
	}
	waitRows(b, n1.url, op, projects, 60*time.Second)
	b.ResetTimer()

	// List latency through n1 over 3 nodes × 10 panes.
	var lists []time.Duration
	for range 30 {
		var list struct{ Conversations []conversationRow }
		t0 := time.Now()
		call(b, "GET", n1.url+"/v1/conversations", op, "", &list)
		lists = append(lists, time.Since(t0))
		if len(list.Conversations) != 30 {
			b.Fatalf("listed %d rows", len(list.Conversations))
		}
	}

	// An event stored through n3 reaches a stream on n2.
	stream := openEvents(b, n2.url, op, "").events
	var events []time.Duration
	for range 30 {
		t0 := time.Now()
		call(b, "POST", n3.url+"/v1/hosts/"+hosts[0].HostID+"/ping", op, "", nil)
		for {
			ev := <-stream
			if ev.event == "host.ping" {
				break
			}
		}
		events = append(events, time.Since(t0))
	}
	hook.waitDelivered(b, 30)

	// The stand-ins end their turns (idle panes draw nothing): the webhook
	// figures are the fleet's, not the machine's two cores shared with 30
	// panes replaying a working agent.
	for _, f := range finish {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}

	// Deliveries per second: 16 clients queue 1,200 pings through the
	// nodes while the receiver holds the first delivery of each host, then
	// it lets go: the figure is the backlog delivered over the time from
	// then to the last delivery. (Queueing must take well under the
	// webhook timeout, 15 s, or held deliveries fail into the retry
	// schedule.)
	var queued []float64
	rate := func(n int, through []*proc) float64 {
		start := hook.delivered()
		hook.close()
		t0 := time.Now()
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < n; i += 16 {
					h := hosts[i%len(hosts)]
					if code := call(b, "POST", through[i%len(through)].url+"/v1/hosts/"+h.HostID+"/ping", op, "", nil); code/100 != 2 {
						b.Errorf("ping: %d", code)
						return
					}
				}
			}()
		}
		wg.Wait()
		if q := time.Since(t0); q > 10*time.Second {
			b.Fatalf("queueing %d pings took %v: held deliveries would time out", n, q)
		}
		queued = append(queued, float64(n)/time.Since(t0).Seconds())
		t1 := time.Now()
		hook.open()
		hook.waitDelivered(b, start+n)
		return float64(n) / time.Since(t1).Seconds()
	}
	three := rate(1200, nodes)
	n2.kill()
	n3.kill()
	one := rate(1200, nodes[:1])

	// A dead node's leased delivery: n2 and n3 again, the receiver holds
	// a delivery; its node is killed; another node makes it.
	n2.start()
	n3.start()
	db, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var takeovers []time.Duration
	for round := range 3 {
		hook.close()
		before := hook.attempts()
		call(b, "POST", n1.url+"/v1/hosts/"+hosts[round].HostID+"/ping", op, "", nil)
		hook.waitAttempts(b, before+1)
		var owner string
		if err := db.QueryRow(`SELECT lease_node FROM notifications WHERE state = 'pending' AND lease_until IS NOT NULL`).Scan(&owner); err != nil {
			b.Fatal(err)
		}
		dead := map[string]*proc{"n1": n1, "n2": n2, "n3": n3}[owner]
		dead.kill()
		t0 := time.Now()
		hook.waitAttempts(b, before+2)
		takeovers = append(takeovers, time.Since(t0))
		hook.open()
		dead.start()
	}

	// A forwarded call to a node cut off the network: at once (its
	// heartbeat still fresh: the call waits for the forward deadline),
	// then once the heartbeat is stale (refused at once).
	var n2conv string
	var list struct{ Conversations []conversationRow }
	call(b, "GET", n1.url+"/v1/conversations", op, "", &list)
	for _, r := range list.Conversations {
		if r.Node == "n2" && r.NodeState == "live" {
			n2conv = r.ConversationID
			break
		}
	}
	if n2conv == "" {
		b.Fatal("no live row of n2")
	}
	machines[1].cut()
	t0 := time.Now()
	if code := call(b, "GET", n1.url+"/v1/conversations/"+n2conv, op, "", nil); code != 503 {
		b.Fatalf("a read on a node cut off: %d", code)
	}
	cutFresh := time.Since(t0)
	for {
		var nl struct {
			Nodes []struct{ Name, State string } `json:"nodes"`
		}
		call(b, "GET", n1.url+"/v1/nodes", op, "", &nl)
		if nl.Nodes[1].State == "unreachable" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t0 = time.Now()
	if code := call(b, "GET", n1.url+"/v1/conversations/"+n2conv, op, "", nil); code != 503 {
		b.Fatalf("a read on a node cut off, unreachable: %d", code)
	}
	cutStale := time.Since(t0)
	machines[1].heal()

	// A node whose machine dies hard: cut off, killed, its machine gone;
	// started again on a new machine of the same address.
	machines[2].cut()
	n3.kill()
	machines[2].die()
	t0 = time.Now()
	machines[2].up()
	n3.startWait = time.Minute
	n3.start()
	restart := time.Since(t0)

	// Calls with a made-up AKK-Node header, 8 clients for 3 s, while the
	// operator reads the hosts; and the operator's reads alone.
	read := func() time.Duration {
		t0 := time.Now()
		if code := call(b, "GET", n1.url+"/v1/hosts", op, "", nil); code != 200 {
			b.Fatalf("the operator's read: %d", code)
		}
		return time.Since(t0)
	}
	var quiet, flooded []time.Duration
	for range 30 {
		quiet = append(quiet, read())
	}
	stop := make(chan struct{})
	var refused atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", n1.url+"/v1/hosts", nil)
				req.Header.Set("AKK-Node", fmt.Sprintf("mallory-%d", refused.Load()))
				req.Header.Set("AKK-Node-Time", fmt.Sprint(time.Now().UnixMilli()))
				req.Header.Set("AKK-Node-Signature", "00")
				if resp, err := http.DefaultClient.Do(req); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode == 401 {
						refused.Add(1)
					}
				}
			}
		}()
	}
	flood := time.Now()
	for time.Since(flood) < 3*time.Second {
		flooded = append(flooded, read())
	}
	close(stop)
	wg.Wait()
	floodRate := float64(refused.Load()) / time.Since(flood).Seconds()
	b.StopTimer()

	slices.Sort(lists)
	slices.Sort(events)
	slices.Sort(takeovers)
	b.ReportMetric(ms(lists[len(lists)/2]), "list-median-ms")
	b.ReportMetric(ms(lists[len(lists)*95/100]), "list-p95-ms")
	b.ReportMetric(ms(events[len(events)/2]), "event-median-ms")
	b.ReportMetric(ms(events[len(events)*95/100]), "event-p95-ms")
	b.ReportMetric(three, "webhooks/s-3-nodes")
	b.ReportMetric(one, "webhooks/s-1-node")
	b.ReportMetric(queued[0], "queued/s-3-nodes")
	b.ReportMetric(queued[1], "queued/s-1-node")
	b.ReportMetric(takeovers[len(takeovers)-1].Seconds(), "takeover-max-s")
	b.ReportMetric(cutFresh.Seconds(), "cut-off-fresh-s")
	b.ReportMetric(ms(cutStale), "cut-off-stale-ms")
	b.ReportMetric(restart.Seconds(), "hard-crash-restart-s")
	slices.Sort(quiet)
	slices.Sort(flooded)
	b.ReportMetric(floodRate, "unsigned-refused/s")
	b.ReportMetric(ms(quiet[len(quiet)/2]), "operator-read-median-ms")
	b.ReportMetric(ms(flooded[len(flooded)/2]), "operator-read-flooded-median-ms")
	b.ReportMetric(0, "ns/op")
}

// gate is a webhook receiver that can hold deliveries until it opens.
type gate struct {
	addr string
	mu   sync.Mutex
	cond *sync.Cond
	shut bool
	ids  map[string]bool
	n    int // attempts
}

func newGate(b *testing.B, host string) *gate {
	g := &gate{ids: map[string]bool{}}
	g.cond = sync.NewCond(&g.mu)
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		b.Fatal(err)
	}
	g.addr = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.n++
		g.cond.Broadcast()
		for g.shut && r.Context().Err() == nil {
			g.cond.Wait()
		}
		if r.Context().Err() == nil {
			g.ids[r.Header.Get("webhook-id")] = true
		}
		g.cond.Broadcast()
		g.mu.Unlock()
	})}
	go srv.Serve(ln)
	// A held request whose client went away must wake its handler.
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			g.cond.Broadcast()
		}
	}()
	b.Cleanup(func() {
		g.open()
		srv.Shutdown(context.Background())
	})
	return g
}

func (g *gate) close() { g.mu.Lock(); g.shut = true; g.mu.Unlock() }
func (g *gate) open()  { g.mu.Lock(); g.shut = false; g.cond.Broadcast(); g.mu.Unlock() }
func (g *gate) delivered() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.ids)
}
func (g *gate) attempts() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}

func (g *gate) waitFor(b *testing.B, what string, ok func() bool) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	g.mu.Lock()
	defer g.mu.Unlock()
	for !ok() {
		if time.Now().After(deadline) {
			b.Fatalf("receiver: no %s within 2 min (%d delivered, %d attempts)", what, len(g.ids), g.n)
		}
		g.cond.Wait()
	}
}

func (g *gate) waitDelivered(b *testing.B, n int) {
	g.waitFor(b, fmt.Sprint(n, " deliveries"), func() bool { return len(g.ids) >= n })
}

func (g *gate) waitAttempts(b *testing.B, n int) {
	g.waitFor(b, fmt.Sprint(n, " attempts"), func() bool { return g.n >= n })
}
