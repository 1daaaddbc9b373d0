package tmux

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recorded answers each tmux command line from a table and logs the calls.
type recorded struct {
	out   map[string]string
	calls []string
}

func (r *recorded) Run(_ context.Context, args ...string) ([]byte, error) {
	key := strings.Join(args, " ")
	r.calls = append(r.calls, key)
	for prefix, out := range r.out {
		if strings.HasPrefix(key, prefix) {
			return []byte(out), nil
		}
	}
	return nil, errors.New("no server running on " + key)
}

func TestListPanesParsesRecordedOutputOncePerPane(t *testing.T) {
	out, err := os.ReadFile("testdata/list-panes-grouped.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorded{out: map[string]string{"-S /s list-panes -a -F ": string(out)}}
	panes, err := Server{Socket: "/s", Runner: r}.ListPanes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.calls) != 1 {
		t.Fatalf("calls %q: want one tmux process", r.calls)
	}
	var ids []string
	for _, p := range panes {
		ids = append(ids, p.ID)
	}
	if want := []string{"%0", "%1", "%2", "%3", "%4"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("pane ids %v, want %v (grouped sessions list each pane twice)", ids, want)
	}
	want := Pane{
		Socket: "/s", ID: "%1", PID: 3123, TTY: "/dev/pts/1", CurrentPath: "/home/dev/proj-2.1.267",
		CurrentCommand: "entry", Width: 160, Height: 45, SessionName: "grouped", WindowName: "claude-2.1.267",
		WindowIndex: 1, PaneIndex: 0, Title: "\u2733 Claude Code",
	}
	if !reflect.DeepEqual(panes[1], want) {
		t.Fatalf("pane %+v\nwant %+v", panes[1], want)
	}
}

func TestParsePanesRejectsGarbage(t *testing.T) {
	for _, out := range []string{"%1\x1f12\n", "%1\x1fx\x1f/dev/pts/1\x1f/\x1fsh\x1f80\x1f24\x1fs\x1fw\x1f0\x1f0\x1f0\x1ft\n", "1\x1f12\x1f/dev/pts/1\x1f/\x1fsh\x1f80\x1f24\x1fs\x1fw\x1f0\x1f0\x1f0\x1ft\n"} {
		if _, err := ParsePanes("/s", []byte(out)); err == nil {
			t.Errorf("ParsePanes(%q): no error", out)
		}
	}
	panes, err := ParsePanes("/s", []byte("%7\x1f12\x1f/dev/pts/1\x1f/\x1fsh\x1f80\x1f24\x1fs\x1fw\x1f0\x1f0\x1f1\x1ftitle \x1f with sep\n"))
	if err != nil || len(panes) != 1 || panes[0].Title != "title \x1f with sep" || !panes[0].Dead {
		t.Fatalf("title with separator: %+v %v", panes, err)
	}
}

func TestSocketsListsOnlyOwnSockets(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "default"))
	if err != nil {
		t.Skipf("cannot make a unix socket here: %v", err)
	}
	defer l.Close()
	if err := os.WriteFile(filepath.Join(dir, "notes"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Sockets(dir, os.Getuid())
	if err != nil || !reflect.DeepEqual(got, []string{filepath.Join(dir, "default")}) {
		t.Fatalf("Sockets = %v, %v", got, err)
	}
	if got, _ := Sockets(dir, os.Getuid()+1); len(got) != 0 {
		t.Fatalf("another user's sockets: %v", got)
	}
	if got, err := Sockets(filepath.Join(dir, "missing"), os.Getuid()); err != nil || got != nil {
		t.Fatalf("missing dir: %v, %v", got, err)
	}
}

func TestSocketDir(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := SocketDir(getenv, 1000); got != "/tmp/tmux-1000" {
		t.Fatalf("default: %s", got)
	}
	env["TMUX_TMPDIR"] = "/run/user/1000"
	if got := SocketDir(getenv, 1000); got != "/run/user/1000/tmux-1000" {
		t.Fatalf("TMUX_TMPDIR: %s", got)
	}
}

func TestVersion(t *testing.T) {
	v, err := Version(context.Background(), &recorded{out: map[string]string{"-V": "tmux 3.3a\n"}})
	if err != nil || v != "3.3a" {
		t.Fatalf("Version = %q, %v", v, err)
	}
	_, err = Version(context.Background(), ExecRunner{Path: "/nonexistent/tmux"})
	if !errors.Is(err, ErrNoTmux) {
		t.Fatalf("missing binary: %v, want ErrNoTmux", err)
	}
	_, err = Server{Socket: "/s", Runner: ExecRunner{Path: "/nonexistent/tmux"}}.ListPanes(context.Background())
	if !errors.Is(err, ErrNoTmux) {
		t.Fatalf("missing binary, list panes: %v, want ErrNoTmux", err)
	}
}

// realTmux starts a tmux server of the test's own, one session "t" of 80
// columns and height rows running cat; it ends with the test.
func realTmux(t *testing.T, height int) (context.Context, string, ExecRunner) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	ctx := context.Background()
	sock := filepath.Join(t.TempDir(), "s")
	r := ExecRunner{}
	if _, err := r.Run(ctx, "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "80", "-y", strconv.Itoa(height), "cat"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = r.Run(context.Background(), "-S", sock, "kill-server") })
	// tmux starts the command through the shell, which then becomes cat:
	// until it has, the pane names the shell. Before the shell holds the
	// terminal, tmux can name the pane by its command ("cat") too, so the
	// name alone proves nothing (on a busy machine a listing read "cat" and
	// the next "bash"). Tests compare listings, so they start once the
	// pane's process itself is cat.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := r.Run(ctx, "-S", sock, "list-panes", "-a", "-F", "#{pane_pid} #{pane_current_command}")
		if err != nil {
			t.Fatal(err)
		}
		if pid, cmd, _ := strings.Cut(strings.TrimSpace(string(out)), " "); cmd == "cat" {
			if comm, err := os.ReadFile("/proc/" + pid + "/comm"); err == nil && strings.TrimSpace(string(comm)) == "cat" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pane never ran cat: %q", out)
		}
	}
	return ctx, sock, r
}

// The real tmux, on a server of the test's own: list, capture, paste, keys.
func TestServerAgainstRealTmux(t *testing.T) {
	ctx, sock, r := realTmux(t, 20)
	s := Server{Socket: sock, Runner: r}
	panes, err := s.ListPanes(ctx)
	if err != nil || len(panes) != 1 {
		t.Fatalf("ListPanes = %+v, %v", panes, err)
	}
	p := panes[0]
	if p.PID <= 0 || p.Width != 80 || p.Height != 20 || p.SessionName != "t" || !strings.HasPrefix(p.TTY, "/dev/") {
		t.Fatalf("pane %+v", p)
	}
	if err := s.Paste(ctx, p.ID, "akk-test", "pasted words"); err != nil {
		t.Fatal(err)
	}
	if err := s.SendKeys(ctx, p.ID, "Enter"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		plain, err := s.CapturePlain(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		// cat echoes the line the tty delivered: typed once, printed once more.
		if strings.Count(plain, "pasted words") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("paste not echoed:\n%s", plain)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := r.Run(ctx, "-S", sock, "select-pane", "-t", p.ID, "-T", "a title"); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Capture(ctx, p.ID)
	if err != nil || !strings.Contains(snap.ANSI, "pasted words") || snap.Title != "a title" || strings.Count(snap.ANSI, "\n") != 20 {
		t.Fatalf("Capture = %+v, %v", snap, err)
	}
	all := s.CaptureAll(ctx, []string{p.ID, "%999"})
	if len(all) != 1 || all[p.ID] != snap {
		t.Fatalf("CaptureAll = %+v, want %s as Capture took it: %+v", all, p.ID, snap)
	}
	if out, _ := r.Run(ctx, "-S", sock, "list-buffers"); strings.Contains(string(out), "akk-test") {
		t.Fatal("paste left its buffer behind")
	}
	if _, err := (Server{Socket: filepath.Join(t.TempDir(), "none"), Runner: r}).ListPanes(ctx); err == nil {
		t.Fatal("no server: no error")
	}
}

// Text ending in ";" reaches the pane whole: tmux reads a trailing ";" of
// an argument as the end of a command, so "echo hi;" once arrived as
// "echo hi".
func TestPasteAndTypeKeepATrailingSemicolon(t *testing.T) {
	ctx, sock, r := realTmux(t, 30)
	s := Server{Socket: sock, Runner: r}
	pane := "t:0.0"
	var want []string
	// Each line is read back (the tty's echo, then cat's) before the next
	// goes in, so the two never interleave.
	check := func(text string, send func() error) {
		t.Helper()
		if err := send(); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if err := s.SendKeys(ctx, pane, "Enter"); err != nil {
			t.Fatal(err)
		}
		want = append(want, text, text)
		deadline := time.Now().Add(5 * time.Second)
		for {
			plain, err := s.CapturePlain(ctx, pane)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimRight(plain, "\n"), "\n")
			if slices.Equal(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("pane reads\n%q\nwant\n%q", got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, text := range []string{"echo hi;", "a;b;", `ends in \;`, ";", `\\;`} {
		check(text, func() error { return s.Paste(ctx, pane, "akk-test", text) })
	}
	for _, text := range []string{"typed;", `typed \;`, ";"} {
		check(text, func() error { return s.Type(ctx, pane, text) })
	}
}

// CaptureAll on many panes takes every one, as Capture would: pane ids
// past %2 once came back mangled (tmux expands display-message's text with
// strftime), so all but three panes were captured again one by one.
func TestCaptureAllManyPanes(t *testing.T) {
	ctx, sock, r := realTmux(t, 10)
	for range 11 {
		if _, err := r.Run(ctx, "-S", sock, "new-window", "-d", "-t", "t:", "cat"); err != nil {
			t.Fatal(err)
		}
	}
	s := Server{Socket: sock, Runner: r}
	panes, err := s.ListPanes(ctx)
	if err != nil || len(panes) != 12 {
		t.Fatalf("ListPanes = %d panes, %v", len(panes), err)
	}
	var ids []string
	for _, p := range panes {
		ids = append(ids, p.ID)
		if _, err := r.Run(ctx, "-S", sock, "select-pane", "-t", p.ID, "-T", "title of "+p.ID+" 100%"); err != nil {
			t.Fatal(err)
		}
	}
	all := s.CaptureAll(ctx, ids)
	for _, id := range ids {
		one, err := s.Capture(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := all[id]; !ok || got != one {
			t.Fatalf("CaptureAll[%s] = %+v (%v), Capture took %+v", id, got, ok, one)
		}
	}
}

func TestLiveTellsStaleSocketsApart(t *testing.T) {
	dir := t.TempDir()
	liveSock := filepath.Join(dir, "live")
	l, err := net.Listen("unix", liveSock)
	if err != nil {
		t.Skipf("cannot make a unix socket here: %v", err)
	}
	defer l.Close()
	// A socket whose server died: bound, then closed without unlinking.
	staleSock := filepath.Join(dir, "stale")
	dead, err := net.ListenUnix("unix", &net.UnixAddr{Name: staleSock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	dead.SetUnlinkOnClose(false)
	dead.Close()
	missing := filepath.Join(dir, "missing")

	for _, root := range []string{"/proc", filepath.Join(dir, "no-proc")} {
		live, stale := Live(root, []string{liveSock, staleSock, missing})
		if !reflect.DeepEqual(live, []string{liveSock}) || !reflect.DeepEqual(stale, []string{staleSock, missing}) {
			t.Errorf("proc root %s: live %v stale %v", root, live, stale)
		}
	}

	// Named as listening in /proc/net/unix: live without a probe.
	fake := filepath.Join(dir, "proc")
	if err := os.MkdirAll(filepath.Join(fake, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	table := "Num       RefCount Protocol Flags    Type St Inode Path\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 385556 " + staleSock + "\n" +
		"0000000000000000: 00000003 00000000 00000000 0001 03 385557 " + missing + "\n"
	if err := os.WriteFile(filepath.Join(fake, "net", "unix"), []byte(table), 0o644); err != nil {
		t.Fatal(err)
	}
	live, stale := Live(fake, []string{staleSock, missing})
	if !reflect.DeepEqual(live, []string{staleSock}) || !reflect.DeepEqual(stale, []string{missing}) {
		t.Errorf("listed in /proc/net/unix: live %v stale %v", live, stale)
	}
}

// With no UTF-8 locale (LC_ALL=C, as `env -i` or a bare service leaves
// it), panes are still listed and a captured screen keeps its non-ASCII
// characters, and a pasted one arrives whole: tmux replaced the list's
// separator and every such character with "_" before the clients got -u.
func TestNoUTF8Locale(t *testing.T) {
	ctx, sock, r := realTmux(t, 20)
	t.Setenv("LC_ALL", "C")
	t.Setenv("LANG", "")
	t.Setenv("LC_CTYPE", "")
	s := Server{Socket: sock, Runner: r}
	panes, err := s.ListPanes(ctx)
	if err != nil || len(panes) != 1 {
		t.Fatalf("ListPanes without a UTF-8 locale = %+v, %v", panes, err)
	}
	if err := s.Paste(ctx, panes[0].ID, "akk-test", "héllo ✓ ❯"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		plain, err := s.CapturePlain(ctx, panes[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(plain, "héllo ✓ ❯") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pasted characters never showed whole:\n%s", plain)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
