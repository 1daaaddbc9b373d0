// Command standin is the scale benchmark's stand-in for one Claude Code or
// Codex working on a long task: a few megabytes instead of a real agent's
// few hundred. Installed where the npm package puts the agent's
// executable, it keeps the records a real one keeps (Claude Code: its
// session record and transcript; Codex: a rollout it holds open; recorded
// ones, with their own session id, folder and home), draws the recorded
// working screen and replays the real agent's recorded pane output at the
// recorded pace (spinner, timer), looping. When the file named by
// AKK_STANDIN_ASK appears it asks for permission as the recorded agent
// did: the tool call's record line and the prompt's screen, in the
// recorded order and the recorded time apart (Claude Code's session record
// says "waiting" as the prompt is drawn), and notes when the prompt was
// drawn in AKK_STANDIN_ASKED. When the file named by AKK_STANDIN_FINISH
// appears it appends the recorded tool result (when it asked) and end of
// the turn to its record, notes when in AKK_STANDIN_DONE, draws the
// recorded idle screen and waits to be stopped. It is harness, not
// product: it proves nothing about an agent, it only loads the monitor as
// one does.
//
// Environment: AKK_STANDIN_DIR (the recording), AKK_STANDIN_ASK,
// AKK_STANDIN_ASKED, AKK_STANDIN_FINISH, AKK_STANDIN_DONE, HOME (and
// CLAUDE_CONFIG_DIR or CODEX_HOME when set).
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"akk/terminaldrivers/claude"
)

type meta struct {
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"`
	Project   string `json:"project"`
	CursorX   int    `json:"cursor_x"`
	CursorY   int    `json:"cursor_y"`
	WindowMS  int64  `json:"window_ms"`
	AskX      int    `json:"ask_cursor_x"`
	AskY      int    `json:"ask_cursor_y"`
	AskMS     int64  `json:"ask_drawn_ms"`
}

// recordedHome is agenttest.StandinHome.
const recordedHome = "/tmp/akk-fixture-home"

type frame struct {
	at   time.Duration
	data []byte
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
}

// run is the stand-in agent: its recording loaded, its record opened,
// then its script: work, perhaps ask, finish.
func run() error {
	dir := os.Getenv("AKK_STANDIN_DIR")
	var m meta
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	r := &standin{m: m, dir: dir, home: os.Getenv("HOME"), cwd: cwd, session: newUUID(), out: bufio.NewWriter(os.Stdout)}
	if err := r.load(); err != nil {
		return err
	}
	rec, state, cleanup, err := r.openRecord()
	if err != nil {
		return err
	}
	defer cleanup()
	r.rec, r.state = rec, state
	if err := state("busy"); err != nil {
		return err
	}
	if _, err := rec.Write(r.start); err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	check := time.NewTicker(100 * time.Millisecond)
	defer check.Stop()
	if !r.work(stop, check.C) {
		return nil
	}
	asked := false
	if !exists("AKK_STANDIN_FINISH") {
		asked = true
		if !r.ask(stop, check.C) {
			return nil
		}
	}
	// The end of the turn, as the real agent wrote it.
	if asked {
		state("busy")
		rec.Write(r.result)
	}
	if _, err := rec.Write(r.end); err != nil {
		return err
	}
	at := time.Now()
	state("idle")
	note("AKK_STANDIN_DONE", at)
	r.draw(r.idle, m.CursorX, m.CursorY)
	<-stop
	return nil
}

// standin is one run of a recorded agent: its recording, rewritten for
// this session, home and folder, and the record it writes.
type standin struct {
	m                            meta
	dir, home, cwd, session      string
	working, idle, askScreen     []byte
	frames                       []frame
	start, end, askLines, result []byte
	rec                          *os.File
	state                        func(string) error
	out                          *bufio.Writer
}

// load reads the recording, rewritten for this run.
func (r *standin) load() error {
	m := r.m
	rewrite := func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(m.SessionID), []byte(r.session))
		b = bytes.ReplaceAll(b, []byte(recordedHome), []byte(r.home))
		b = bytes.ReplaceAll(b, []byte(projectDirName(m.Project)), []byte(projectDirName(r.cwd)))
		return bytes.ReplaceAll(b, []byte(m.Project), []byte(r.cwd))
	}
	var err error
	read := func(name string) []byte {
		b, rerr := os.ReadFile(filepath.Join(r.dir, name))
		if rerr != nil && err == nil {
			err = rerr
		}
		return b
	}
	r.working, r.idle, r.askScreen = read("working.ansi"), read("idle.ansi"), read("ask.ansi")
	frames := read("frames.txt")
	r.start, r.end = rewrite(read("start.jsonl")), rewrite(read("end.jsonl"))
	r.askLines, r.result = rewrite(read("ask.jsonl")), rewrite(read("result.jsonl"))
	if err != nil {
		return err
	}
	r.frames, err = parseFrames(frames)
	return err
}

// openRecord opens the record a real agent of the recording's kind keeps
// (Claude Code's transcript and session state; Codex's rollout, held open
// for as long as it runs).
func (r *standin) openRecord() (rec *os.File, state func(string) error, cleanup func(), err error) {
	kind, version, _ := strings.Cut(r.m.Agent, "@")
	state = func(string) error { return nil }
	cleanup = func() {}
	switch kind {
	case "claude":
		config := os.Getenv("CLAUDE_CONFIG_DIR")
		if config == "" {
			config = filepath.Join(r.home, ".claude")
		}
		if state, err = sessionRecord(config, r.session, r.cwd, version); err != nil {
			return nil, nil, nil, err
		}
		cleanup = func() { os.Remove(filepath.Join(config, "sessions", fmt.Sprintf("%d.json", os.Getpid()))) }
		tdir := filepath.Join(config, "projects", projectDirName(r.cwd))
		if err := os.MkdirAll(tdir, 0o700); err != nil {
			return nil, nil, nil, err
		}
		rec, err = os.OpenFile(filepath.Join(tdir, r.session+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	case "codex":
		codexHome := os.Getenv("CODEX_HOME")
		if codexHome == "" {
			codexHome = filepath.Join(r.home, ".codex")
		}
		now := time.Now()
		rdir := filepath.Join(codexHome, "sessions", now.Format("2006/01/02"))
		if err := os.MkdirAll(rdir, 0o700); err != nil {
			return nil, nil, nil, err
		}
		rec, err = os.OpenFile(filepath.Join(rdir, "rollout-"+now.Format("2006-01-02T15-04-05")+"-"+r.session+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	default:
		return nil, nil, nil, fmt.Errorf("a recording of %q", r.m.Agent)
	}
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	done := cleanup
	return rec, state, func() { rec.Close(); done() }, nil
}

// draw paints a recorded screen and puts the cursor where it was.
func (r *standin) draw(screen []byte, x, y int) {
	r.out.WriteString("\033[0m\033[H\033[2J")
	for i, line := range strings.Split(strings.TrimSuffix(string(screen), "\n"), "\n") {
		fmt.Fprintf(r.out, "\033[%d;1H%s\033[0m", i+1, line)
	}
	fmt.Fprintf(r.out, "\033[%d;%dH", y+1, x+1)
	r.out.Flush()
}

// work plays the working screen's frames, window after window, until the
// test asks it to ask or finish; false when it was told to stop.
func (r *standin) work(stop <-chan os.Signal, check <-chan time.Time) bool {
	window := time.Duration(r.m.WindowMS) * time.Millisecond
	for {
		r.draw(r.working, r.m.CursorX, r.m.CursorY)
		began := time.Now()
		for _, f := range r.frames {
			wait := time.NewTimer(time.Until(began.Add(f.at)))
			for done := false; !done; {
				select {
				case <-stop:
					return false
				case <-check:
					if exists("AKK_STANDIN_FINISH") || exists("AKK_STANDIN_ASK") {
						wait.Stop()
						return true
					}
				case <-wait.C:
					done = true
				}
			}
			r.out.Write(f.data)
			r.out.Flush()
		}
		if rest := time.Until(began.Add(window)); rest > 0 {
			time.Sleep(rest)
		}
	}
}

// ask shows the permission prompt as the recorded agent asked it (the
// tool call's line and the prompt in the recorded order and time apart),
// then waits to be told to finish; false when it was told to stop.
func (r *standin) ask(stop <-chan os.Signal, check <-chan time.Time) bool {
	apart := time.Duration(r.m.AskMS) * time.Millisecond
	if apart >= 0 {
		r.rec.Write(r.askLines)
		time.Sleep(apart)
	}
	r.draw(r.askScreen, r.m.AskX, r.m.AskY)
	note("AKK_STANDIN_ASKED", time.Now())
	r.state("waiting")
	if apart < 0 {
		time.Sleep(-apart)
		r.rec.Write(r.askLines)
	}
	for !exists("AKK_STANDIN_FINISH") {
		select {
		case <-stop:
			return false
		case <-check:
		}
	}
	return true
}

// note writes when something happened into the file env names.
func note(env string, at time.Time) {
	if f := os.Getenv(env); f != "" {
		os.WriteFile(f, []byte(strconv.FormatInt(at.UnixNano(), 10)), 0o644)
	}
}

// exists reports whether the file env names exists.
func exists(env string) bool {
	f := os.Getenv(env)
	_, err := os.Stat(f)
	return f != "" && err == nil
}

// sessionRecord writes Claude Code's session record (sessions/<pid>.json)
// with a first status, and returns how to write it again with another.
func sessionRecord(config, session, cwd, version string) (func(status string) error, error) {
	pid := os.Getpid()
	ticks, err := startTicks()
	if err != nil {
		return nil, err
	}
	sessions := filepath.Join(config, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		return nil, err
	}
	return func(status string) error {
		b, _ := json.Marshal(map[string]any{"pid": pid, "sessionId": session, "cwd": cwd, "procStart": ticks,
			"version": version, "status": status, "kind": "interactive", "statusUpdatedAt": time.Now().UnixMilli()})
		tmp := filepath.Join(sessions, fmt.Sprintf(".%d.json.tmp", pid))
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, filepath.Join(sessions, fmt.Sprintf("%d.json", pid)))
	}, nil
}

// parseFrames reads frames.txt: per line the milliseconds since the
// recording began and the bytes written, escaped as tmux's control mode
// escapes them (\ooo octal for control bytes and the backslash).
func parseFrames(b []byte) ([]frame, error) {
	var out []frame
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		ms, data, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(ms)
		if err != nil {
			return nil, fmt.Errorf("frame %q: %w", line, err)
		}
		out = append(out, frame{at: time.Duration(n) * time.Millisecond, data: unescape(data)})
	}
	return out, nil
}

func unescape(s string) []byte {
	var out []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 3
			continue
		}
		out = append(out, s[i])
	}
	return out
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// projectDirName is Claude Code's folder name for a working folder.
func projectDirName(cwd string) string { return filepath.Base(claude.ProjectDir("/", cwd)) }

func startTicks() (string, error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return "", err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 20 {
		return "", fmt.Errorf("short /proc/self/stat")
	}
	return f[19], nil
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
