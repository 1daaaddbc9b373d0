package agenttest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/screen"
)

// TestStandinRecordings checks what the scale stand-ins replay against the
// profiles of the versions they were recorded with: the working, asking
// and idle screens read as such; the asked line is one tool call started
// in the recorded working turn, and the result line ends that call.
func TestStandinRecordings(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := agent.RegistryOf([]agent.Driver{claude.Driver{}, codex.Driver{}})
	if err != nil {
		t.Fatal(err)
	}
	parse := map[string]func([]byte) (agent.Entry, bool){KindClaude: claude.ParseTranscriptLine, KindCodex: codex.ParseRolloutLine}
	for _, kind := range []string{KindClaude, KindCodex} {
		recs, _ := filepath.Glob(filepath.Join(root, "terminaldrivers", "testdata", "standin", kind+"@*"))
		if len(recs) != 1 {
			t.Fatalf("%s recordings: %v, want one", kind, recs)
		}
		dir := recs[0]
		read := func(name string) []byte {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
		var m StandinMeta
		if err := json.Unmarshal(read("meta.json"), &m); err != nil {
			t.Fatal(err)
		}
		version := strings.TrimPrefix(m.Agent, kind+"@")
		prof, _, ok := reg.Resolve(domain.AgentKind(kind), version)
		if !ok {
			t.Fatalf("%s: no profile", m.Agent)
		}
		for name, want := range map[string]domain.ScreenState{"working.ansi": domain.ScreenWorking, "ask.ansi": domain.ScreenAwaitingApproval, "idle.ansi": domain.ScreenIdle} {
			if got := prof.Classify(screen.Parse(string(read(name)))); got.State != want {
				t.Errorf("%s %s: %s (%s), want %s", m.Agent, name, got.State, got.Reason, want)
			}
		}
		var turn string
		for _, l := range bytes.Split(read("start.jsonl"), []byte("\n")) {
			if e, ok := parse[kind](l); ok && e.Kind == agent.EntryUserPrompt && e.TurnID != "" {
				turn = e.TurnID
			}
		}
		if turn == "" {
			t.Errorf("%s start.jsonl: no prompt names its turn", m.Agent)
		}
		entries := func(name string) []agent.Entry {
			var out []agent.Entry
			for _, l := range bytes.Split(bytes.TrimSpace(read(name)), []byte("\n")) {
				if e, ok := parse[kind](l); ok {
					out = append(out, e)
				}
			}
			return out
		}
		ask, result := entries("ask.jsonl"), entries("result.jsonl")
		if len(ask) != 1 || ask[0].Kind != agent.EntryAction || ask[0].ActionStatus != agent.ActionInProgress || ask[0].TurnID != "" && ask[0].TurnID != turn {
			t.Errorf("%s ask.jsonl: %+v, want one tool call started in turn %s", m.Agent, ask, turn)
		}
		if len(result) != 1 || len(ask) != 1 || result[0].ActionID != ask[0].ActionID || result[0].ActionStatus != agent.ActionCompleted {
			t.Errorf("%s result.jsonl: %+v, want the end of %+v", m.Agent, result, ask)
		}
	}
}
