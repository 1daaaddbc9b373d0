package agenttest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Record is one JSON line of a Claude Code transcript or a Codex rollout.
type Record map[string]any

// Get walks nested objects by key; nil when a key is missing.
func (r Record) Get(path ...string) any {
	var v any = map[string]any(r)
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// String is Get as a string ("" when missing or not a string).
func (r Record) String(path ...string) string {
	s, _ := r.Get(path...).(string)
	return s
}

// Text is every "text" string inside the record, joined: the readable
// content of a message whatever its block layout.
func (r Record) Text() string {
	var parts []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok && (k == "text" || k == "last_agent_message" || k == "message") {
					parts = append(parts, s)
				} else {
					walk(c)
				}
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(map[string]any(r))
	return strings.Join(parts, "\n")
}

var nonAlnum = regexp.MustCompile(`[^a-zA-Z0-9]`)

// ClaudeProjectDir is where Claude Code keeps transcripts for a working
// directory: $HOME/.claude/projects/<cwd with every non-alphanumeric -> '-'>.
func ClaudeProjectDir(home, cwd string) string {
	return filepath.Join(home, ".claude", "projects", nonAlnum.ReplaceAllString(cwd, "-"))
}

// TranscriptPaths lists the agent's transcript (Claude:
// $HOME/.claude/projects/<cwd>/<session uuid>.jsonl) or rollout (Codex:
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl) files, oldest first.
func (e *Env) TranscriptPaths() []string {
	var paths []string
	switch e.Agent.Kind {
	case KindClaude:
		paths, _ = filepath.Glob(filepath.Join(ClaudeProjectDir(e.Home, e.ProjectDir), "*.jsonl"))
	case KindCodex:
		paths, _ = filepath.Glob(filepath.Join(e.CodexHome, "sessions", "*", "*", "*", "rollout-*.jsonl"))
	}
	sort.Slice(paths, func(i, j int) bool { return modTime(paths[i]).Before(modTime(paths[j])) })
	return paths
}

func modTime(p string) time.Time {
	st, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// ReadRecords reads a JSONL file; a torn last line (still being written) is
// left out.
func ReadRecords(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}

// Transcript reads the newest transcript or rollout; nil when none exists yet.
func (e *Env) Transcript() []Record {
	e.t.Helper()
	paths := e.TranscriptPaths()
	if len(paths) == 0 {
		return nil
	}
	recs, err := ReadRecords(paths[len(paths)-1])
	if err != nil {
		e.t.Fatalf("read transcript: %v", err)
	}
	return recs
}

// WaitTranscript polls the newest transcript/rollout until cond holds.
func (e *Env) WaitTranscript(what string, timeout time.Duration, cond func([]Record) bool) []Record {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		recs := e.Transcript()
		if cond(recs) {
			return recs
		}
		if time.Now().After(deadline) {
			screen, _ := e.Tmux("capture-pane", "-p", "-t", e.Target())
			e.t.Fatalf("%s: timed out after %s waiting for %s in %v (%d records); last records:\n%s\nlast screen:\n%s",
				e.Agent.Name(), timeout, what, e.TranscriptPaths(), len(recs), tail(recs, 4), frame(screen))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func tail(recs []Record, n int) string {
	var b strings.Builder
	for _, r := range recs[max(0, len(recs)-n):] {
		data, _ := json.Marshal(r)
		s := string(data)
		if len(s) > 600 {
			s = s[:600] + "…"
		}
		fmt.Fprintln(&b, s)
	}
	return b.String()
}

// TurnCompleted reports whether the records hold a completed turn whose final
// answer contains text. Claude Code: an assistant record with stop_reason
// "end_turn" holding text, followed by a {"type":"system","subtype":
// "turn_duration"} record. Codex: an event_msg task_complete whose
// last_agent_message holds text.
func TurnCompleted(kind string, recs []Record, text string) bool {
	switch kind {
	case KindClaude:
		answered := false
		for _, r := range recs {
			if r.String("type") == "assistant" && r.String("message", "stop_reason") == "end_turn" && strings.Contains(r.Text(), text) {
				answered = true
			}
			if answered && r.String("type") == "system" && r.String("subtype") == "turn_duration" {
				return true
			}
		}
	case KindCodex:
		for _, r := range recs {
			if r.String("type") == "event_msg" && r.String("payload", "type") == "task_complete" &&
				strings.Contains(r.String("payload", "last_agent_message"), text) {
				return true
			}
		}
	}
	return false
}

// WaitTurnCompleted waits until the transcript/rollout shows a completed turn
// whose final answer contains text (see TurnCompleted).
func (e *Env) WaitTurnCompleted(text string, timeout time.Duration) []Record {
	e.t.Helper()
	return e.WaitTranscript(fmt.Sprintf("a completed turn answering %q", text), timeout, func(recs []Record) bool {
		return TurnCompleted(e.Agent.Kind, recs, text)
	})
}
