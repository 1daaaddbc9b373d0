package claude

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agent/screencases"
	"akk/terminaldrivers/screen"
)

// seedScreens adds every captured screen of this agent to f's corpus.
func seedScreens(f *testing.F) {
	for _, root := range []string{"testdata/screens", "../testdata/screens/claude"} {
		cases, err := screencases.Read(root)
		if err != nil {
			f.Fatal(err)
		}
		for _, c := range cases {
			f.Add(c.ANSI)
		}
	}
}

// FuzzScreen reads arbitrary screens with every profile's classifier,
// composer reader, permission-prompt and questionnaire grammars: nothing
// panics, and what a grammar calls answerable is a screen the classifier
// calls awaiting.
func FuzzScreen(f *testing.F) {
	seedScreens(f)
	f.Fuzz(func(t *testing.T, ansi string) {
		c := screen.Parse(ansi)
		for _, p := range Profiles {
			r := p.Classify(c)
			_, _ = p.ComposerText(c)
			if g, ok := p.ApprovalGrammar(); ok {
				if a := g.Read(c); a.Answerable && r.State != domain.ScreenAwaitingApproval {
					t.Fatalf("%s: an answerable permission prompt on a screen classified %s", p.Version, r.State)
				}
			}
			if g, ok := p.InteractionGrammar(); ok {
				_ = g.ReadStep(c)
			}
		}
	})
}

// FuzzRecordLine parses arbitrary record lines: nothing panics.
func FuzzRecordLine(f *testing.F) {
	f.Add([]byte(`{"type":"assistant","message":{"role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"hi"}]}}`))
	matches, _ := filepath.Glob("../agentpane/testdata/records/claude@*/*.jsonl")
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f.Add([]byte(line))
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, parse := range []func([]byte) (agent.Entry, bool){ParseTranscriptLine, ParseTranscriptLineUnwrapping} {
			_, _ = parse(line)
		}
	})
}
