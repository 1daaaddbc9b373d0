package codexappserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Projects keeps a backend conversation, with no terminal, for each project
// folder the operator named: the managed app-server daemon of one Codex
// home runs (started with the operator's own codex, `codex app-server
// daemon start`, when it does not answer), and each project has one loaded
// thread AKK started there. After a daemon restart the project's newest
// recorded thread of AKK's is loaded again rather than a new one started,
// so its conversation goes on. Its connection to the daemon stays open
// between checks: the daemon unloads a thread nobody listens to after a
// while, and a thread with no turn yet cannot be loaded again (it is not
// recorded), so closing it would swap a new project's conversation for
// another every minute or so. It never starts a TUI, never starts more
// than one thread per project per daemon, and starts nothing for projects
// the operator did not name.
type Projects struct {
	Home    string   // the Codex home whose daemon holds the threads
	Codex   string   // the codex executable that starts the daemon
	Dirs    []string // absolute project folders
	Version string   // AKK's, named to the daemon
	// Env is the environment `codex app-server daemon start` runs with
	// (the daemon inherits it); CODEX_HOME is set to Home.
	Env []string
	Log *slog.Logger
	// Interval is the time between two checks; 0: 5 s. A failed check
	// waits twice as long each time, up to a minute.
	Interval time.Duration
	// Timeout bounds one check, the daemon's start included; 0: 60 s.
	Timeout time.Duration

	mu sync.Mutex
	// others are loaded threads that are not AKK's, or ephemeral: a
	// thread's originator and ephemerality never change, so a check reads
	// each of them once.
	others map[string]bool
	// conn is the connection the checks share (it listens to the threads
	// they start or load); nil until the first, or after it ended.
	conn *Client
	// listening are the threads of AKK's conn listens to.
	listening map[string]bool
}

// other reports whether id is known not to be a thread of AKK's.
func (p *Projects) other(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.others[id]
}

func (p *Projects) markOther(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.others == nil || len(p.others) > 10000 {
		p.others = map[string]bool{}
	}
	p.others[id] = true
}

// ErrDaemonDown is a daemon that does not answer even after its start.
var ErrDaemonDown = errors.New("the Codex app-server daemon does not answer")

// Run checks until ctx ends.
func (p *Projects) Run(ctx context.Context) {
	interval := p.Interval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	wait := interval
	defer p.Close()
	for {
		if err := p.Ensure(ctx); err != nil && ctx.Err() == nil {
			p.log().Warn("codex projects: check failed", "home", p.Home, "err", err, "next_in", wait)
			wait = min(2*wait, time.Minute)
		} else {
			wait = interval
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (p *Projects) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.Default()
}

// Ensure is one check: the daemon answers, and every project has a loaded
// thread of AKK's.
func (p *Projects) Ensure(ctx context.Context) error {
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := p.connect(ctx)
	if err != nil {
		return err
	}
	ids, err := c.LoadedThreads(ctx)
	if err != nil {
		p.drop(c)
		return err
	}
	loaded := map[string]bool{} // project folders with a loaded thread of AKK's
	for _, id := range ids {
		if p.other(id) {
			continue
		}
		th, err := c.ReadThread(ctx, id, false)
		var rpc *RPCError
		switch {
		case errors.As(err, &rpc):
			continue // unloaded meanwhile
		case err != nil:
			// Unknown whether the thread is there (a busy daemon): start
			// nothing on it, the next check sees.
			return fmt.Errorf("read thread %s: %w", id, err)
		}
		if th.Ephemeral || th.Originator != ClientName {
			p.markOther(id)
			continue
		}
		if !p.listensTo(c, id) && slices.ContainsFunc(p.Dirs, func(d string) bool { return slices.Contains(sameFolder(d), th.Cwd) }) {
			// A thread of AKK's loaded before this connection (akkd
			// restarted): listened to again, or the daemon unloads it once
			// the last connection that listened is gone.
			if _, err := c.Follow(ctx, id); err != nil {
				var rpc *RPCError
				if errors.As(err, &rpc) {
					continue // unloaded meanwhile: loaded again below
				}
				return fmt.Errorf("listen to thread %s: %w", id, err)
			}
			p.listen(c, id)
		}
		loaded[th.Cwd] = true
	}
	var errs []error
	for _, dir := range p.Dirs {
		names := sameFolder(dir)
		if slices.ContainsFunc(names, func(n string) bool { return loaded[n] }) {
			continue
		}
		th, how, err := p.load(ctx, c, names)
		if err != nil {
			errs = append(errs, fmt.Errorf("project %s: %w", dir, err))
			continue
		}
		p.listen(c, th.ID)
		p.log().Info("codex projects: thread loaded", "project", dir, "thread", th.ID, "how", how)
	}
	return errors.Join(errs...)
}

// connect returns the checks' connection, connecting (and starting the
// daemon when it does not answer) when there is none or it ended.
func (p *Projects) connect(ctx context.Context) (*Client, error) {
	p.mu.Lock()
	c := p.conn
	p.mu.Unlock()
	if c != nil {
		select {
		case <-c.Done():
			p.drop(c)
		default:
			return c, nil
		}
	}
	c, err := Dial(ctx, SocketPath(p.Home), p.Version)
	if err != nil {
		if err := p.startDaemon(ctx); err != nil {
			return nil, err
		}
		if c, err = Dial(ctx, SocketPath(p.Home), p.Version); err != nil {
			return nil, fmt.Errorf("%w after its start: %v", ErrDaemonDown, err)
		}
	}
	p.mu.Lock()
	p.conn, p.listening = c, map[string]bool{}
	p.mu.Unlock()
	return c, nil
}

// listensTo reports whether c, the checks' connection, listens to thread id.
func (p *Projects) listensTo(c *Client, id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conn == c && p.listening[id]
}

// listen records that c listens to thread id.
func (p *Projects) listen(c *Client, id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conn == c {
		p.listening[id] = true
	}
}

// drop closes c, the checks' connection, when a call on it failed: the
// next check connects again.
func (p *Projects) drop(c *Client) {
	p.mu.Lock()
	if p.conn == c {
		p.conn = nil
	}
	p.mu.Unlock()
	c.Close()
}

// Close closes the checks' connection (Run does when it returns).
func (p *Projects) Close() {
	p.mu.Lock()
	c := p.conn
	p.conn = nil
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// sameFolder are the names the daemon may give dir: as named, and with its
// symbolic links resolved.
func sameFolder(dir string) []string {
	out := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		out = append(out, real)
	}
	return out
}

// recentThreads bounds how many recorded threads a check looks through for
// a project's earlier thread.
const recentThreads = 200

// load loads the project's newest recorded thread of AKK's again, or starts
// one when it has none (a thread with no turn yet is not recorded).
func (p *Projects) load(ctx context.Context, c *Client, names []string) (Thread, string, error) {
	var earlier string
	err := c.RecordedThreads(ctx, recentThreads, func(th Thread) bool {
		if th.Originator == ClientName && !th.Ephemeral && slices.Contains(names, th.Cwd) {
			earlier = th.ID
			return false
		}
		return true
	})
	if err != nil {
		return Thread{}, "", err
	}
	if earlier != "" {
		th, err := c.ResumeThread(ctx, earlier)
		var rpc *RPCError
		if err == nil {
			return th, "resumed", nil
		}
		if !errors.As(err, &rpc) {
			return Thread{}, "", err // unknown whether it loaded: the next check sees
		}
		// The daemon cannot load it (its record is gone): a new one.
	}
	th, err := c.StartThread(ctx, names[0])
	if err != nil {
		return Thread{}, "", err
	}
	return th, "started", nil
}

// startDaemon runs `codex app-server daemon start` for the home: it starts
// the daemon unless one runs, and returns once it answers or failed.
func (p *Projects) startDaemon(ctx context.Context) error {
	if p.Codex == "" {
		return fmt.Errorf("%w and no codex executable is configured to start it", ErrDaemonDown)
	}
	cmd := exec.CommandContext(ctx, p.Codex, "app-server", "daemon", "start")
	cmd.Env = append(slices.Clone(p.Env), "CODEX_HOME="+p.Home)
	cmd.Dir = p.Home
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("codex app-server daemon start: %v: %s", err, lastLine(out))
	}
	p.log().Info("codex projects: daemon started", "home", p.Home)
	return nil
}

func lastLine(b []byte) string {
	s := string(b)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			return s[i+1:]
		}
	}
	return s
}
