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
// the product, like one real profiled Claude Code working: its executable
// sits where the npm package puts Claude Code's, it keeps the session
// record and transcript Claude Code keeps, and it replays a recording of
// the real agent's pane output at the real agent's pace. It exists for
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
}

// Standin is an installed stand-in: Entry is its executable, laid out as
// the npm package lays out Claude Code's (so discovery reads its version
// from the package beside it); Recording is the recording it replays.
type Standin struct {
	Entry     string
	Recording string
}

// InstallStandin builds the stand-in into dir as the executable of the
// Claude Code version its recording (terminaldrivers/testdata/standin/
// claude@<version>, the one there is) was made with.
func InstallStandin(tb testing.TB, dir string) Standin {
	tb.Helper()
	root, err := ModuleRoot()
	if err != nil {
		tb.Fatal(err)
	}
	recs, _ := filepath.Glob(filepath.Join(root, "terminaldrivers", "testdata", "standin", KindClaude+"@*"))
	if len(recs) != 1 {
		tb.Fatalf("stand-in recordings: %v, want one (make fixtures-standin)", recs)
	}
	version := strings.TrimPrefix(filepath.Base(recs[0]), KindClaude+"@")
	pkg := filepath.Join(dir, "node_modules", "@anthropic-ai", "claude-code")
	entry := filepath.Join(pkg, "bin", "claude.exe")
	cmd := exec.Command("go", "build", "-o", entry, "./terminaldrivers/agenttest/standin")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("build the stand-in: %v\n%s", err, out)
	}
	manifest := fmt.Sprintf(`{"name":"@anthropic-ai/claude-code","version":%q}`, version)
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(manifest), 0o644); err != nil {
		tb.Fatal(err)
	}
	return Standin{Entry: entry, Recording: recs[0]}
}
