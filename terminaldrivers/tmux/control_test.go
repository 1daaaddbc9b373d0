package tmux

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// onePane starts a real tmux server of one pane (running cat) and returns
// it with the pane and the pane's terminal opened for writing, closed with
// the test.
func onePane(t *testing.T) (context.Context, Server, Pane, *os.File) {
	t.Helper()
	ctx, sock, r := realTmux(t, 20)
	s := Server{Socket: sock, Runner: r}
	panes, err := s.ListPanes(ctx)
	if err != nil || len(panes) != 1 {
		t.Fatalf("ListPanes = %+v, %v", panes, err)
	}
	tty, err := os.OpenFile(panes[0].TTY, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return ctx, s, panes[0], tty
}

// TestControlAgainstRealTmux: a control client captures and lists as a
// tmux process does, reports large writes to a pane and not a ticking
// indicator's small ones, cannot type, survives screen lines that look like
// the protocol's, and ends with its session.
func TestControlAgainstRealTmux(t *testing.T) {
	ctx, s, p, tty := onePane(t)
	c, err := DialControl(ctx, "", s.Socket, "=t")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The pane keeps its size: the client ignores its own.
	if got, err := c.ListPanes(ctx); err != nil || !reflect.DeepEqual(got, []Pane{p}) {
		t.Fatalf("control ListPanes = %+v, %v; want %+v", got, err, p)
	}
	waitScreen := func(want string) Snapshot {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			snap, err := c.Capture(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(snap.ANSI, want) {
				return snap
			}
			if time.Now().After(deadline) {
				t.Fatalf("screen never showed %q:\n%s", want, snap.ANSI)
			}
		}
	}

	changed, stop := c.Changed(p.ID)
	defer stop()
	tty.WriteString("\r\ntick 1")
	// The capture is answered after tmux forwarded the write: had the small
	// write been reported, the channel would be closed by now.
	waitScreen("tick 1")
	if closed(changed) {
		t.Fatal("a small write was reported")
	}
	big := "\r\n%end 1 2 1\r\n%error 3 4 1\r\n" + strings.Repeat("a prompt box line ", 20) + "\r\nbig done"
	tty.WriteString(big)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("a large write was not reported")
	}
	snap := waitScreen("big done")
	exec, err := s.Capture(ctx, p.ID)
	if err != nil || exec != snap {
		t.Fatalf("control capture differs from a tmux process's:\n%q\n%q (%v)", snap, exec, err)
	}
	if !strings.Contains(snap.ANSI, "%end 1 2 1") || strings.Count(snap.ANSI, "\n") != 20 {
		t.Fatalf("screen lines that look like the protocol cut the capture:\n%s", snap.ANSI)
	}

	// Read answers as a tmux process prints, arguments quoted (a format's
	// '#' is not a comment); a write command or an unquotable argument is
	// refused.
	for _, args := range [][]string{{"capture-pane", "-p", "-t", p.ID}, {"display-message", "-p", "-t", p.ID, "#{pane_pid} #{pane_width}"}} {
		got, err := c.Read(ctx, args...)
		want, werr := s.Runner.Run(ctx, append([]string{"-S", s.Socket}, args...)...)
		if err != nil || werr != nil || got != string(want) {
			t.Fatalf("Read %q = %q, %v; a tmux process printed %q, %v", args, got, err, want, werr)
		}
	}
	for _, args := range [][]string{{"send-keys", "-t", p.ID, "x"}, {"display-message", "-p", "it's"}, {"capture-pane", "-t", p.ID + " ; send-keys x"}} {
		if out, err := c.Read(ctx, args...); err == nil {
			t.Fatalf("Read %q was run: %q", args, out)
		}
	}

	// Only reads are sent: keys are refused before tmux sees them.
	for _, line := range []string{"send-keys -t " + p.ID + " x", "capture-pane -p ; send-keys x", "paste-buffer"} {
		if _, err := c.run(ctx, 1, line); err == nil {
			t.Fatalf("the control client sent %q", line)
		}
	}

	// The session ends: so does the client, waking every waiter.
	again, stop2 := c.Changed(p.ID)
	defer stop2()
	if _, err := s.Runner.Run(ctx, "-S", s.Socket, "kill-session", "-t", "t"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the client outlived its session")
	}
	if !closed(again) {
		t.Fatal("a waiter was left asleep")
	}
	if _, err := c.Capture(ctx, p.ID); err == nil {
		t.Fatal("an ended client answered")
	}
}

// TestControlSeesWritesRightAfterDial: a client is attached when
// DialControl returns, so a write made at once is reported. (tmux answers
// a control client's commands before it attaches it, and forwards no
// pane's writes until then: a client taken as ready on its first answer
// missed such writes now and then.)
func TestControlSeesWritesRightAfterDial(t *testing.T) {
	ctx, s, p, tty := onePane(t)
	for i := range 25 {
		c, err := DialControl(ctx, "", s.Socket, "=t")
		if err != nil {
			t.Fatal(err)
		}
		changed, stop := c.Changed(p.ID)
		tty.WriteString("\r\n" + strings.Repeat("x", BigWrite+10))
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("dial %d: a write right after the dial was not reported", i)
		}
		stop()
		c.Close()
	}
}

// TestControlPausesAPaneNobodyWaitsOn: a pane nobody waits on is paused at
// its next write; tmux goes on reading a paused pane (a flood written to it
// ends, and the screen shows it); Changed continues it before it returns,
// so the next large write is reported; released long enough, it is paused
// again.
func TestControlPausesAPaneNobodyWaitsOn(t *testing.T) {
	ctx, s, p, tty := onePane(t)
	c, err := DialControl(ctx, "", s.Socket, "=t")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitPaused := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for i := 0; c.Paused(p.ID) != want; i++ {
			if time.Now().After(deadline) {
				t.Fatalf("paused = %v, want %v", !want, want)
			}
			tty.WriteString(fmt.Sprintf("\r\nwrite %d", i))
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitPaused(true)

	// A flood into the paused pane, with no other client: it must end.
	wrote := make(chan error, 1)
	go func() {
		_, err := tty.WriteString(strings.Repeat(strings.Repeat("flood ", 13)+"\r\n", 40000) + "flood done")
		wrote <- err
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the paused pane stopped being read: 3 MB not written in 30 s")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		snap, err := c.Capture(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(snap.ANSI, "flood done") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed the flood's end:\n%s", snap.ANSI)
		}
	}

	changed, stop := c.Changed(p.ID)
	if c.Paused(p.ID) {
		t.Fatal("Changed returned with the pane paused")
	}
	tty.WriteString("\r\n" + strings.Repeat("x", BigWrite+10))
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("a large write after Changed was not reported")
	}
	stop()
	c.mu.Lock()
	c.pauseAfter = 0
	c.mu.Unlock()
	waitPaused(true)
}
