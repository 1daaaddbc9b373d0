package agentpane

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agenttest"
)

// A world is one pinned version's agent in a pane of its own tmux server,
// with its fake model, started once and shared by the package's
// end-to-end tests (TESTING.md, "The shared world"): TestE2EApproval,
// TestE2EInteraction and TestE2ETurn run in that order, so a version's
// agent starts once instead of three times. A test leases the world with
// sharedPane; when it ends the world goes back to the pool only if the
// test passed, did not call dirty and the Adapter proves the pane
// send-ready again. Otherwise it is torn down, so no test meets another's
// leftovers.
type world struct {
	own   *agenttest.Owner
	e     *agenttest.Env
	files map[string]bool // the project folder's entries when the world was made
}

var worlds = struct {
	sync.Mutex
	idle         map[string]*world // by agent version
	made, leases int
}{idle: map[string]*world{}}

// sharedPane leases agent a's world: its pane in a new native thread
// (Claude Code's /clear, proven on screen; Codex keeps its thread), with
// the project folder as it was made and the fake model's record emptied.
// It returns what startPane returns, and dirty: a test calls it when it
// leaves the pane in a state nobody checks (the agent replaced).
func sharedPane(t *testing.T, a agenttest.Agent) (e *agenttest.Env, x *Adapter, term domain.Terminal, dirty func()) {
	t.Helper()
	worlds.Lock()
	w := worlds.idle[a.Name()]
	delete(worlds.idle, a.Name())
	worlds.leases++
	worlds.Unlock()
	if w == nil {
		w = newWorld(t, a)
	} else {
		w.own.Bind(t)
		w.reset(t)
		w.e.WithT(t).NewThread()
	}
	left := false
	e = w.e.WithT(t)
	t.Cleanup(func() { w.release(t, a, left) })
	x, term = adapterFor(t, e, nil)
	return e, x, term, func() { left = true }
}

func newWorld(t *testing.T, a agenttest.Agent) *world {
	t.Helper()
	w := &world{own: &agenttest.Owner{}}
	w.own.Bind(t)
	ok := false
	defer func() {
		if !ok { // a Fatal while making it: what was started stops
			w.own.Run()
		}
	}()
	w.e = agenttest.New(w.own, a, agenttest.Options{})
	w.e.StartReady()
	w.files = w.e.ProjectEntries()
	worlds.Lock()
	worlds.made++
	worlds.Unlock()
	ok = true
	return w
}

// reset removes what earlier tests left in the project folder and empties
// the fake model's record of requests.
func (w *world) reset(t *testing.T) {
	w.e.WithT(t).ResetProject(w.files)
	w.e.Model.Forget()
}

// release ends a lease: the world goes back to the pool when the test
// passed, left nothing unchecked and the pane is send-ready (10 s at most).
func (w *world) release(t *testing.T, a agenttest.Agent, dirty bool) {
	w.own.Bind(t)
	pooled := false
	defer func() {
		if !pooled { // torn down, also when a Fatal below ends the cleanup
			w.own.Run()
		}
	}()
	if !t.Failed() && !dirty {
		x, term := adapterFor(t, w.e.WithT(t), nil)
		deadline := time.Now().Add(10 * time.Second)
		for {
			now, err := x.Observe(context.Background(), term.ID)
			if err == nil && now.SendReady() {
				pooled = true
				w.own.Bind(nil)
				worlds.Lock()
				worlds.idle[a.Name()] = w
				worlds.Unlock()
				return
			}
			if time.Now().After(deadline) {
				t.Logf("%s: the pane is not send-ready after the test (%v); its world is not reused", a.Name(), err)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// closeWorlds tears down the idle worlds when the package's tests end.
func closeWorlds() {
	worlds.Lock()
	defer worlds.Unlock()
	if worlds.leases > 0 {
		fmt.Printf("worlds: %d leases, %d worlds made\n", worlds.leases, worlds.made)
	}
	for _, w := range worlds.idle {
		w.own.Run()
	}
	worlds.idle = map[string]*world{}
}

func TestMain(m *testing.M) {
	code := m.Run()
	closeWorlds()
	os.Exit(code)
}
