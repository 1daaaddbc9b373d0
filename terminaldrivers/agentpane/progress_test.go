package agentpane

import (
	"github.com/coder/quartz"
	"syscall"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/discovery"
)

// testTerminal is an Adapter with the real profiles and no tmux.
func testTerminal(t *testing.T) *Adapter {
	t.Helper()
	d, err := discovery.New(discovery.Config{OnlyExtraSockets: true})
	if err != nil {
		t.Fatal(err)
	}
	return New(d, Config{})
}

// agentOf reads "<kind>@<version>".
func agentOf(t *testing.T, name string) domain.Terminal {
	t.Helper()
	kind, version, ok := strings.Cut(name, "@")
	if !ok {
		t.Fatalf("record folder %q is not kind@version", name)
	}
	return domain.Terminal{Agent: domain.Agent{Kind: domain.AgentKind(kind), Version: version}}
}

// markFor is a mark on path at offset 0, as Mark takes it on a file the
// turn is about to be written to.
func markFor(t *testing.T, path, thread string, at time.Time) domain.DurableMark {
	t.Helper()
	m := &markState{V: markVersion, At: at, Files: []fileMark{{Path: path, Thread: thread}}}
	dm, err := m.encode()
	if err != nil {
		t.Fatal(err)
	}
	return dm
}

type recorded struct {
	name  string
	term  domain.Terminal
	meta  recordCase
	lines [][]byte
}

// recordedCases reads testdata/records/<kind>@<version>/<case>.{json,jsonl},
// captured from the real agents by TestE2ETurn with AKK_CAPTURE_RECORDS=1.
func recordedCases(t *testing.T) []recorded {
	t.Helper()
	metas, err := filepath.Glob(filepath.Join("testdata", "records", "*", "*.json"))
	if err != nil || len(metas) == 0 {
		t.Fatalf("no recorded cases: %v", err)
	}
	var out []recorded
	for _, p := range metas {
		var c recorded
		c.name = filepath.Base(filepath.Dir(p)) + "/" + strings.TrimSuffix(filepath.Base(p), ".json")
		c.term = agentOf(t, filepath.Base(filepath.Dir(p)))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &c.meta); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		data, err := os.ReadFile(strings.TrimSuffix(p, ".json") + ".jsonl")
		if err != nil {
			t.Fatal(err)
		}
		c.lines = bytes.SplitAfter(data, []byte{'\n'})
		if len(c.lines[len(c.lines)-1]) == 0 {
			c.lines = c.lines[:len(c.lines)-1]
		}
		out = append(out, c)
	}
	return out
}

// TestProgressRecorded replays each captured record as the agent wrote
// it, a line at a time and each line in two writes, calling Progress after
// every write: the outcome must be what the real run saw, and a call with
// nothing new must return the mark unchanged.
func TestProgressRecorded(t *testing.T) {
	x := testTerminal(t)
	for _, c := range recordedCases(t) {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "record.jsonl")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			mark := markFor(t, path, c.meta.ThreadID, time.Time{})
			var p domain.TurnProgress
			var changes []domain.FileChange
			term := c.term
			term.Project = "/srv/project" // as captured
			progress := func() {
				t.Helper()
				p, err = x.Progress(context.Background(), term, mark, c.meta.Request)
				if err != nil {
					t.Fatalf("progress: %v", err)
				}
				mark = p.Mark
				changes = append(changes, p.Changes...)
			}
			for _, line := range c.lines {
				half := len(line) / 2
				f.Write(line[:half])
				progress() // a torn line is left for later
				f.Write(line[half:])
				progress()
			}
			before := p.Mark
			progress()
			if p.Mark != before {
				t.Errorf("a call with nothing new changed the mark")
			}
			want := c.meta
			if !p.Accepted || p.NativeThreadID != want.ThreadID || p.NativeTurnID != want.TurnID {
				t.Errorf("accepted %v thread %q turn %q, want thread %q turn %q", p.Accepted, p.NativeThreadID, p.NativeTurnID, want.ThreadID, want.TurnID)
			}
			if p.Completed != want.Completed || p.FinalMessage != want.FinalMessage || p.Failed != want.Failed || p.Interrupted != want.Interrupted {
				t.Errorf("progress %+v, want %+v", p, want)
			}
			if p.Failed && p.FailureReason == "" {
				t.Errorf("failed without a reason")
			}
			if (p.Completed || p.Failed || p.Interrupted) == false {
				t.Errorf("the turn did not end: %+v", p)
			}
			if strings.HasSuffix(c.name, "/edits") {
				wantChanges(t, changes)
			} else if len(changes) > 0 {
				t.Errorf("changes %+v in a turn that edited nothing", changes)
			}
		})
	}
}

// TestProgressWholeFile reads each captured record in one call.
func TestProgressWholeFile(t *testing.T) {
	x := testTerminal(t)
	for _, c := range recordedCases(t) {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "record.jsonl")
			if err := os.WriteFile(path, bytes.Join(c.lines, nil), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := x.Progress(context.Background(), c.term, markFor(t, path, c.meta.ThreadID, time.Time{}), c.meta.Request)
			if err != nil {
				t.Fatal(err)
			}
			if !p.Accepted || p.Completed != c.meta.Completed || p.FinalMessage != c.meta.FinalMessage || p.Failed != c.meta.Failed || p.Interrupted != c.meta.Interrupted {
				t.Errorf("progress %+v, want %+v", p, c.meta)
			}
		})
	}
}

// TestProgressOtherRequest: a record that holds another request is never
// accepted for ours, and nothing in it ends our turn.
func TestProgressOtherRequest(t *testing.T) {
	x := testTerminal(t)
	for _, c := range recordedCases(t) {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "record.jsonl")
			if err := os.WriteFile(path, bytes.Join(c.lines, nil), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := x.Progress(context.Background(), c.term, markFor(t, path, c.meta.ThreadID, time.Time{}), c.meta.Request+" (not sent)")
			if err != nil {
				t.Fatal(err)
			}
			if p.Accepted || p.Ended() || p.LatestText != "" {
				t.Errorf("another request's record read as ours: %+v", p)
			}
		})
	}
}

// TestProgressPromptAfterReply: Claude Code may append the prompt after
// the reply it caused; the reply stamped after the prompt is still ours.
func TestProgressPromptAfterReply(t *testing.T) {
	x := testTerminal(t)
	for _, c := range recordedCases(t) {
		if c.term.Agent.Kind != domain.AgentClaude || !strings.HasSuffix(c.name, "/plain") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var prompt []byte
			var rest [][]byte
			for _, l := range c.lines {
				if prompt == nil && bytes.Contains(l, []byte(`"type":"user"`)) && bytes.Contains(l, []byte(`"promptId"`)) {
					prompt = l
					continue
				}
				rest = append(rest, l)
			}
			if prompt == nil {
				t.Fatal("no prompt record in the case")
			}
			path := filepath.Join(t.TempDir(), "record.jsonl")
			if err := os.WriteFile(path, bytes.Join(rest, nil), 0o644); err != nil {
				t.Fatal(err)
			}
			mark := markFor(t, path, c.meta.ThreadID, time.Time{})
			p, err := x.Progress(context.Background(), c.term, mark, c.meta.Request)
			if err != nil || p.Accepted || p.Ended() {
				t.Fatalf("before the prompt: %+v, %v", p, err)
			}
			f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			f.Write(prompt)
			f.Close()
			p, err = x.Progress(context.Background(), c.term, p.Mark, c.meta.Request)
			if err != nil || !p.Accepted || !p.Completed || p.FinalMessage != c.meta.FinalMessage {
				t.Fatalf("after the prompt: %+v, %v", p, err)
			}
		})
	}
}

// TestProgressCandidates: before acceptance a Codex mark follows several
// rollouts; the one holding the request is bound, the same request in two
// is ambiguous, and in a rollout first seen after the mark only records
// stamped after the mark count.
func TestProgressCandidates(t *testing.T) {
	x := testTerminal(t)
	var c recorded
	for _, rc := range recordedCases(t) {
		if rc.name == "codex@0.169.0/plain" {
			c = rc
		}
	}
	if c.lines == nil {
		t.Fatal("no codex@0.169.0/plain case")
	}
	dir := t.TempDir()
	write := func(name string, lines [][]byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Join(lines, nil), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := write("other.jsonl", nil)
	ours := write("ours.jsonl", c.lines)
	twin := write("twin.jsonl", c.lines)
	at := time.Now()
	mk := func(files ...fileMark) domain.DurableMark {
		m := &markState{V: markVersion, At: at, Files: files}
		dm, _ := m.encode()
		return dm
	}

	p, err := x.Progress(context.Background(), c.term, mk(fileMark{Path: other}, fileMark{Path: ours, Thread: "t-ours"}), c.meta.Request)
	if err != nil || !p.Accepted || p.NativeThreadID != "t-ours" || !p.Completed {
		t.Errorf("one candidate holds the request: %+v, %v", p, err)
	}
	if m, _ := decodeMark(p.Mark); len(m.Files) != 1 || m.Files[0].Path != ours {
		t.Errorf("bound files %+v", m.Files)
	}

	p, err = x.Progress(context.Background(), c.term, mk(fileMark{Path: ours}, fileMark{Path: twin}), c.meta.Request)
	if !errors.Is(err, ErrAmbiguous) || p.Accepted {
		t.Errorf("two candidates hold the request: %+v, %v", p, err)
	}
	if _, err := x.Progress(context.Background(), c.term, p.Mark, c.meta.Request); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("ambiguity forgotten: %v", err)
	}

	p, err = x.Progress(context.Background(), c.term, mk(fileMark{Path: ours, New: true}), c.meta.Request)
	if err != nil || p.Accepted {
		t.Errorf("a rollout opened after the mark, holding the request from before it: %+v, %v", p, err)
	}
	at = time.Time{}
	p, err = x.Progress(context.Background(), c.term, mk(fileMark{Path: ours, New: true}), c.meta.Request)
	if err != nil || !p.Accepted {
		t.Errorf("a rollout opened after the mark, holding the request from after it: %+v, %v", p, err)
	}
}

// TestProgressEndedIsFinal: once the turn ended, Progress reads nothing.
func TestProgressEndedIsFinal(t *testing.T) {
	x := testTerminal(t)
	m := &markState{V: markVersion, Files: []fileMark{{Path: filepath.Join(t.TempDir(), "gone.jsonl")}}, Accepted: true, Completed: true, Final: "done"}
	dm, _ := m.encode()
	p, err := x.Progress(context.Background(), domain.Terminal{Agent: domain.Agent{Kind: domain.AgentCodex, Version: "0.169.0"}}, dm, "x")
	if err != nil || !p.Completed || p.FinalMessage != "done" || p.Mark != dm {
		t.Errorf("%+v, %v", p, err)
	}
	if _, err := x.Progress(context.Background(), domain.Terminal{}, "not json", "x"); err == nil {
		t.Error("a bad mark was read")
	}
}

// TestProgressIdleUnrecorded: Claude Code interrupted before any answer
// records nothing after the prompt; its session record turning idle after
// the prompt, with the transcript quiet for the grace period, ends the turn
// as interrupted. Waiting for an answer, idle from before the prompt, or a
// reply already written do not.
func TestProgressIdleUnrecorded(t *testing.T) {
	var c recorded
	for _, rc := range recordedCases(t) {
		if rc.name == "claude@2.1.328/plain" {
			c = rc
		}
	}
	var prompt []byte
	for _, l := range c.lines {
		if bytes.Contains(l, []byte(`"promptId"`)) && bytes.Contains(l, []byte(`"type":"user"`)) {
			prompt = l
		}
	}
	if prompt == nil {
		t.Fatal("no prompt record in claude@2.1.328/plain")
	}
	var rec struct{ Timestamp time.Time }
	if err := json.Unmarshal(prompt, &rec); err != nil {
		t.Fatal(err)
	}
	promptAt := rec.Timestamp
	cases := []struct {
		name      string
		status    string
		since     time.Time
		reply     bool
		after     time.Duration // of the clock after the state change
		interrupt bool
		composer  string // what the pane's composer shows; the request when unset
	}{
		{"idle after the prompt", "idle", promptAt.Add(time.Second), false, 3 * time.Second, true, ""},
		{"within the grace period", "idle", promptAt.Add(time.Second), false, time.Second, false, ""},
		{"waiting for an answer", "waiting", promptAt.Add(time.Second), false, 3 * time.Second, false, ""},
		{"busy", "busy", promptAt.Add(time.Second), false, 3 * time.Second, false, ""},
		{"idle from before the prompt", "idle", promptAt.Add(-time.Second), false, 3 * time.Second, false, ""},
		{"a reply was written", "idle", promptAt.Add(time.Second), true, 3 * time.Second, false, ""},
		// Idle and the record quiet, but the composer empty: the turn
		// answered and its transcript lags (seen for over ten seconds on a
		// busy machine), not an interrupt.
		{"the composer empty", "idle", promptAt.Add(time.Second), false, 3 * time.Second, false, "-"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "record.jsonl")
			lines := [][]byte{prompt}
			if tc.reply {
				for _, l := range c.lines {
					if bytes.Contains(l, []byte(`"type":"assistant"`)) {
						lines = append(lines, l)
						break
					}
				}
			}
			if err := os.WriteFile(path, bytes.Join(lines, nil), 0o644); err != nil {
				t.Fatal(err)
			}
			state := filepath.Join(dir, "session.json")
			st, _ := json.Marshal(map[string]any{"sessionId": c.meta.ThreadID, "status": tc.status, "statusUpdatedAt": tc.since.UnixMilli()})
			if err := os.WriteFile(state, st, 0o644); err != nil {
				t.Fatal(err)
			}
			composer := c.meta.Request
			if tc.composer == "-" {
				composer = ""
			}
			d, err := discovery.New(discovery.Config{OnlyExtraSockets: true, Tmux: composerScreen(t, composer)})
			if err != nil {
				t.Fatal(err)
			}
			clock := quartz.NewMock(t)
			clock.Set(tc.since.Add(tc.after))
			x := New(d, Config{Clock: clock})
			m := &markState{V: markVersion, Files: []fileMark{{Path: path, Thread: c.meta.ThreadID}}, State: state}
			dm, _ := m.encode()
			p, err := x.Progress(context.Background(), c.term, dm, c.meta.Request)
			if err != nil || !p.Accepted {
				t.Fatalf("%+v, %v", p, err)
			}
			if p.Interrupted != tc.interrupt || p.Completed || p.Failed {
				t.Errorf("interrupted %v, want %v: %+v", p.Interrupted, tc.interrupt, p)
			}
		})
	}

	// The reply is written between the record's read and the state's
	// (a reader held up on a busy machine): the state file is a pipe whose
	// writer appends the reply to the record before it says idle.
	t.Run("a reply written while the state was read", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "record.jsonl")
		if err := os.WriteFile(path, prompt, 0o644); err != nil {
			t.Fatal(err)
		}
		var reply []byte
		for _, l := range c.lines {
			if bytes.Contains(l, []byte(`"type":"assistant"`)) {
				reply = l
				break
			}
		}
		state := filepath.Join(dir, "session.json")
		if err := syscall.Mkfifo(state, 0o600); err != nil {
			t.Fatal(err)
		}
		since := promptAt.Add(time.Second)
		wrote := make(chan error, 1)
		go func() {
			// Read first (whether the agent waits for the person): busy.
			// Read again: the reply is appended, then the state says idle.
			for i, status := range []string{"busy", "idle"} {
				w, err := os.OpenFile(state, os.O_WRONLY, 0) // until the state is read
				if err != nil {
					wrote <- err
					return
				}
				if i == 1 {
					if f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0); err == nil {
						f.Write(reply)
						f.Close()
					}
				}
				st, _ := json.Marshal(map[string]any{"sessionId": c.meta.ThreadID, "status": status, "statusUpdatedAt": since.UnixMilli()})
				_, err = w.Write(st)
				// This read must be over before the next write opens: an open
				// for writing pairs with any reader still open, and this one,
				// done with its data but not yet closed, would take the next
				// state too or break the pipe (seen: "write …/session.json:
				// broken pipe", and a Progress waiting for a state never
				// written). The reader is a descriptor of this process: seen
				// beside ours (it cannot end while ours is open), then gone.
				for err == nil && openHere(state) < 2 {
					time.Sleep(time.Millisecond)
				}
				w.Close()
				for err == nil && openHere(state) > 0 {
					time.Sleep(time.Millisecond)
				}
				if err != nil {
					wrote <- err
					return
				}
			}
			wrote <- nil
		}()
		d, err := discovery.New(discovery.Config{OnlyExtraSockets: true})
		if err != nil {
			t.Fatal(err)
		}
		clock := quartz.NewMock(t)
		clock.Set(since.Add(3 * time.Second))
		x := New(d, Config{Clock: clock})
		m := &markState{V: markVersion, Files: []fileMark{{Path: path, Thread: c.meta.ThreadID}}, State: state}
		dm, _ := m.encode()
		p, err := x.Progress(context.Background(), c.term, dm, c.meta.Request)
		if werr := <-wrote; werr != nil {
			t.Fatal(werr)
		}
		if err != nil || !p.Accepted || p.Interrupted || p.LatestText == "" {
			t.Fatalf("a turn whose reply came while its state was read: %+v, %v", p, err)
		}
	})
}

// openHere counts this process's open descriptors on path.
func openHere(path string) int {
	fds, _ := os.ReadDir("/proc/self/fd")
	n := 0
	for _, fd := range fds {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && l == path {
			n++
		}
	}
	return n
}

// composerScreen answers every capture with Claude Code 2.1.328's idle
// screen, its composer holding text.
func composerScreen(t *testing.T, text string) *fixedScreen {
	b, err := os.ReadFile("../claude/testdata/screens/2.1.328/idle-fresh/screen.ansi")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		if strings.Contains(l, "❯") {
			lines[i] = "❯\u00a0" + text
		}
	}
	return &fixedScreen{out: strings.Join(lines, "\n") + "\ntitle\n"}
}

type fixedScreen struct{ out string }

func (f *fixedScreen) Run(context.Context, ...string) ([]byte, error) { return []byte(f.out), nil }
