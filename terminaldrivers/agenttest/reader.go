package agenttest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"akk/terminaldrivers/tmux"
)

// reader reads an Env's pane through one tmux control client (tmux -C,
// read-only, ignoring its size) instead of a tmux process per read: a
// test polls the screen every pollEvery, and a tmux process costs about
// 9 ms of CPU, which tests waiting at once on two cores felt. It is dialed
// at the first read once the session runs and again when it has ended (a
// respawn, a server restarted); while it cannot be had, reads run as
// processes.
type reader struct {
	mu       sync.Mutex
	ctl      *tmux.Control
	failedAt time.Time
	closed   bool
}

// readRetry is how long a reader that could not dial waits before the next try.
const readRetry = time.Second

// read runs args through the control client; ok is false when it was not
// run there (not a read the client takes, no client): the caller runs it
// as a process. An error of the client's is not the command's: that read
// too goes to a process.
func (r *reader) read(e *Env, args []string) (string, bool) {
	if r == nil || len(args) == 0 || (args[0] != "capture-pane" && args[0] != "display-message") {
		return "", false
	}
	ctl := r.client(e)
	if ctl == nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := ctl.Read(ctx, args...)
	if err != nil {
		return "", false
	}
	return out, true
}

func (r *reader) client(e *Env) *tmux.Control {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	if r.ctl != nil {
		select {
		case <-r.ctl.Done():
			r.ctl = nil
		default:
			return r.ctl
		}
	}
	if time.Since(r.failedAt) < readRetry {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctl, err := tmux.DialControl(ctx, "", e.socketFile(), "=akk")
	if err != nil {
		r.failedAt = time.Now()
		return nil
	}
	r.ctl = ctl
	return ctl
}

// close ends the client for good (the Env's cleanup).
func (r *reader) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	if r.ctl != nil {
		r.ctl.Close()
		r.ctl = nil
	}
}

// socketFile is where tmux -L puts the Env's server socket.
func (e *Env) socketFile() string {
	dir := ""
	for _, kv := range e.tmuxEnv {
		if v, ok := strings.CutPrefix(kv, "TMUX_TMPDIR="); ok {
			dir = v
		}
	}
	if dir == "" {
		dir = os.Getenv("TMUX_TMPDIR")
	}
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, "tmux-"+strconv.Itoa(os.Getuid()), e.SocketName)
}
