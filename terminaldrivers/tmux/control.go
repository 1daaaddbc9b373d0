package tmux

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// Control is one tmux control-mode client (tmux -C) attached to one session
// of a server, read-only and ignoring its size (the session's windows keep
// the size its people give them; the client can type nothing). Through it
// AKK learns of every write to the session's panes (%output) without
// capturing them, and runs commands (capture-pane, display-message)
// without starting a tmux process per command; panes nobody waits on are
// paused (see PauseAfter). It is safe for concurrent use. It sends only
// commands that read (readCommands) and its own flow control: tmux would take
// others even from a read-only control client. When the client ends (the session closed, the server stopped,
// Close), every waiter is woken and every command fails with ErrControlEnded.
type Control struct {
	socket, session string

	cmd   *exec.Cmd
	stdin io.WriteCloser

	writeMu sync.Mutex   // one command line at a time, in FIFO order
	queue   chan *waiter // commands written and not yet answered, in order

	mu      sync.Mutex
	waiting map[string][]chan struct{} // per pane: closed at its next write
	ended   bool

	// Flow control. tmux forwards every write of every pane of the session
	// to this client; a pane nobody has waited on for PauseAfter is paused
	// at its next write (tmux goes on reading it and drawing its screen,
	// and stops forwarding it: an "off" pane could stop being read when
	// this client is its session's only one), and continued before Changed
	// returns. flowMu puts the pause and continue commands in one order;
	// the maps are under mu.
	flowMu     sync.Mutex
	paused     map[string]bool
	pausing    map[string]bool
	lastWaited map[string]time.Time
	noPause    bool // tmux refused a pause (older than 3.2): forward all
	pauseAfter time.Duration

	attached chan struct{} // closed when tmux says the client is attached
	done     chan struct{} // closed when the client has ended
	err      error         // why, once done is closed
}

type waiter struct {
	blocks int
	got    [][]string
	errMsg string
	reply  chan struct{} // closed when every block arrived
}

// ErrControlEnded: the control client has ended.
var ErrControlEnded = errors.New("tmux control client ended")

// commandTimeout bounds one command: a server that does not answer in this
// time is treated as gone, and the client ends.
const commandTimeout = 5 * time.Second

// DialControl starts a control client of the session (a session id, "$3")
// on the server at socket, with the tmux binary at path ("tmux" when
// empty). It returns once the client is attached (tmux said so with
// %session-changed: it answers commands before that, and forwards no
// pane's writes until then, so a waiter armed earlier would miss them).
func DialControl(ctx context.Context, path, socket, session string) (*Control, error) {
	if path == "" {
		path = "tmux"
	}
	cmd := exec.Command(path, "-u", "-S", socket, "-C", "attach-session", "-f", "ignore-size,read-only", "-t", session)
	cmd.Env = withoutTMUX(os.Environ())
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoTmux, err)
	}
	c := &Control{socket: socket, session: session, cmd: cmd, stdin: stdin,
		queue: make(chan *waiter, 256), waiting: map[string][]chan struct{}{},
		paused: map[string]bool{}, pausing: map[string]bool{}, lastWaited: map[string]time.Time{}, pauseAfter: PauseAfter,
		attached: make(chan struct{}), done: make(chan struct{})}
	go c.read(stdout)
	if _, err := c.run(ctx, 1, "display-message -p ok"); err != nil {
		c.Close()
		return nil, fmt.Errorf("control client of %s session %s: %w", socket, session, err)
	}
	timer := time.NewTimer(commandTimeout)
	defer timer.Stop()
	select {
	case <-c.attached:
		return c, nil
	case <-c.done:
		err = c.err
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = errors.New("tmux never attached the client")
	}
	c.Close()
	return nil, fmt.Errorf("control client of %s session %s: %w", socket, session, err)
}

// Done is closed when the client has ended.
func (c *Control) Done() <-chan struct{} { return c.done }

// Close ends the client: tmux detaches it when its input closes.
func (c *Control) Close() {
	c.stdin.Close()
	<-c.done
}

// BigWrite is the least size of a write (as tmux forwards it, escaped)
// that Changed reports. An agent's working indicator ticks with small
// writes (a spinner glyph, a timer: 60 to 160 bytes measured on the pinned
// versions, several a second), a prompt, a questionnaire step or an answer
// is drawn with large ones (400 bytes and more); so a monitor is woken by
// what changes the screen's meaning and looks at a merely ticking screen on
// its slow clock only.
const BigWrite = 256

// PauseAfter is how long a pane nobody waits on is still forwarded before
// it is paused: a monitor that looks and waits again re-arms in far less.
const PauseAfter = time.Second

// Changed returns a channel closed at the next write of BigWrite or more to
// the pane (and at any change of the session's windows, or the client's
// end): arm it before looking at the pane, so no write after the look is
// missed. stop releases it. A paused pane is continued before it returns.
func (c *Control) Changed(paneID string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		close(ch)
		return ch, func() {}
	}
	c.waiting[paneID] = append(c.waiting[paneID], ch)
	c.lastWaited[paneID] = time.Now()
	resume := c.paused[paneID] || c.pausing[paneID]
	c.mu.Unlock()
	if resume {
		c.resume(paneID)
	}
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		list := c.waiting[paneID]
		for i, w := range list {
			if w == ch {
				c.waiting[paneID] = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(c.waiting[paneID]) == 0 {
			delete(c.waiting, paneID)
			c.lastWaited[paneID] = time.Now()
		}
	}
}

// Waited reports whether anyone waits on a pane's next write (Changed).
func (c *Control) Waited() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiting) > 0
}

// Paused reports whether tmux has been told to stop forwarding the pane.
func (c *Control) Paused(paneID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused[paneID]
}

// resume continues a paused pane and returns once tmux has answered: every
// write after that is forwarded.
func (c *Control) resume(paneID string) {
	c.flowMu.Lock()
	defer c.flowMu.Unlock()
	c.mu.Lock()
	was := c.paused[paneID]
	delete(c.paused, paneID)
	c.mu.Unlock()
	if was {
		// An error is the client's end, which wakes every waiter.
		c.run(context.Background(), 1, "refresh-client -A '"+paneID+":continue'")
	}
}

// pause stops tmux forwarding a pane, unless someone waits on it by then.
func (c *Control) pause(paneID string) {
	c.flowMu.Lock()
	defer c.flowMu.Unlock()
	c.mu.Lock()
	ok := len(c.waiting[paneID]) == 0 && !c.ended && !c.paused[paneID]
	if ok {
		c.paused[paneID] = true
	}
	c.mu.Unlock()
	var err error
	if ok {
		_, err = c.run(context.Background(), 1, "refresh-client -A '"+paneID+":pause'")
	}
	c.mu.Lock()
	delete(c.pausing, paneID)
	if err != nil {
		delete(c.paused, paneID)
		c.noPause = !c.ended
	}
	c.mu.Unlock()
}

// output notes a write to a pane: a big one wakes its waiters; one to a
// pane nobody has waited on for PauseAfter pauses it.
func (c *Control) output(paneID string, big bool) {
	if !validPaneID(paneID) {
		return
	}
	c.mu.Lock()
	list := c.waiting[paneID]
	if big && len(list) > 0 {
		delete(c.waiting, paneID)
		c.lastWaited[paneID] = time.Now()
		c.mu.Unlock()
		for _, ch := range list {
			close(ch)
		}
		return
	}
	start := len(list) == 0 && !c.ended && !c.noPause && !c.paused[paneID] && !c.pausing[paneID] &&
		time.Since(c.lastWaited[paneID]) >= c.pauseAfter
	if start {
		c.pausing[paneID] = true
	}
	c.mu.Unlock()
	if start {
		go c.pause(paneID)
	}
}

// validPaneID: a pane id as tmux writes it (%12), safe in a command.
func validPaneID(id string) bool {
	if len(id) < 2 || id[0] != '%' {
		return false
	}
	for _, r := range id[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// readCommands are the only commands a control client sends: tmux does not
// refuse a read-only control client's commands, so it is this list that
// keeps the client from typing.
// (And "refresh-client -A", which only pauses or continues this client's
// own output of a pane.)
var readCommands = []string{"capture-pane", "display-message", "list-panes"}

// run sends one command line of readCommands and returns the output of each
// of its commands (blocks of them: "a ; b" answers two).
func (c *Control) run(ctx context.Context, blocks int, line string) ([][]string, error) {
	if strings.ContainsAny(line, "\n\r") {
		return nil, errors.New("control command: one line only")
	}
	for _, cmd := range strings.Split(line, " ; ") {
		if !slices.Contains(readCommands, strings.Fields(cmd + " x")[0]) && !strings.HasPrefix(cmd, "refresh-client -A '%") {
			return nil, fmt.Errorf("control command %q: not a read", cmd)
		}
	}
	w := &waiter{blocks: blocks, reply: make(chan struct{})}
	c.writeMu.Lock()
	select {
	case <-c.done:
		c.writeMu.Unlock()
		return nil, c.endErr()
	default:
	}
	c.queue <- w
	_, err := io.WriteString(c.stdin, line+"\n")
	c.writeMu.Unlock()
	if err != nil {
		c.stdin.Close()
		return nil, fmt.Errorf("%w: %v", ErrControlEnded, err)
	}
	timer := time.NewTimer(commandTimeout)
	defer timer.Stop()
	select {
	case <-w.reply:
		if w.errMsg != "" {
			return w.got, errors.New(w.errMsg)
		}
		return w.got, nil
	case <-c.done:
		return nil, c.endErr()
	case <-timer.C:
		c.stdin.Close() // a server that stops answering is gone
		return nil, fmt.Errorf("%w: no answer in %s", ErrControlEnded, commandTimeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Control) endErr() error {
	<-c.done
	return c.err
}

// Capture takes a Snapshot of a pane of the session, as Server.Capture.
func (c *Control) Capture(ctx context.Context, paneID string) (Snapshot, error) {
	if !strings.HasPrefix(paneID, "%") || strings.ContainsAny(paneID, " ;'\"\\") {
		return Snapshot{}, fmt.Errorf("capture: bad pane id %q", paneID)
	}
	out, err := c.run(ctx, 2, "capture-pane -p -e -t "+paneID+" ; display-message -p -t "+paneID+" '#{pane_title}'")
	if err != nil {
		return Snapshot{}, fmt.Errorf("capture pane %s: %w", paneID, err)
	}
	if len(out) != 2 || len(out[1]) != 1 {
		return Snapshot{}, fmt.Errorf("capture pane %s: unexpected answer", paneID)
	}
	var b strings.Builder
	for _, l := range out[0] {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return Snapshot{ANSI: b.String(), Title: out[1][0]}, nil
}

// read parses the client's output: answers to commands (%begin ... %end or
// %error, flag 1 for this client's own), writes to panes (%output), and
// notifications.
func (c *Control) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var cur *waiter
	var block []string
	inBlock, own, attachedSeen := false, false, false
	var guard string // "<time> <number> <flags>" of the %begin: its %end repeats it
	for sc.Scan() {
		line := sc.Text()
		if inBlock {
			// A line of output that only looks like the end (a captured
			// screen may hold anything) does not repeat the guard.
			if line == "%end "+guard || line == "%error "+guard {
				inBlock = false
				if !own {
					continue
				}
				if cur == nil {
					select {
					case cur = <-c.queue:
					default:
						continue // an answer nobody asked for
					}
				}
				cur.got = append(cur.got, block)
				if strings.HasPrefix(line, "%error ") && cur.errMsg == "" {
					cur.errMsg = "tmux: " + strings.Join(block, " ")
				}
				if len(cur.got) == cur.blocks {
					close(cur.reply)
					cur = nil
				}
				continue
			}
			block = append(block, line)
			continue
		}
		switch {
		case strings.HasPrefix(line, "%begin "):
			inBlock, block = true, nil
			guard = line[len("%begin "):]
			f := strings.Fields(guard)
			own = len(f) == 3 && f[2] == "1"
		case strings.HasPrefix(line, "%output "):
			rest := line[len("%output "):]
			if i := strings.IndexByte(rest, ' '); i > 0 {
				c.output(rest[:i], len(rest)-i-1 >= BigWrite)
			}
		case strings.HasPrefix(line, "%session-changed "):
			if !attachedSeen {
				attachedSeen = true
				close(c.attached)
			}
		case strings.HasPrefix(line, "%exit"):
			c.end(fmt.Errorf("%w: %s", ErrControlEnded, strings.TrimSpace(strings.TrimPrefix(line, "%exit"))))
		case strings.HasPrefix(line, "%layout-change"), strings.HasPrefix(line, "%window-"),
			strings.HasPrefix(line, "%unlinked-window-"), strings.HasPrefix(line, "%pane-mode-changed"),
			strings.HasPrefix(line, "%session-window-changed"):
			c.wakeAll()
		}
	}
	c.end(ErrControlEnded)
	c.cmd.Wait()
	close(c.done)
}

func (c *Control) wakeAll() {
	c.mu.Lock()
	all := c.waiting
	c.waiting = map[string][]chan struct{}{}
	c.mu.Unlock()
	for _, list := range all {
		for _, ch := range list {
			close(ch)
		}
	}
}

// end marks the client ended (once) and wakes every waiter.
func (c *Control) end(err error) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended, c.err = true, err
	c.mu.Unlock()
	c.stdin.Close()
	c.wakeAll()
}

// ListPanes lists every pane of the server, as Server.ListPanes.
func (c *Control) ListPanes(ctx context.Context) ([]Pane, error) {
	out, err := c.run(ctx, 1, "list-panes -a -F '"+paneFormat+"'")
	if err != nil {
		return nil, fmt.Errorf("list panes of %s: %w", c.socket, err)
	}
	return ParsePanes(c.socket, []byte(strings.Join(out[0], "\n")+"\n"))
}

// Read runs one read command (one of readCommands) with its arguments and
// returns its output as a tmux process would print it: a line each, each
// ending in a newline. An argument tmux would have to unquote (a single
// quote, a line break) is refused: run such a command as a process.
func (c *Control) Read(ctx context.Context, args ...string) (string, error) {
	if len(args) == 0 || !slices.Contains(readCommands, args[0]) {
		return "", fmt.Errorf("control read %q: not a read", args)
	}
	quoted := []string{args[0]}
	for _, a := range args[1:] {
		if strings.ContainsAny(a, "'\n\r") {
			return "", fmt.Errorf("control read: argument %q cannot be quoted", a)
		}
		quoted = append(quoted, "'"+a+"'")
	}
	out, err := c.run(ctx, 1, strings.Join(quoted, " "))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, l := range out[0] {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String(), nil
}
