package agenttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest/fakemodel"
)

// CaptureStandinEnv rerecords what the scale stand-in replays
// (terminaldrivers/testdata/standin/<agent>/): make fixtures-standin.
const CaptureStandinEnv = "AKK_CAPTURE_STANDIN"

// TestCaptureStandin records the newest pinned Claude Code working on a slow task, as
// the stand-in agent of the scale benchmark replays it: the working screen
// and cursor, every byte the agent wrote to its pane for StandinWindow
// (through a read-only tmux control client, with the time of each write),
// the transcript as it stood then and the records its end added, and the
// idle screen after it.
func TestCaptureStandin(t *testing.T) {
	if os.Getenv(CaptureStandinEnv) != "1" {
		t.Skipf("set %s=1 to rerecord the stand-in", CaptureStandinEnv)
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(FixtureProjectDir, 0o755); err != nil {
		t.Fatalf("%s: %v (another capture running, or an old one left it)", FixtureProjectDir, err)
	}
	t.Cleanup(func() { os.RemoveAll(FixtureProjectDir) })
	// The newest pinned Claude Code; its recording replaces the one there.
	agents := RequireAgents(t, KindClaude)
	a := agents[len(agents)-1]
	old, _ := filepath.Glob(filepath.Join(root, "terminaldrivers", "testdata", "standin", KindClaude+"@*"))
	for _, o := range old {
		os.RemoveAll(o)
	}
	dir := filepath.Join(root, "terminaldrivers", "testdata", "standin", a.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
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
		t.Fatalf("transcripts: %v", recs)
	}
	sessionID := strings.TrimSuffix(filepath.Base(recs[0]), ".jsonl")

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
	}, "", "  ")
	write("meta.json", append(meta, '\n'))
	write("working.ansi", []byte(strings.Join(blocks[0], "\n")+"\n"))
	write("frames.txt", frames.Bytes())
	write("start.jsonl", startRecords)
	write("end.jsonl", all[len(startRecords):])
	write("idle.ansi", []byte(e.CaptureANSI()))
}
