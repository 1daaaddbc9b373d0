// Command standin is the scale benchmark's stand-in for one Claude Code
// working on a long task: a few megabytes instead of a real agent's few
// hundred. Installed where the npm package puts Claude Code's executable,
// it keeps the session record and transcript a real one keeps (a recorded
// transcript, with its own session id, folder and home), draws the recorded
// working screen and replays the real agent's recorded pane output at the
// recorded pace (spinner, timer), looping, until the file named by
// AKK_STANDIN_FINISH appears; then it appends the recorded end of the turn
// to its transcript, notes when in AKK_STANDIN_DONE, draws the recorded
// idle screen and waits to be stopped. It is harness, not product: it
// proves nothing about an agent, it only loads the monitor as one does.
//
// Environment: AKK_STANDIN_DIR (the recording), AKK_STANDIN_FINISH,
// AKK_STANDIN_DONE, HOME (and CLAUDE_CONFIG_DIR when set).
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
	version := strings.TrimPrefix(m.Agent, "claude@")
	home := os.Getenv("HOME")
	config := os.Getenv("CLAUDE_CONFIG_DIR")
	if config == "" {
		config = filepath.Join(home, ".claude")
	}
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
	working, idle := read("working.ansi"), read("idle.ansi")
	frames, err := parseFrames(read("frames.txt"))
	if err != nil {
		return err
	}
	start, end := rewrite(read("start.jsonl")), rewrite(read("end.jsonl"))

	// The records a real one keeps: the session record, then the transcript.
	pid := os.Getpid()
	ticks, err := startTicks()
	if err != nil {
		return err
	}
	sessions := filepath.Join(config, "sessions")
	record := func(status string) error {
		b, _ := json.Marshal(map[string]any{"pid": pid, "sessionId": session, "cwd": cwd, "procStart": ticks,
			"version": version, "status": status, "kind": "interactive"})
		tmp := filepath.Join(sessions, fmt.Sprintf(".%d.json.tmp", pid))
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, filepath.Join(sessions, fmt.Sprintf("%d.json", pid)))
	}
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		return err
	}
	if err := record("busy"); err != nil {
		return err
	}
	defer os.Remove(filepath.Join(sessions, fmt.Sprintf("%d.json", pid)))
	tdir := filepath.Join(config, "projects", projectDirName(cwd))
	if err := os.MkdirAll(tdir, 0o700); err != nil {
		return err
	}
	transcript := filepath.Join(tdir, session+".jsonl")
	if err := os.WriteFile(transcript, start, 0o600); err != nil {
		return err
	}

	out := bufio.NewWriter(os.Stdout)
	draw := func(screen []byte) {
		out.WriteString("\033[0m\033[H\033[2J")
		for i, line := range strings.Split(strings.TrimSuffix(string(screen), "\n"), "\n") {
			fmt.Fprintf(out, "\033[%d;1H%s\033[0m", i+1, line)
		}
		fmt.Fprintf(out, "\033[%d;%dH", m.CursorY+1, m.CursorX+1)
		out.Flush()
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	finish := os.Getenv("AKK_STANDIN_FINISH")
	finished := func() bool {
		_, err := os.Stat(finish)
		return finish != "" && err == nil
	}
	window := time.Duration(m.WindowMS) * time.Millisecond
	check := time.NewTicker(100 * time.Millisecond)
	defer check.Stop()
work:
	for {
		draw(working)
		began := time.Now()
		for _, f := range frames {
			wait := time.NewTimer(time.Until(began.Add(f.at)))
			for done := false; !done; {
				select {
				case <-stop:
					return nil
				case <-check.C:
					if finished() {
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

	// The end of the turn, as the real agent wrote it.
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(end); err != nil {
		return err
	}
	f.Close()
	at := time.Now()
	record("idle")
	if done := os.Getenv("AKK_STANDIN_DONE"); done != "" {
		os.WriteFile(done, []byte(strconv.FormatInt(at.UnixNano(), 10)), 0o644)
	}
	draw(idle)
	<-stop
	return nil
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
