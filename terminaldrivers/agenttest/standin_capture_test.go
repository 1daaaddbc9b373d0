package agenttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agenttest/fakemodel"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/screen"
)

// CaptureStandinEnv rerecords what the scale stand-in replays
// (terminaldrivers/testdata/standin/<agent>/): make fixtures-standin.
const CaptureStandinEnv = "AKK_CAPTURE_STANDIN"

// StandinCodexVersion is the Codex the Codex stand-in replays: the newest
// pinned version whose TUI holds its own rollout (later ones hand it to an
// app-server daemon, which a stand-in would have to play too).
const StandinCodexVersion = "0.155.1"

// TestCaptureStandin records the newest pinned Claude Code, and Codex
// StandinCodexVersion, working on a slow task, as the stand-in agent of the
// scale benchmark replays it: the working screen and cursor, every byte
// the agent wrote to its pane for StandinWindow (through a read-only tmux
// control client, with the time of each write), the record as it stood
// then and the lines its end added, and the idle screen after it. Then a
// permission prompt as the agent asks it: the tool call's record line, the
// prompt's screen and cursor, how long after the line the prompt was drawn
// (negative: before it), and the tool result's line once approved, both
// renamed into the working turn.
func TestCaptureStandin(t *testing.T) {
	if os.Getenv(CaptureStandinEnv) != "1" {
		t.Skipf("set %s=1 to rerecord the stand-in", CaptureStandinEnv)
	}
	claudes := RequireAgents(t, KindClaude)
	for _, a := range []Agent{claudes[len(claudes)-1], RequireAgent(t, KindCodex, StandinCodexVersion)} {
		t.Run(a.Name(), func(t *testing.T) { captureStandin(t, a) })
	}
}

func captureStandin(t *testing.T, a Agent) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(FixtureProjectDir, 0o755); err != nil {
		t.Fatalf("%s: %v (another capture running, or an old one left it)", FixtureProjectDir, err)
	}
	t.Cleanup(func() { os.RemoveAll(FixtureProjectDir) })
	old, _ := filepath.Glob(filepath.Join(root, "terminaldrivers", "testdata", "standin", a.Kind+"@*"))
	for _, o := range old {
		os.RemoveAll(o)
	}
	dir := filepath.Join(root, "terminaldrivers", "testdata", "standin", a.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	reg, err := agent.RegistryOf([]agent.Driver{claude.Driver{}, codex.Driver{}})
	if err != nil {
		t.Fatal(err)
	}
	prof, _, ok := reg.Resolve(domain.AgentKind(a.Kind), a.Version)
	if !ok {
		t.Fatalf("no profile for %s", a.Name())
	}
	e := fixtureEnv(t, a, Options{})
	e.StartReady()
	// The slow answer is quiet for half its time: the recording is of
	// the agent waiting on its model, as most of a long task is.
	e.Submit("Work for a while " + fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "30", "lead", "false"))
	e.WaitFor("the spinner", captureTimeout, func(s string) bool { return strings.Contains(s, "esc to interrupt") })
	e.Settle()
	recs := e.TranscriptPaths()
	if len(recs) != 1 {
		t.Fatalf("records: %v", recs)
	}
	sessionID := strings.TrimSuffix(filepath.Base(recs[0]), ".jsonl")
	if a.Kind == KindCodex {
		sessionID = sessionID[len(sessionID)-36:] // rollout-<time>-<thread id>
	}

	cmd := exec.Command("tmux", "-L", e.SocketName, "-C", "attach-session", "-f", "ignore-size,read-only", "-t", "akk")
	cmd.Env = e.tmuxEnv
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Wait() }()
	// The screen and cursor, then every write after them: tmux answers the
	// command between the writes it forwards, in order.
	fmt.Fprintf(in, "capture-pane -p -e -t %s\ndisplay-message -p -t %s '#{cursor_x} #{cursor_y}'\n", e.Target(), e.Target())
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	var blocks [][]string
	var cur []string
	inBlock := false
	var frames bytes.Buffer
	var start time.Time
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "%begin ") && strings.HasSuffix(l, " 1"):
			inBlock, cur = true, nil
		case inBlock && (strings.HasPrefix(l, "%end ") || strings.HasPrefix(l, "%error ")):
			inBlock = false
			blocks = append(blocks, cur)
			if len(blocks) == 2 {
				start = time.Now()
			}
		case inBlock:
			cur = append(cur, l)
		case len(blocks) == 2 && strings.HasPrefix(l, "%output "):
			f := strings.SplitN(l, " ", 3)
			if len(f) == 3 {
				fmt.Fprintf(&frames, "%d %s\n", time.Since(start).Milliseconds(), f[2])
			}
		}
		if !start.IsZero() && time.Since(start) >= StandinWindow {
			break
		}
	}
	if len(blocks) != 2 {
		t.Fatalf("control client answered %d of 2 commands", len(blocks))
	}
	var cx, cy int
	if _, err := fmt.Sscanf(strings.Join(blocks[1], ""), "%d %d", &cx, &cy); err != nil {
		t.Fatalf("cursor %q: %v", blocks[1], err)
	}
	startRecords, err := os.ReadFile(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	startRecords = startRecords[:bytes.LastIndexByte(startRecords, '\n')+1]
	e.WaitTurnCompleted("", 90*time.Second)
	e.WaitIdle(captureTimeout)
	e.Settle()
	all, err := os.ReadFile(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	idle := e.CaptureANSI()

	// A permission prompt: which comes first, the tool call's line or the
	// prompt, looked at every few milliseconds.
	call, result := `"type":"tool_use"`, `"type":"tool_result"`
	if a.Kind == KindCodex {
		call, result = `"type":"function_call"`, `"type":"function_call_output"`
	}
	mark := len(all)
	lines := func(b []byte, with string) []byte {
		var out []byte
		for _, l := range bytes.SplitAfter(b, []byte("\n")) {
			if bytes.HasSuffix(l, []byte("\n")) && bytes.Contains(l, []byte(with)) {
				out = append(out, l...)
			}
		}
		return out
	}
	e.Submit("[[akk:bash]] ask for a command")
	var callAt, drawnAt time.Time
	var ask string
	for deadline := time.Now().Add(captureTimeout); callAt.IsZero() || drawnAt.IsZero(); time.Sleep(3 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("tool call at %v, prompt drawn at %v", callAt, drawnAt)
		}
		if b, err := os.ReadFile(recs[0]); callAt.IsZero() && err == nil && len(lines(b[mark:], call)) > 0 {
			callAt = time.Now()
		}
		if drawnAt.IsZero() {
			if s := e.CaptureANSI(); prof.Classify(screen.Parse(s)).State == domain.ScreenAwaitingApproval {
				drawnAt, ask = time.Now(), s
			}
		}
	}
	ax, ay := e.Cursor()
	// The first option: yes, once (pressed again while the prompt stays:
	// one drawn a moment ago may not take keys yet).
	var asked []byte
	var pressed time.Time
	for deadline := time.Now().Add(captureTimeout); ; time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(recs[0])
		if err == nil && len(lines(b[mark:], result)) > 0 {
			asked = b[mark:]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no tool result after the approval")
		}
		if time.Since(pressed) > time.Second && prof.Classify(screen.Parse(e.CaptureANSI())).State == domain.ScreenAwaitingApproval {
			e.Press("Enter")
			pressed = time.Now()
		}
	}
	e.WaitIdle(captureTimeout)

	write := func(name string, data []byte) {
		t.Helper()
		// The harness's temporary home is named by a neutral one.
		data = bytes.ReplaceAll(data, []byte(e.Home), []byte(StandinHome))
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	meta, _ := json.MarshalIndent(StandinMeta{
		Agent: a.Name(), SessionID: sessionID, Project: FixtureProjectDir,
		Width: e.Width, Height: e.Height, CursorX: cx, CursorY: cy, WindowMS: StandinWindow.Milliseconds(),
		AskCursorX: ax, AskCursorY: ay, AskDrawnMS: drawnAt.Sub(callAt).Milliseconds(),
	}, "", "  ")
	write("meta.json", append(meta, '\n'))
	write("working.ansi", []byte(strings.Join(blocks[0], "\n")+"\n"))
	write("frames.txt", frames.Bytes())
	write("start.jsonl", startRecords)
	write("end.jsonl", all[len(startRecords):])
	write("idle.ansi", []byte(idle))
	// The stand-in asks inside its working turn: the asked lines name the
	// recorded working turn, as the agent's own lines would.
	turnKey := regexp.MustCompile(`"(turn_id|promptId)":"([0-9a-f-]{36})"`)
	turnOf := func(b []byte) []byte {
		m := turnKey.FindAllSubmatch(b, -1)
		if len(m) == 0 {
			t.Fatalf("no turn id in %.200s", b)
		}
		return m[len(m)-1][2]
	}
	asked = bytes.ReplaceAll(asked, turnOf(lines(asked, result)), turnOf(startRecords))
	write("ask.ansi", []byte(ask))
	write("ask.jsonl", lines(asked, call))
	write("result.jsonl", lines(asked, result))
}
