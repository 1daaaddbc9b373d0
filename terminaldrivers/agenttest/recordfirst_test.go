package agenttest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/screen"
)

// TestRecordFirst (make record-first, AKK_RECORD_FIRST=1; the measure behind
// agent.TurnRules.AsksForetold, not a check): on every pinned version, tasks that make the
// agent ask (a command's permission, a questionnaire, Codex's async
// question); which comes first, the tool call in the agent's record (and
// Claude Code's session record saying "waiting") or the step on its
// screen, and how far apart (looked at every few milliseconds).
func TestRecordFirst(t *testing.T) {
	if os.Getenv("AKK_RECORD_FIRST") == "" {
		t.Skip("an investigation: AKK_RECORD_FIRST=1")
	}
	reg, err := agent.RegistryOf([]agent.Driver{claude.Driver{}, codex.Driver{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			prof, _, _ := reg.Resolve(domain.AgentKind(a.Kind), a.Version)
			v, _ := agent.ParseVersion(a.Version)
			first, _ := agent.ParseVersion("0.154.0")
			async := a.Kind == KindCodex && !v.Less(first)
			e := New(t, a, Options{AsyncQuestions: async})
			e.StartReady()
			tasks := []string{"[[akk:bash]] which comes first", "[[akk:ask questions=1]] which comes first"}
			if async {
				tasks = append(tasks, "[[akk:ask_async questions=1 secs=30 hold=steer]] which comes first")
			}
			for _, task := range tasks {
				mark := map[string]int64{}
				for _, p := range e.TranscriptPaths() {
					if st, err := os.Stat(p); err == nil {
						mark[p] = st.Size()
					}
				}
				call := []byte(`"type":"tool_use"`)
				if a.Kind == KindCodex {
					call = []byte(`"type":"function_call"`)
				}
				if a.Kind == KindCodex && task != tasks[0] {
					e.PlanMode()
				}
				e.Submit(task)
				var recAt, scrAt, waitAt time.Time
				deadline := time.Now().Add(90 * time.Second)
				for (recAt.IsZero() || scrAt.IsZero() || a.Kind == KindClaude && waitAt.IsZero() && time.Since(scrAt) < 5*time.Second) && time.Now().Before(deadline) {
					if recAt.IsZero() {
						for _, p := range e.TranscriptPaths() {
							b, err := os.ReadFile(p)
							if err == nil && int64(len(b)) > mark[p] && bytes.Contains(b[mark[p]:], call) {
								recAt = time.Now()
							}
						}
					}
					if waitAt.IsZero() && a.Kind == KindClaude {
						ss, _ := filepath.Glob(filepath.Join(e.Home, ".claude", "sessions", "*.json"))
						for _, p := range ss {
							if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(`"status":"waiting"`)) {
								waitAt = time.Now()
							}
						}
					}
					if scrAt.IsZero() {
						r := prof.Classify(screen.Parse(e.CaptureANSI()))
						if r.State == domain.ScreenAwaitingApproval || r.State == domain.ScreenAwaitingInteraction || r.AsyncQuestion {
							scrAt = time.Now()
						}
					}
					time.Sleep(3 * time.Millisecond)
				}
				if recAt.IsZero() || scrAt.IsZero() {
					t.Fatalf("%s: record %v, screen %v", task, recAt, scrAt)
				}
				t.Logf("RECORD-FIRST %s %.16s: screen - record = %+d ms", a.Name(), task, scrAt.Sub(recAt).Milliseconds())
				if !waitAt.IsZero() {
					t.Logf("RECORD-FIRST %s %.16s: screen - session waiting = %+d ms", a.Name(), task, scrAt.Sub(waitAt).Milliseconds())
				}
				e.Respawn()
			}
		})
	}
}
