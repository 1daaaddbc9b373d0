package agenttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The scale stand-in (package standin) is a light program that looks, to
// the product, like one real profiled Claude Code or Codex working: its
// executable sits where the npm package puts the agent's, it keeps the
// records the agent keeps, it replays a recording of the real agent's
// pane output at the real agent's pace, and it asks for permission as the
// recorded agent did. It exists for
// load only: correctness is proven on the real agents.

// StandinWindow is how long a recording of pane output lasts; the stand-in
// loops it while it works.
const StandinWindow = 10 * time.Second

// StandinHome names, in a recording, the recorded agent's home; the
// stand-in replaces it by its own.
const StandinHome = "/tmp/akk-fixture-home"

// StandinMeta is meta.json of a stand-in recording.
type StandinMeta struct {
	Agent     string `json:"agent"`
	SessionID string `json:"session_id"` // the recorded session, replaced by the stand-in's own
	Project   string `json:"project"`    // the recorded working folder, replaced likewise
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	CursorX   int    `json:"cursor_x"` // where the cursor stood when the recording began
	CursorY   int    `json:"cursor_y"`
	WindowMS  int64  `json:"window_ms"`
	// The permission prompt: its cursor, and when it was drawn after the
	// tool call's record line (negative: before it).
	AskCursorX int   `json:"ask_cursor_x"`
	AskCursorY int   `json:"ask_cursor_y"`
	AskDrawnMS int64 `json:"ask_drawn_ms"`
}

// Standin is an installed stand-in: Entry is its executable, laid out as
// the npm package lays out the agent's (so discovery reads its version
// from the package beside it); Recording is the recording it replays.
type Standin struct {
	Entry     string
	Recording string
}

// InstallStandin builds the stand-in into dir as the executable of the
// agent of kind (KindClaude, KindCodex) and the version its recording
// (terminaldrivers/testdata/standin/<kind>@<version>, the one there is)
// was made with.
func InstallStandin(tb testing.TB, dir, kind string) Standin {
	tb.Helper()
	root, err := ModuleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	recs, _ := filepath.Glob(filepath.Join(root, "terminaldrivers", "testdata", "standin", kind+"@*"))
	if len(recs) != 1 {
		tb.Fatalf("stand-in recordings of %s: %v, want one (make fixtures-standin)", kind, recs)
	}
	version := strings.TrimPrefix(filepath.Base(recs[0]), kind+"@")
	var pkg, entry, manifest, name string
	switch kind {
	case KindClaude:
		pkg = filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code")
		entry, manifest, name = filepath.Join(pkg, "bin", "claude.exe"), filepath.Join(pkg, "package.json"), "@anthropic-ai/claude-code"
	case KindCodex:
		// The native binary, with the codex-package.json Codex keeps
		// beside its bin folder.
		pkg = filepath.Join(dir, "codex")
		entry, manifest, name = filepath.Join(pkg, "bin", "codex"), filepath.Join(pkg, "codex-package.json"), "@openai/codex"
	default:
		tb.Fatalf("no stand-in for %q", kind)
	}
	cmd := exec.Command("go", "build", "-o", entry, "./terminaldrivers/agenttest/standin")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build the stand-in: %v\n%s", err, out)
	}
	if err := os.WriteFile(manifest, []byte(fmt.Sprintf(`{"name":%q,"version":%q}`, name, version)), 0o644); err != nil {
		tb.Fatal(err)
	}
	return Standin{Entry: entry, Recording: recs[0]}
}
