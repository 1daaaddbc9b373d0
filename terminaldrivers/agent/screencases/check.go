package screencases

import (
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// Check classifies every case under roots with the driver's
// profile for the case's version and fails t on any mismatch. Each profile
// must have cases, among them an idle and an awaiting_approval one.
func Check(t *testing.T, d agent.Driver, roots ...string) {
	t.Helper()
	seen := map[string]map[domain.ScreenState]bool{}
	for _, root := range roots {
		cases, err := Read(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(c.Version+"/"+c.Name, func(t *testing.T) {
				var profile agent.Profile
				for _, p := range d.Profiles() {
					if p.Agent().Version == c.Version {
						profile = p
					}
				}
				if profile == nil {
					t.Fatalf("%s: no %s profile for version %s", c.Dir, d.Kind(), c.Version)
				}
				// The two files are two captures taken one after the other, so
				// an animation at the top may differ; the bottom rows, which the
				// profiles read, must agree.
				if got, want := bottomRows(screen.Strip(c.ANSI), 12), bottomRows(c.Plain, 12); got != want {
					t.Fatalf("%s: screen.ansi stripped differs from screen.txt at the bottom:\n%s\n---\n%s", c.Dir, got, want)
				}
				r := profile.Classify(c.Capture())
				if r.State != c.Expected {
					t.Errorf("%s: state %s (%s), want %s", c.Dir, r.State, r.Reason, c.Expected)
				}
				if c.ComposerEmpty != nil && r.ComposerEmpty != *c.ComposerEmpty {
					t.Errorf("%s: composer empty %v, want %v", c.Dir, r.ComposerEmpty, *c.ComposerEmpty)
				}
				if r.State != domain.ScreenUnknown && len(r.Region.Lines) == 0 {
					t.Errorf("%s: %s read from no region", c.Dir, r.State)
				}
				if seen[c.Version] == nil {
					seen[c.Version] = map[domain.ScreenState]bool{}
				}
				seen[c.Version][c.Expected] = true
			})
		}
	}
	for _, p := range d.Profiles() {
		v := p.Agent().Version
		for _, s := range []domain.ScreenState{domain.ScreenIdle, domain.ScreenAwaitingApproval} {
			if !seen[v][s] {
				t.Errorf("profile %s has no %s screen case", p.Agent().Profile, s)
			}
		}
	}
}

// bottomRows returns the last n rows of a capture that are not blank at
// the end, trailing spaces trimmed.
func bottomRows(s string, n int) string {
	rows := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	for len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1]
	}
	if len(rows) > n {
		rows = rows[len(rows)-n:]
	}
	return strings.Join(rows, "\n")
}
