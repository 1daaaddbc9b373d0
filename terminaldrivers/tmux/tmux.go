// Package tmux talks to tmux servers: it finds the current user's server
// sockets, lists panes, captures them, and pastes or types into them. Every
// tmux call goes through a Runner, one tmux process per call.
package tmux

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Runner runs one tmux command line (the arguments after "tmux") and returns
// its standard output. Tests replace it with recorded output.
type Runner interface {
	Run(ctx context.Context, args ...string) ([]byte, error)
}

// ExecRunner runs the tmux binary.
type ExecRunner struct {
	Path string // "tmux" when empty
}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, args ...string) ([]byte, error) {
	path := r.Path
	if path == "" {
		path = "tmux"
	}
	// -u on every tmux client AKK runs: without a UTF-8 locale (a service
	// manager's or `env -i`'s empty environment) tmux takes the client for
	// a terminal that cannot show UTF-8 and replaces what it prints: the
	// 0x1f separator of pane lists becomes "_", and every non-ASCII
	// character of a captured screen too.
	cmd := exec.CommandContext(ctx, path, append([]string{"-u"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	// tmux refuses nothing based on $TMUX when -S is given, but drop it so a
	// daemon started inside a pane does not default to that pane's server.
	cmd.Env = withoutTMUX(os.Environ())
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) && ctx.Err() == nil {
		// tmux did not start at all.
		return nil, fmt.Errorf("%w: %v", ErrNoTmux, err)
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return out, err
		}
		return out, fmt.Errorf("%w: %s", err, msg)
	}
	return out, nil
}

func withoutTMUX(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "TMUX=") && !strings.HasPrefix(kv, "TMUX_PANE=") {
			out = append(out, kv)
		}
	}
	return out
}

// ErrNoTmux means the tmux binary could not be run at all.
var ErrNoTmux = errors.New("tmux not found")

// Version returns the tmux version, e.g. "3.3a".
func Version(ctx context.Context, r Runner) (string, error) {
	out, err := r.Run(ctx, "-V")
	if err != nil {
		return "", fmt.Errorf("tmux -V: %w", err)
	}
	v := strings.TrimSpace(string(out))
	v = strings.TrimPrefix(v, "tmux ")
	if v == "" {
		return "", errors.New("tmux -V printed nothing")
	}
	return v, nil
}

// SocketDir is where tmux puts the current user's server sockets:
// $TMUX_TMPDIR/tmux-<uid>, or /tmp/tmux-<uid>.
func SocketDir(getenv func(string) string, uid int) string {
	base := getenv("TMUX_TMPDIR")
	if base == "" {
		base = "/tmp"
	}
	return filepath.Join(base, "tmux-"+strconv.Itoa(uid))
}

// Sockets lists the sockets in dir that belong to uid, sorted. A missing
// dir means no server has run: no sockets, no error.
func Sockets(dir string, uid int) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list tmux sockets in %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		if e.Type()&os.ModeSocket == 0 {
			continue
		}
		info, err := e.Info()
		if err != nil || !ownedBy(info, uid) {
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	sort.Strings(out)
	return out, nil
}

// Pane is one tmux pane as list-panes reports it.
type Pane struct {
	Socket         string
	ID             string // "%3"
	PID            int    // the pane's first process
	TTY            string // "/dev/pts/4"
	CurrentPath    string
	CurrentCommand string
	Width, Height  int
	SessionName    string
	WindowName     string
	WindowIndex    int
	PaneIndex      int
	Dead           bool
	Title          string
}

// sep separates fields in list-panes output; tmux passes it through and no
// name or path a person types contains it.
const sep = "\x1f"

// paneFormat lists the fields of Pane in order; the title comes last so any
// separator in it stays in the title.
var paneFormat = strings.Join([]string{
	"#{pane_id}", "#{pane_pid}", "#{pane_tty}", "#{pane_current_path}", "#{pane_current_command}",
	"#{pane_width}", "#{pane_height}", "#{session_name}", "#{window_name}", "#{window_index}",
	"#{pane_index}", "#{pane_dead}", "#{pane_title}",
}, sep)

const paneFields = 13

// Server is one tmux server, reached through its socket.
type Server struct {
	Socket string
	Runner Runner
}

func (s Server) run(ctx context.Context, args ...string) ([]byte, error) {
	return s.Runner.Run(ctx, append([]string{"-S", s.Socket}, args...)...)
}

// ListPanes lists every pane of the server once, in session, window and
// pane order. A pane shared by grouped sessions is listed once.
func (s Server) ListPanes(ctx context.Context) ([]Pane, error) {
	out, err := s.run(ctx, "list-panes", "-a", "-F", paneFormat)
	if err != nil {
		return nil, fmt.Errorf("list panes of %s: %w", s.Socket, err)
	}
	return ParsePanes(s.Socket, out)
}

// ParsePanes parses list-panes output printed with paneFormat.
func ParsePanes(socket string, out []byte) ([]Pane, error) {
	var panes []Pane
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, sep, paneFields)
		if len(f) != paneFields {
			if len(f) == 1 && strings.Count(line, "_") >= paneFields-1 {
				return nil, fmt.Errorf("list-panes line %q: tmux replaced the field separator with \"_\", as it does for a client without a UTF-8 locale; start akkd with LANG=C.UTF-8 (or another UTF-8 locale)", line)
			}
			return nil, fmt.Errorf("list-panes line %q: %d fields, want %d", line, len(f), paneFields)
		}
		p := Pane{
			Socket: socket, ID: f[0], TTY: f[2], CurrentPath: f[3], CurrentCommand: f[4],
			SessionName: f[7], WindowName: f[8], Dead: f[11] == "1", Title: f[12],
		}
		var errs []error
		p.PID, errs = atoi(f[1], errs)
		p.Width, errs = atoi(f[5], errs)
		p.Height, errs = atoi(f[6], errs)
		p.WindowIndex, errs = atoi(f[9], errs)
		p.PaneIndex, errs = atoi(f[10], errs)
		if err := errors.Join(errs...); err != nil || !strings.HasPrefix(p.ID, "%") {
			return nil, fmt.Errorf("list-panes line %q: %v", line, err)
		}
		if seen[p.ID] {
			continue
		}
		seen[p.ID] = true
		panes = append(panes, p)
	}
	return panes, nil
}

func atoi(s string, errs []error) (int, []error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		errs = append(errs, err)
	}
	return n, errs
}

// Snapshot is one look at a pane: its visible screen with SGR escapes
// (screen.Strip gives the plain text) and the title the program in it set.
type Snapshot struct {
	ANSI  string
	Title string
}

// Capture takes a Snapshot of a pane with one tmux process: capture-pane -p
// -e, then the pane's title in the same command sequence.
func (s Server) Capture(ctx context.Context, paneID string) (Snapshot, error) {
	out, err := s.run(ctx, "capture-pane", "-p", "-e", "-t", paneID, ";", "display-message", "-p", "-t", paneID, "#{pane_title}")
	if err != nil {
		return Snapshot{}, fmt.Errorf("capture pane %s: %w", paneID, err)
	}
	text := strings.TrimSuffix(string(out), "\n")
	i := strings.LastIndexByte(text, '\n')
	if i < 0 {
		return Snapshot{}, fmt.Errorf("capture pane %s: no screen before the title", paneID)
	}
	return Snapshot{ANSI: text[:i+1], Title: text[i+1:]}, nil
}

// CaptureAll takes a Snapshot of each pane with one tmux process, as
// Capture would one by one: per pane capture-pane -p -e, its title, then a
// line of a fence drawn at random for this call, which no screen holds,
// with the pane's place in paneIDs (not its id: display-message expands
// its text with strftime, which mangles "%3"). A
// pane that closed meanwhile, or any the answer leaves out, is missing from
// the result (the caller captures it alone).
func (s Server) CaptureAll(ctx context.Context, paneIDs []string) map[string]Snapshot {
	got := map[string]Snapshot{}
	if len(paneIDs) == 0 {
		return got
	}
	var nonce [8]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return got
	}
	fence := "akk-fence-" + hex.EncodeToString(nonce[:])
	var args []string
	for i, id := range paneIDs {
		if i > 0 {
			args = append(args, ";")
		}
		args = append(args, "capture-pane", "-p", "-e", "-t", id, ";",
			"display-message", "-p", "-t", id, "#{pane_title}", ";", "display-message", "-p", fence+":"+strconv.Itoa(i))
	}
	out, _ := s.run(ctx, args...) // what came before an error still counts
	var lines []string
	for _, l := range strings.SplitAfter(string(out), "\n") {
		n, isFence := strings.CutPrefix(strings.TrimSuffix(l, "\n"), fence+":")
		if !isFence {
			lines = append(lines, l)
			continue
		}
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < len(paneIDs) && len(lines) >= 1 {
			title := strings.TrimSuffix(lines[len(lines)-1], "\n")
			got[paneIDs[i]] = Snapshot{ANSI: strings.Join(lines[:len(lines)-1], ""), Title: title}
		}
		lines = nil
	}
	return got
}

// CapturePlain returns the visible screen of a pane without escapes.
func (s Server) CapturePlain(ctx context.Context, paneID string) (string, error) {
	out, err := s.run(ctx, "capture-pane", "-p", "-t", paneID)
	if err != nil {
		return "", fmt.Errorf("capture pane %s: %w", paneID, err)
	}
	return string(out), nil
}

// ErrNothingPasted: Paste failed before anything could reach the pane.
var ErrNothingPasted = errors.New("nothing pasted")

// Paste puts text into a named buffer and pastes it into the pane as a
// bracketed paste (paste-buffer -p), deleting the buffer afterwards. The
// agent sees one paste, not typed keys, so newlines do not submit. An
// error wrapping ErrNothingPasted says the pane received nothing; any other
// may have delivered the paste (and the buffer is deleted all the same, so
// the text does not linger in the server).
func (s Server) Paste(ctx context.Context, paneID, buffer, text string) error {
	if buffer == "" {
		return fmt.Errorf("%w: empty buffer name", ErrNothingPasted)
	}
	if _, err := s.run(ctx, "set-buffer", "-b", buffer, "--", literal(text)); err != nil {
		return fmt.Errorf("%w into %s: set buffer: %w", ErrNothingPasted, paneID, err)
	}
	if _, err := s.run(ctx, "paste-buffer", "-p", "-d", "-b", buffer, "-t", paneID); err != nil {
		_, _ = s.run(context.WithoutCancel(ctx), "delete-buffer", "-b", buffer)
		return fmt.Errorf("paste into %s: %w", paneID, err)
	}
	return nil
}

// PaneTTY is the terminal device a pane's programs read and write
// ("/dev/pts/4").
func (s Server) PaneTTY(ctx context.Context, paneID string) (string, error) {
	out, err := s.run(ctx, "display-message", "-p", "-t", paneID, "#{pane_tty}")
	if err != nil {
		return "", fmt.Errorf("tty of %s: %w", paneID, err)
	}
	tty := strings.TrimSpace(string(out))
	if tty == "" {
		return "", fmt.Errorf("tty of %s: tmux named none", paneID)
	}
	return tty, nil
}

// Type sends text to a pane as typed keys, none of it read as a key name;
// "--" keeps a leading "-" from reading as a flag.
func (s Server) Type(ctx context.Context, paneID, text string) error {
	if _, err := s.run(ctx, "send-keys", "-t", paneID, "-l", "--", literal(text)); err != nil {
		return fmt.Errorf("type into %s: %w", paneID, err)
	}
	return nil
}

// literal makes text one tmux argument that arrives as it is. tmux reads a
// ";" ending an argument as the end of a command and drops it, and reads
// `\;` ending one as ";": a backslash before the last ";" keeps it.
func literal(text string) string {
	if strings.HasSuffix(text, ";") {
		return text[:len(text)-1] + `\;`
	}
	return text
}

// SendKeys sends tmux key names (Enter, Escape, Down, C-u, BTab) to a pane.
func (s Server) SendKeys(ctx context.Context, paneID string, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	args := append([]string{"send-keys", "-t", paneID}, keys...)
	if _, err := s.run(ctx, args...); err != nil {
		return fmt.Errorf("send keys %v to %s: %w", keys, paneID, err)
	}
	return nil
}
