//go:build linux

package agentpane

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/coder/quartz"

	"akk/domain"
	"akk/terminaldrivers/discovery"
)

// scriptedPane is a tmux that serves one Codex pane: its screen is a
// function of how many pastes reached it, its terminal device is a real
// pseudo-terminal, and every key it is sent is kept.
type scriptedPane struct {
	tty    string
	screen func(pastes int) string

	mu     sync.Mutex
	pastes int
	keys   [][]string
}

func (p *scriptedPane) Run(_ context.Context, args ...string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(args) > 2 && args[0] == "-S" {
		args = args[2:]
	}
	switch args[0] {
	case "set-buffer", "delete-buffer":
		return nil, nil
	case "paste-buffer":
		p.pastes++
		return nil, nil
	case "send-keys":
		p.keys = append(p.keys, args)
		return nil, nil
	case "capture-pane":
		return []byte(p.screen(p.pastes) + "\nCodex\n"), nil
	case "display-message":
		if args[len(args)-1] == "#{pane_tty}" {
			return []byte(p.tty + "\n"), nil
		}
	}
	return nil, errors.New("scripted pane: unexpected tmux " + strings.Join(args, " "))
}

func (p *scriptedPane) counts() (int, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pastes, len(p.keys)
}

// openPTY opens a pseudo-terminal whose program side is held open in raw
// mode, as an agent's TUI holds its terminal, and reads nothing: what is
// written to the master stays unread on the device tty.
func openPTY(t *testing.T) (master *os.File, tty string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	tty = "/dev/pts/" + strconv.Itoa(int(n))
	slave, err := os.OpenFile(tty, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slave.Close() })
	var tio syscall.Termios
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, slave.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&tio))); e != 0 {
		t.Fatal(e)
	}
	tio.Lflag &^= syscall.ICANON | syscall.ECHO
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, slave.Fd(), syscall.TCSETS, uintptr(unsafe.Pointer(&tio))); e != 0 {
		t.Fatal(e)
	}
	return master, tty
}

// writeUnread writes b to the master and waits until the device counts it
// unread (the kernel moves a write on its own worker).
func writeUnread(t *testing.T, master *os.File, tty string, b []byte) {
	t.Helper()
	if _, err := master.Write(b); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		n, err := unreadInput(tty)
		if err != nil || n > len(b) {
			t.Fatalf("%d unread, %v; want %d", n, err, len(b))
		}
		if n == len(b) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d unread; want %d", n, len(b))
		}
		runtime.Gosched()
	}
}

// pasteOnClock runs paste with its every wait moved on by the test's clock.
func pasteOnClock(t *testing.T, x *Adapter, clock *quartz.Mock, term domain.Terminal, text string) (domain.SubmitStage, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	trap := clock.Trap().NewTimer("agentpane")
	defer trap.Close()
	prof, err := x.turnProfile(term)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		stage domain.SubmitStage
		err   error
	}
	done := make(chan result, 1)
	go func() {
		stage, err := x.paste(ctx, prof, term, text)
		done <- result{stage, err}
	}()
	for {
		select {
		case r := <-done:
			return r.stage, r.err
		default:
		}
		waitCtx, stop := context.WithTimeout(ctx, 50*time.Millisecond)
		call, err := trap.Wait(waitCtx)
		stop()
		if err != nil {
			continue // paste is between waits or has returned
		}
		call.MustRelease(ctx)
		clock.Advance(call.Duration).MustWait(ctx)
	}
}

func codexScreen(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "screens", "codex", "0.171.0", name, "screen.ansi"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(b), "\n")
}

// A paste the agent read and shows nothing of (idle, empty composer, its
// terminal's input all read) is pasted once more, and Enter follows only
// the composer proven to hold the request. A paste still unread, or one
// the composer shows as other text, is never pasted again.
func TestPasteAgainOnlyWhenTheAgentReadAndDroppedIt(t *testing.T) {
	idle, draft := codexScreen(t, "idle"), codexScreen(t, "composer_text")
	const request = "a draft the human has not sent" // what the composer_text capture holds
	cases := []struct {
		name         string
		screen       func(pastes int) string
		unread       string
		request      string
		stage        domain.SubmitStage
		pastes, keys int
		errSays      string
	}{
		{"dropped once", func(n int) string {
			if n >= 2 {
				return draft
			}
			return idle
		}, "", request, domain.SubmitEntered, 2, 1, ""},
		{"dropped twice", func(int) string { return idle }, "", request, domain.SubmitPasted, 2, 0,
			"composer shows 0 rows; the agent has read all of it (pasted twice"},
		{"not read yet", func(int) string { return idle }, "\x1b[200~" + request + "\x1b[201~", request, domain.SubmitPasted, 1, 0,
			"bytes of it wait unread by the agent"},
		{"other text shown", func(int) string { return draft }, "", "another request", domain.SubmitPasted, 1, 0,
			"composer shows 1 rows; the agent has read all of it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			master, tty := openPTY(t)
			if c.unread != "" {
				writeUnread(t, master, tty, []byte(c.unread))
			}
			pane := &scriptedPane{tty: tty, screen: c.screen}
			d, err := discovery.New(discovery.Config{OnlyExtraSockets: true, Tmux: pane, NoControl: true})
			if err != nil {
				t.Fatal(err)
			}
			clock := quartz.NewMock(t)
			x := New(d, Config{Clock: clock})
			term := domain.Terminal{ID: "term_x", Agent: domain.Agent{Kind: domain.AgentCodex, Version: "0.171.0", Profile: "codex-0.171.0"},
				Pane: domain.PaneLocator{Socket: "/nowhere", PaneID: "%1"}}
			stage, err := pasteOnClock(t, x, clock, term, c.request)
			pastes, keys := pane.counts()
			if stage != c.stage || pastes != c.pastes || keys != c.keys {
				t.Fatalf("stage %s, %d pastes, %d keys (err %v); want %s, %d, %d", stage, pastes, keys, err, c.stage, c.pastes, c.keys)
			}
			if c.errSays == "" && err != nil || c.errSays != "" && (err == nil || !strings.Contains(err.Error(), c.errSays)) {
				t.Fatalf("err %v, want one saying %q", err, c.errSays)
			}
		})
	}
}
