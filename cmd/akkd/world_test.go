package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// A world is one pinned version's agent in a pane of its own tmux server,
// its fake model and an akkd that lists that server: what an end-to-end
// capability test needs, started once and shared by the tests of the
// package (TESTING.md, "The shared world"). A test leases one with
// useWorld; when it ends, the world goes back to the pool if the test
// passed and the pane is proven idle, and is torn down otherwise, so no
// test meets another's leftovers.
type world struct {
	key   string
	a     agenttest.Agent
	own   *agenttest.Owner
	e     *agenttest.Env
	d     *proc
	op    string
	files map[string]bool // the project folder's entries when the world was made
	// shared: the world may come back to the pool (not made for ownWorld).
	shared bool
}

// listEvery is how often a test reads the conversation list while it
// waits for a row: a list costs akkd about 20 ms of CPU for one pane
// (measured: 100 lists, 1.9–2.4 CPU-seconds with its tmux commands), so
// tests that all polled every 200 ms spent a good part of two cores
// listing. A row's evidence is seen at most this much later.
const listEvery = 400 * time.Millisecond

// need is what a test needs of its world's pane.
type need int

const (
	// idlePane: the world's pane, proven idle (AKK offers a send on it and
	// holds no Turn), in a new native thread (Claude Code's /clear, proven
	// on screen; Codex keeps its thread, see agenttest.Env.NewThread).
	idlePane need = iota
	// freshProcess: the agent started anew in the pane (a new process and
	// a new native thread), for a test about what a start shows.
	freshProcess
	// ownWorld: a world no other test used and none will: for a test that
	// reads what the project's earlier threads left (the agent's thread
	// list), or that needs the agent exactly as it starts.
	ownWorld
)

// worldSpec is what a test asks of its world. Tests whose specs are equal
// share worlds; a different agent option or akkd environment gets a world
// of its own.
type worldSpec struct {
	opts agenttest.Options
	env  []string // akkd's environment beyond its tmux server (KEY=VALUE)
	need need
}

func (s worldSpec) key(a agenttest.Agent) string {
	o := s.opts
	o.BeforeAnswer, o.Model = nil, nil
	env := slices.Clone(s.env)
	sort.Strings(env)
	return fmt.Sprintf("%s|%+v|%s", a.Name(), o, strings.Join(env, " "))
}

// lease is one test's use of a world.
type lease struct {
	t           *testing.T
	w           *world
	a           agenttest.Agent
	e           *agenttest.Env
	model       *fakemodel.Server
	d           *proc
	op          string
	rec         *receiver
	host, other hostCreds
	leftDirty   bool
}

var pool = struct {
	sync.Mutex
	idle map[string][]*world
	// shared counts the worlds of a spec that may come back to the pool,
	// leased or idle; freed is closed (and made anew) when one comes back
	// or is torn down.
	shared               map[string]int
	freed                chan struct{}
	made, leases, waited int
}{idle: map[string][]*world{}, shared: map[string]int{}, freed: make(chan struct{})}

// worldWait is how long a lease waits for its spec's world while another
// test holds it, rather than start a second agent for the same version:
// with four tests at once, 26 of a run's 60 worlds were made that way, each
// an agent start (2–2.5 CPU-seconds) for a lease of 15–30 s.
const worldWait = 30 * time.Second

// freedLocked wakes the leases waiting for a world; the caller holds pool.
func freedLocked() {
	close(pool.freed)
	pool.freed = make(chan struct{})
}

// useWorld leases a world for agent a: an idle one of the same spec from
// the pool, the one another test holds once it comes back (worldWait at
// most), or a new one. The lease has its own webhook receiver and two
// hosts of its own ("h" and "o", both delivering to it).
func useWorld(t *testing.T, a agenttest.Agent, spec worldSpec) *lease {
	t.Helper()
	key := spec.key(a)
	pool.Lock()
	var w *world
	waited := false
	deadline := time.Now().Add(worldWait)
	for spec.need != ownWorld {
		if ws := pool.idle[key]; len(ws) > 0 {
			w, pool.idle[key] = ws[len(ws)-1], ws[:len(ws)-1]
			break
		}
		if pool.shared[key] == 0 || !time.Now().Before(deadline) {
			break
		}
		if !waited {
			waited = true
			pool.waited++
		}
		freed := pool.freed
		pool.Unlock()
		select {
		case <-freed:
		case <-time.After(time.Until(deadline)):
		}
		pool.Lock()
	}
	if w == nil && spec.need != ownWorld {
		pool.shared[key]++ // counted from now: a lease arriving meanwhile waits for it
	}
	pool.Unlock()
	if w == nil {
		w = newWorld(t, a, spec, key)
	} else {
		w.own.Bind(t)
		w.e.WithT(t).ResetProject(w.files)
		w.e.Model.Forget()
		if spec.need == freshProcess {
			w.e.WithT(t).Respawn()
		} else {
			w.e.WithT(t).NewThread()
		}
	}
	pool.Lock()
	pool.leases++
	pool.Unlock()
	l := &lease{t: t, w: w, a: a, e: w.e.WithT(t), model: w.e.Model, d: w.d, op: w.op, leftDirty: spec.need == ownWorld}
	t.Cleanup(l.release)
	l.rec = newReceiver(t, "")
	call(t, "POST", w.d.url+"/v1/hosts", w.op, `{"name":"h","webhook_url":"http://`+l.rec.addr+`/h"}`, &l.host)
	call(t, "POST", w.d.url+"/v1/hosts", w.op, `{"name":"o","webhook_url":"http://`+l.rec.addr+`/o"}`, &l.other)
	if l.host.Token == "" || l.other.Token == "" {
		t.Fatalf("%s: no hosts on the world's akkd", a.Name())
	}
	return l
}

func newWorld(t *testing.T, a agenttest.Agent, spec worldSpec, key string) *world {
	t.Helper()
	own := &agenttest.Owner{}
	own.Bind(t)
	// Counted in pool.shared by useWorld from the start: a Fatal while
	// making it stops what was started and uncounts it.
	w := &world{key: key, a: a, own: own, shared: spec.need != ownWorld}
	ok := false
	defer func() {
		if !ok {
			w.close(t)
		}
	}()
	w.e = agenttest.New(own, a, spec.opts)
	w.e.StartReady()
	// Webhook retries come quickly, so a test of a redelivery need not wait.
	env := append([]string{"AKK_TMUX_SOCKETS=" + w.e.SocketPath(), "AKK_WEBHOOK_RETRY_SCHEDULE=200ms,500ms,1s"}, spec.env...)
	w.d = startProc(own, own.TempDir(), env...)
	w.op = w.d.token()
	w.files = w.e.ProjectEntries()
	pool.Lock()
	pool.made++
	pool.Unlock()
	ok = true
	return w
}

// daemon is the world's akkd as the in-process daemon's type, for tests
// written against startDaemon. Its stop does nothing: the world stops it.
func (l *lease) daemon() *daemon {
	return &daemon{url: l.d.url, token: l.op, stateDir: l.d.dir, stop: func() {}}
}

// dirty says the test left the pane or akkd in a state nobody checked
// (a mode changed, a process killed): the world is torn down, not reused.
func (l *lease) dirty() { l.leftDirty = true }

// release ends the lease: the world goes back to the pool only when the
// test passed, akkd runs and the pane is proven idle again.
func (l *lease) release() {
	t, w := l.t, l.w
	w.own.Bind(t)
	pooled := false
	defer func() {
		if !pooled { // closed, also when a Fatal below ends the cleanup
			w.close(t)
		}
	}()
	reuse := !t.Failed() && !l.leftDirty && l.d.cmd != nil
	if reuse {
		for _, h := range []hostCreds{l.host, l.other} {
			if h.HostID != "" {
				call(t, "DELETE", l.d.url+"/v1/hosts/"+h.HostID, l.op, "", nil)
			}
		}
		reuse = l.idle()
	}
	if !reuse {
		return
	}
	pool.Lock()
	if len(pool.idle[w.key]) > 0 { // one idle world per spec is kept
		pool.Unlock()
		return
	}
	pooled = true
	pool.idle[w.key] = append(pool.idle[w.key], w)
	freedLocked()
	pool.Unlock()
}

// idle waits (10 s at most) for the operator's view of the pane to offer a
// send with no Turn held: the proof that the next test starts clean.
func (l *lease) idle() bool {
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list struct{ Conversations []conversationRow }
		call(l.t, "GET", l.d.url+"/v1/conversations", l.op, "", &list)
		for _, c := range list.Conversations {
			if c.Project == l.e.ProjectDir && c.Transport == "terminal" && hasSend(c) && c.Terminal.ComposerEmpty &&
				(c.Managed.CurrentTurn == nil || c.Managed.CurrentTurn.TurnID == "") {
				return true
			}
		}
		if time.Now().After(deadline) {
			l.t.Logf("%s: the pane is not idle after the test; its world is not reused", l.a.Name())
			return false
		}
		time.Sleep(listEvery)
	}
}

// close stops what the world started (akkd, then the agent's tmux server
// and fake model).
func (w *world) close(t testing.TB) {
	w.own.Bind(t)
	w.own.Run()
	if w.shared {
		pool.Lock()
		w.shared = false
		pool.shared[w.key]--
		freedLocked()
		pool.Unlock()
	}
}

// closeWorlds tears down the idle worlds when the package's tests end.
func closeWorlds() {
	pool.Lock()
	if pool.leases > 0 {
		fmt.Printf("worlds: %d leases, %d worlds made, %d waits for a world another test held\n", pool.leases, pool.made, pool.waited)
	}
	idle := pool.idle
	pool.idle = map[string][]*world{}
	pool.Unlock()
	for _, ws := range idle {
		for _, w := range ws {
			w.close(nil)
		}
	}
}
