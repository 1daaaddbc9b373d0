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

// run is the stand-in agent: its flags, then its loop. It is long because
// the loop reads as the agent's script, one line per behaviour.
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
	kind, version, _ := strings.Cut(m.Agent, "@")
	home := os.Getenv("HOME")
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	session := newUUID()
	rewrite := func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(m.SessionID), []byte(session))
		b = bytes.ReplaceAll(b, []byte(recordedHome), []byte(home))
		b = bytes.ReplaceAll(b, []byte(projectDirName(m.Project)), []byte(projectDirName(cwd)))
		return bytes.ReplaceAll(b, []byte(m.Project), []byte(cwd))
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			fmt.Fprintln(os.Stderr, "standin:", err)
			os.Exit(1)
		}
		return b
	}
	working, idle, ask := read("working.ansi"), read("idle.ansi"), read("ask.ansi")
	frames, err := parseFrames(read("frames.txt"))
	if err != nil {
		return err
	}
	start, end := rewrite(read("start.jsonl")), rewrite(read("end.jsonl"))
	askLines, result := rewrite(read("ask.jsonl")), rewrite(read("result.jsonl"))

	// The records a real one keeps.
	var rec *os.File
	state := func(string) error { return nil }
	switch kind {
	case "claude":
		config := os.Getenv("CLAUDE_CONFIG_DIR")
		if config == "" {
			config = filepath.Join(home, ".claude")
		}
		if state, err = sessionRecord(config, session, cwd, version); err != nil {
			return err
		}
		defer os.Remove(filepath.Join(config, "sessions", fmt.Sprintf("%d.json", os.Getpid())))
		tdir := filepath.Join(config, "projects", projectDirName(cwd))
		if err := os.MkdirAll(tdir, 0o700); err != nil {
			return err
		}
		rec, err = os.OpenFile(filepath.Join(tdir, session+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	case "codex":
		codexHome := os.Getenv("CODEX_HOME")
		if codexHome == "" {
			codexHome = filepath.Join(home, ".codex")
		}
		now := time.Now()
		rdir := filepath.Join(codexHome, "sessions", now.Format("2006/01/02"))
		if err := os.MkdirAll(rdir, 0o700); err != nil {
			return err
		}
		// The TUI holds its rollout open for as long as it runs.
		rec, err = os.OpenFile(filepath.Join(rdir, "rollout-"+now.Format("2006-01-02T15-04-05")+"-"+session+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	default:
		return fmt.Errorf("a recording of %q", m.Agent)
	}
	if err != nil {
		return err
	}
	defer rec.Close()
	if err := state("busy"); err != nil {
		return err
	}
	if _, err := rec.Write(start); err != nil {
		return err
	}

	out := bufio.NewWriter(os.Stdout)
	draw := func(screen []byte, x, y int) {
		out.WriteString("\033[0m\033[H\033[2J")
		for i, line := range strings.Split(strings.TrimSuffix(string(screen), "\n"), "\n") {
			fmt.Fprintf(out, "\033[%d;1H%s\033[0m", i+1, line)
		}
		fmt.Fprintf(out, "\033[%d;%dH", y+1, x+1)
		out.Flush()
	}
	note := func(env string, at time.Time) {
		if f := os.Getenv(env); f != "" {
			os.WriteFile(f, []byte(strconv.FormatInt(at.UnixNano(), 10)), 0o644)
		}
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	exists := func(env string) bool {
		f := os.Getenv(env)
		_, err := os.Stat(f)
		return f != "" && err == nil
	}
	window := time.Duration(m.WindowMS) * time.Millisecond
	check := time.NewTicker(100 * time.Millisecond)
	defer check.Stop()
	asked := false
work:
	for {
		draw(working, m.CursorX, m.CursorY)
		began := time.Now()
		for _, f := range frames {
			wait := time.NewTimer(time.Until(began.Add(f.at)))
			for done := false; !done; {
				select {
				case <-stop:
					return nil
				case <-check.C:
					if exists("AKK_STANDIN_FINISH") || exists("AKK_STANDIN_ASK") {
						wait.Stop()
						break work
					}
				case <-wait.C:
					done = true
				}
			}
			out.Write(f.data)
			out.Flush()
		}
		if rest := time.Until(began.Add(window)); rest > 0 {
			time.Sleep(rest)
		}
	}

	if !exists("AKK_STANDIN_FINISH") {
		// The permission prompt, as the recorded agent asked it: the tool
		// call's line and the prompt in the recorded order and time apart.
		asked = true
		apart := time.Duration(m.AskMS) * time.Millisecond
		if apart >= 0 {
			rec.Write(askLines)
			time.Sleep(apart)
		}
		draw(ask, m.AskX, m.AskY)
		note("AKK_STANDIN_ASKED", time.Now())
		state("waiting")
		if apart < 0 {
			time.Sleep(-apart)
			rec.Write(askLines)
		}
		for !exists("AKK_STANDIN_FINISH") {
			select {
			case <-stop:
				return nil
			case <-check.C:
			}
		}
	}

	// The end of the turn, as the real agent wrote it.
	if asked {
		state("busy")
		rec.Write(result)
	}
	if _, err := rec.Write(end); err != nil {
		return err
	}
	at := time.Now()
	state("idle")
	note("AKK_STANDIN_DONE", at)
	draw(idle, m.CursorX, m.CursorY)
	<-stop
	return nil
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
