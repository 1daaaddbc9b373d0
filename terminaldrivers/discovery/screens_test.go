package discovery

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/terminaldrivers/tmux"
)

// gatedRunner runs tmux, counting the captures it starts, and holds the
// first capture until gate is closed.
type gatedRunner struct {
	mu       sync.Mutex
	captures [][]string // the panes of each capture process
	gate     chan struct{}
}

func (r *gatedRunner) Run(ctx context.Context, args ...string) ([]byte, error) {
	var panes []string
	for i, a := range args {
		if a == "capture-pane" {
			panes = append(panes, args[i+3])
		}
	}
	if len(panes) > 0 {
		r.mu.Lock()
		r.captures = append(r.captures, panes)
		first := len(r.captures) == 1
		r.mu.Unlock()
		if first {
			<-r.gate
		}
	}
	return tmux.ExecRunner{}.Run(ctx, args...)
}

// panesServer starts a tmux server of n windows, each showing "pane-<i>",
// and returns its socket and panes.
func panesServer(t *testing.T, n int) (string, []tmux.Pane) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	sock := filepath.Join(t.TempDir(), "s")
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("tmux %v: %v %s", args, err, out)
		}
	}
	run("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "80", "-y", "10", "printf 'pane-0\\n'; exec cat")
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	for i := 1; i < n; i++ {
		run("new-window", "-d", "-t", "t:", "printf 'pane-"+string(rune('0'+i))+"\\n'; exec cat")
	}
	panes, err := tmux.Server{Socket: sock, Runner: tmux.ExecRunner{}}.ListPanes(context.Background())
	if err != nil || len(panes) != n {
		t.Fatalf("panes %+v, %v", panes, err)
	}
	// Each pane's shell prints its name a moment after the pane opens:
	// the tests compare screens, so they start once every pane shows it.
	for i, p := range panes {
		deadline := time.Now().Add(10 * time.Second)
		for {
			out, _ := exec.Command("tmux", "-S", sock, "capture-pane", "-p", "-t", p.ID).Output()
			if strings.Contains(string(out), "pane-"+string(rune('0'+i))) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pane %d never showed its name: %q", i, out)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return sock, panes
}

// TestLooksWithoutAClientAreCapturedTogether: a look finding no capture
// running is captured at once; looks coming while it runs are captured
// together by one tmux process, each given its own pane's screen.
func TestLooksWithoutAClientAreCapturedTogether(t *testing.T) {
	sock, panes := panesServer(t, 4)
	r := &gatedRunner{gate: make(chan struct{})}
	d, err := New(Config{Tmux: r, ExtraSockets: []string{sock}, OnlyExtraSockets: true, NoControl: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Every pane has drawn its word.
	for _, p := range panes {
		for deadline := time.Now().Add(10 * time.Second); ; {
			snap, err := tmux.Server{Socket: sock, Runner: tmux.ExecRunner{}}.Capture(ctx, p.ID)
			if err == nil && strings.Contains(snap.ANSI, "pane-") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pane %s never drew its word", p.ID)
			}
		}
	}
	got := make([]tmux.Snapshot, len(panes))
	var wg sync.WaitGroup
	look := func(i int) {
		defer wg.Done()
		snap, err := d.lookCapture(ctx, panes[i])
		if err != nil {
			t.Errorf("capture %s: %v", panes[i].ID, err)
		}
		got[i] = snap
	}
	wg.Add(1)
	go look(0)
	// The first capture runs (held at the gate); the others queue.
	waitFor(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return len(r.captures) == 1 })
	for i := 1; i < len(panes); i++ {
		wg.Add(1)
		go look(i)
	}
	waitFor(t, func() bool {
		d.screens.mu.Lock()
		defer d.screens.mu.Unlock()
		q := d.screens.queues[sock]
		return q.next != nil && len(q.next.ids) == len(panes)-1
	})
	close(r.gate)
	wg.Wait()
	for i, s := range got {
		want := "pane-" + string(rune('0'+i))
		if !strings.Contains(s.ANSI, want) {
			t.Errorf("pane %s: screen %q, want %q", panes[i].ID, s.ANSI, want)
		}
	}
	if len(r.captures) != 2 || len(r.captures[0]) != 1 || len(r.captures[1]) != len(panes)-1 {
		t.Fatalf("captures %v: want one of the first pane, then one of the other %d", r.captures, len(panes)-1)
	}
	// The queue goes once its last batch is answered (just after).
	waitFor(t, func() bool {
		d.screens.mu.Lock()
		defer d.screens.mu.Unlock()
		return d.screens.queues[sock] == nil
	})
}

// TestControlEndsWhenNobodyWaits: a session's control client outlives its
// idle time while a monitor waits on it, and ends once none does; looks
// then capture without it.
func TestControlEndsWhenNobodyWaits(t *testing.T) {
	sock, panes := panesServer(t, 1)
	d, err := New(Config{ExtraSockets: []string{sock}, OnlyExtraSockets: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.CloseScreens()
	ctx := context.Background()
	ctl := d.control(ctx, sock, "t")
	if ctl == nil {
		t.Fatal("no control client")
	}
	key := controlKey{sock, "t"}
	idle := func() *controlEntry {
		d.screens.mu.Lock()
		defer d.screens.mu.Unlock()
		e := d.screens.clients[key]
		if e != nil {
			e.usedAt = time.Now().Add(-2 * controlIdle)
		}
		return e
	}
	_, stop := ctl.Changed(panes[0].ID)
	d.reapControl(key, idle())
	if closed(ctl.Done()) || idle() == nil {
		t.Fatal("the client ended while a monitor waited on it")
	}
	stop()
	d.reapControl(key, idle())
	<-ctl.Done()
	if idle() != nil {
		t.Fatal("an ended client is still listed")
	}
	if out, err := exec.Command("tmux", "-S", sock, "list-clients").Output(); err != nil || len(out) != 0 {
		t.Fatalf("clients after the end: %q, %v", out, err)
	}
	if snap, err := d.lookCapture(ctx, panes[0]); err != nil || !strings.Contains(snap.ANSI, "pane-0") {
		t.Fatalf("a look without the client: %q, %v", snap.ANSI, err)
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitFor waits until cond holds (each check yields), failing the test
// after ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(time.Millisecond)
	}
}
