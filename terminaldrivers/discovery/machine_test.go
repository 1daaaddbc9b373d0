package discovery

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"akk/terminaldrivers/proc"
	"akk/terminaldrivers/tmux"
)

// machine is a replayed machine: a /proc tree, agent installs and homes in a
// temp dir, and tmux servers answering from recorded output. It records the
// tmux commands discovery runs.
type machine struct {
	t    testing.TB
	root string

	mu      sync.Mutex
	servers map[string][]string // socket -> list-panes lines
	screens map[string]string   // socket + pane id -> capture with escapes
	titles  map[string]string   // socket + pane id -> pane title
	calls   []string
}

func newMachine(t testing.TB) *machine {
	m := &machine{t: t, root: t.TempDir(), servers: map[string][]string{}, screens: map[string]string{}, titles: map[string]string{}}
	m.write("proc/sys/kernel/random/boot_id", "6b1c2a3e-0000-4000-8000-000000000001\n")
	return m
}

func (m *machine) path(rel string) string { return filepath.Join(m.root, rel) }

func (m *machine) write(rel, body string) string {
	p := m.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		m.t.Fatal(err)
	}
	return p
}

func (m *machine) link(target, rel string) {
	p := m.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	_ = os.Remove(p)
	if err := os.Symlink(target, p); err != nil {
		m.t.Fatal(err)
	}
}

// install lays out an npm install of an agent version and returns its
// native binary's path.
func (m *machine) install(kind, version string) string {
	dir := "opt/" + kind + "@" + version + "/node_modules"
	switch kind {
	case "claude":
		m.write(dir+"/@anthropic-ai/claude-code/package.json", `{"name":"@anthropic-ai/claude-code","version":"`+version+`"}`)
		return m.write(dir+"/@anthropic-ai/claude-code/bin/claude.exe", "binary")
	case "codex":
		m.write(dir+"/@openai/codex-linux-x64/package.json", `{"name":"@openai/codex","version":"`+version+`-linux-x64"}`)
		return m.write(dir+"/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex", "binary")
	}
	m.t.Fatalf("no install layout for %s", kind)
	return ""
}

// spec describes one process.
type spec struct {
	pid, ppid, pgrp, tty, tpgid int
	start                       uint64
	comm, exe, cwd              string
	argv                        []string
	env                         map[string]string
	fds                         []string
}

func (m *machine) process(p spec) {
	dir := "proc/" + strconv.Itoa(p.pid)
	m.write(dir+"/stat", fmt.Sprintf("%d (%s) S %d %d %d %d %d 4194560 0 0 0 0 0 0 0 0 20 0 1 0 %d 1000 100", p.pid, p.comm, p.ppid, p.pgrp, p.pgrp, p.tty, p.tpgid, p.start))
	m.write(dir+"/cmdline", strings.Join(p.argv, "\x00")+"\x00")
	var env []string
	for k, v := range p.env {
		env = append(env, k+"="+v)
	}
	m.write(dir+"/environ", strings.Join(env, "\x00")+"\x00")
	m.link(p.exe, dir+"/exe")
	m.link(p.cwd, dir+"/cwd")
	if err := os.MkdirAll(m.path(dir+"/fd"), 0o755); err != nil {
		m.t.Fatal(err)
	}
	for i, f := range append([]string{"/dev/pts/9", "/dev/pts/9", "/dev/pts/9"}, p.fds...) {
		m.link(f, dir+"/fd/"+strconv.Itoa(i))
	}
}

// kill removes a process, as if it exited.
func (m *machine) kill(pid int) {
	if err := os.RemoveAll(m.path("proc/" + strconv.Itoa(pid))); err != nil {
		m.t.Fatal(err)
	}
}

// pane adds a pane to a server; screen is what capture-pane -e prints.
func (m *machine) pane(socket, id string, pid int, cwd, session, window, title, screen string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.servers[socket])
	line := strings.Join([]string{id, strconv.Itoa(pid), "/dev/pts/" + strconv.Itoa(n), cwd, "x", "160", "45", session, window, strconv.Itoa(n), "0", "0", title}, "\x1f")
	m.servers[socket] = append(m.servers[socket], line)
	m.screens[socket+" "+id] = screen
	m.titles[socket+" "+id] = title
}

// Run implements tmux.Runner from the recorded servers.
func (m *machine) Run(_ context.Context, args ...string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, strings.Join(args, " "))
	if len(args) == 1 && args[0] == "-V" {
		return []byte("tmux 3.3a\n"), nil
	}
	if len(args) < 3 || args[0] != "-S" {
		return nil, fmt.Errorf("unexpected tmux call %q", args)
	}
	lines, ok := m.servers[args[1]]
	if !ok {
		return nil, fmt.Errorf("exit status 1: no server running on %s", args[1])
	}
	if args[2] == "capture-pane" && len(args) > 13 {
		// A sequence (CaptureAll): capture, title and fence per pane; it
		// stops at the first pane it cannot find, as tmux does.
		var out []byte
		for rest := args[2:]; len(rest) > 0; {
			end := slices.Index(rest, ";")
			if end < 0 {
				end = len(rest)
			}
			cmd := rest[:end]
			if end < len(rest) {
				rest = rest[end+1:]
			} else {
				rest = nil
			}
			switch {
			case len(cmd) == 5 && cmd[0] == "capture-pane":
				screen, ok := m.screens[args[1]+" "+cmd[4]]
				if !ok {
					return out, fmt.Errorf("exit status 1: can't find pane: %s", cmd[4])
				}
				out = append(out, screen...)
			case len(cmd) == 5 && cmd[0] == "display-message" && cmd[4] == "#{pane_title}":
				out = append(out, m.titles[args[1]+" "+cmd[3]]+"\n"...)
			case len(cmd) == 3 && cmd[0] == "display-message":
				out = append(out, cmd[2]+"\n"...)
			default:
				return out, fmt.Errorf("unexpected command %q in a sequence", cmd)
			}
		}
		return out, nil
	}
	switch args[2] {
	case "list-panes":
		return []byte(strings.Join(lines, "\n") + "\n"), nil
	case "capture-pane":
		// capture-pane -p -e -t <pane> ; display-message -p -t <pane> #{pane_title}
		if len(args) != 13 || args[5] != "-t" || args[7] != ";" || args[12] != "#{pane_title}" {
			return nil, fmt.Errorf("unexpected capture %q", args)
		}
		target := args[6]
		screen, ok := m.screens[args[1]+" "+target]
		if !ok {
			return nil, fmt.Errorf("exit status 1: can't find pane: %s", target)
		}
		return []byte(screen + m.titles[args[1]+" "+target] + "\n"), nil
	}
	return nil, fmt.Errorf("unexpected tmux call %q", args)
}

func (m *machine) tmuxCalls() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.calls...)
}

func (m *machine) config(sockets ...string) Config {
	return Config{Tmux: m, ExtraSockets: sockets, OnlyExtraSockets: true, Proc: proc.FS{Root: m.path("proc")}, Hostname: "devbox"}
}

// fixture returns a captured screen of the claude or codex driver.
func fixture(t testing.TB, kind, version, name string) string {
	b, err := os.ReadFile(filepath.Join("..", kind, "testdata", "screens", version, name, "screen.ansi"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func claudeSession(m *machine, home string, pid int, start uint64, session, version, status string) {
	rec, _ := json.Marshal(map[string]any{"pid": pid, "sessionId": session, "cwd": "/srv/p", "procStart": strconv.FormatUint(start, 10), "version": version, "status": status, "kind": "interactive"})
	m.write(strings.TrimPrefix(home, m.root+"/")+"/.claude/sessions/"+strconv.Itoa(pid)+".json", string(rec))
}

var _ tmux.Runner = (*machine)(nil)
