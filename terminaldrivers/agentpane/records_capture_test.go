package agentpane

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/claude"
)

// CaptureEnv makes TestE2ETurn write what each step's request added to the
// agent's record into testdata/records/<agent>/<step>.jsonl (machine paths
// replaced), for the unit tests.
const CaptureEnv = "AKK_CAPTURE_RECORDS"

// recordCase is <step>.json beside a captured record.
type recordCase struct {
	Request string `json:"request"`
	// Expected outcome, as Progress reports it at the end of the file.
	Completed    bool   `json:"completed,omitempty"`
	FinalMessage string `json:"final_message,omitempty"`
	Failed       bool   `json:"failed,omitempty"`
	Interrupted  bool   `json:"interrupted,omitempty"`
	ThreadID     string `json:"thread_id"`
	TurnID       string `json:"turn_id"`
}

// captureRecords writes the bytes the step's request added to the file
// that holds it, from the start mark to the end mark.
func (r *run) captureRecords(end domain.DurableMark, text string) {
	if os.Getenv(CaptureEnv) != "1" {
		return
	}
	r.t.Helper()
	s, err1 := decodeMark(r.start)
	m, err2 := decodeMark(end)
	if err1 != nil || err2 != nil || len(m.Files) != 1 {
		r.t.Fatalf("capture: marks %v %v", err1, err2)
	}
	if m.Interrupted && !m.IdleSince.IsZero() && m.EndedAt.Equal(m.IdleSince) {
		return // proven by the session state, not by the record (TestProgressIdleUnrecorded)
	}
	f := m.Files[0]
	var from int64
	for _, c := range s.Files {
		if c.Path == f.Path {
			from = c.Off
		}
	}
	b, err := os.ReadFile(f.Path)
	if err != nil {
		r.t.Fatal(err)
	}
	data := r.neutral(string(b[from:f.Off]))
	var lines []string
	for l := range strings.SplitSeq(strings.TrimSuffix(data, "\n"), "\n") {
		if len(l) <= 16<<10 { // instructions and request copies: large, and nothing a Turn reads
			lines = append(lines, l)
		}
	}
	dir := filepath.Join("testdata", "records", r.e.Agent.Name())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	name := filepath.Base(r.t.Name())
	if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		r.t.Fatal(err)
	}
	c := recordCase{Request: r.neutral(text), Completed: m.Completed, FinalMessage: r.neutral(m.Final), Failed: m.Failed, Interrupted: m.Interrupted, ThreadID: m.Thread, TurnID: m.Turn}
	meta, _ := json.MarshalIndent(c, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, name+".json"), append(meta, '\n'), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// neutral replaces this test's temporary paths with neutral ones.
func (r *run) neutral(s string) string {
	base := filepath.Dir(r.e.Home)
	enc := filepath.Base(claude.ProjectDir("", r.e.ProjectDir))
	s = strings.ReplaceAll(s, enc, "-srv-project")
	s = strings.ReplaceAll(s, r.e.ProjectDir, "/srv/project")
	s = strings.ReplaceAll(s, r.e.Home, "/home/user")
	s = strings.ReplaceAll(s, base, "/srv")
	// Claude Code's own token-budget reminders say nothing about a turn.
	var kept []string
	for _, line := range strings.SplitAfter(s, "\n") {
		if !strings.Contains(line, `"total_tokens_reminder"`) {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "")
}
