package agentpane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"akk/terminaldrivers/agent"
)

// A line-per-entry record: "P" a prompt, "C" a completion, "A" assistant text.
func parseLetters(line []byte) (agent.Entry, bool) {
	switch strings.TrimSpace(string(line)) {
	case "P":
		return agent.Entry{Kind: agent.EntryUserPrompt}, true
	case "C":
		return agent.Entry{Kind: agent.EntryCompleted}, true
	case "I":
		return agent.Entry{Kind: agent.EntryInterrupted}, true
	case "A":
		return agent.Entry{Kind: agent.EntryAssistantText}, true
	}
	return agent.Entry{}, false
}

func TestOpenPrompt(t *testing.T) {
	for _, c := range []struct {
		record string
		off    int64
		open   bool
	}{
		{"P\nA\nC\nP\nA\n", 6, true},
		{"P\nA\nC\n", 0, false},
		{"P\nA\nI\nx\n", 0, false},
		{"", 0, false},
		{"A\nP\n", 2, true},
	} {
		path := filepath.Join(t.TempDir(), "r.jsonl")
		os.WriteFile(path, []byte(c.record), 0o600)
		off, open, err := openPrompt(path, int64(len(c.record)), parseLetters)
		if err != nil || open != c.open || (open && off != c.off) {
			t.Errorf("%q: off %d open %v err %v, want %d %v", c.record, off, open, err, c.off, c.open)
		}
	}
}

// A transcript not written yet (Claude Code names a new session in its
// session record a moment before it creates the file) is "no open prompt
// yet", to be looked for again, not an error that refuses the Watch (seen
// once under load as a 503).
func TestOpenPromptOfARecordNotWrittenYet(t *testing.T) {
	off, ok, err := openPrompt(filepath.Join(t.TempDir(), "not-yet.jsonl"), 0, func([]byte) (agent.Entry, bool) { return agent.Entry{}, false })
	if off != 0 || ok || err != nil {
		t.Fatalf("openPrompt of a missing record: %d %v %v", off, ok, err)
	}
}
