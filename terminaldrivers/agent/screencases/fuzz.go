package screencases

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// FuzzScreens reads arbitrary screens, seeded with every case under roots,
// with each profile's classifier, composer reader, permission-prompt and
// questionnaire grammars: nothing panics, and what a grammar calls an
// answerable prompt is a screen the classifier calls awaiting approval.
func FuzzScreens(f *testing.F, profiles []agent.Profile, roots ...string) {
	for _, root := range roots {
		cases, err := Read(root)
		if err != nil {
			f.Fatal(err)
		}
		for _, c := range cases {
			f.Add(c.ANSI)
		}
	}
	f.Fuzz(func(t *testing.T, ansi string) {
		c := screen.Parse(ansi)
		for _, p := range profiles {
			r := p.Classify(c)
			if tp, ok := p.(agent.TurnProfile); ok {
				_, _ = tp.ComposerText(c)
			}
			if ap, ok := p.(agent.ApprovalProfile); ok {
				if g, ok := ap.ApprovalGrammar(); ok {
					if a := g.Read(c); a.Answerable && r.State != domain.ScreenAwaitingApproval {
						t.Fatalf("%s: an answerable permission prompt on a screen classified %s", p.Agent().Profile, r.State)
					}
				}
			}
			if ip, ok := p.(agent.InteractionProfile); ok {
				if g, ok := ip.InteractionGrammar(); ok {
					_ = g.ReadStep(c)
				}
			}
		}
	})
}

// FuzzRecordLines parses arbitrary record lines, seeded with seed and every
// line of the files glob matches, with each parser: nothing panics.
func FuzzRecordLines(f *testing.F, seed []byte, glob string, parsers ...func([]byte) (agent.Entry, bool)) {
	f.Add(seed)
	matches, _ := filepath.Glob(glob)
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
		for _, parse := range parsers {
			_, _ = parse(line)
		}
	})
}
