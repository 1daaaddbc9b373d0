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

// CandidateEnv names a release (kind@version) with no profile of its own
// whose captured screens (under CandidateDirEnv) a profile derived from its
// nearest neighbour must read as its fixtures say (make profile-new).
const (
	CandidateEnv    = "AKK_PROFILE_CANDIDATE"
	CandidateDirEnv = "AKK_PROFILE_CANDIDATE_DIR"
)

// CheckCandidate reads every screen captured under root (a kind's folder
// of versions, holding the candidate's) with p (the
// nearest profile, taking the candidate's version): each must classify as
// captured, and each permission prompt must be one p's grammar answers.
// Every difference is an error naming its case.
func CheckCandidate(t *testing.T, p agent.Profile, root string) {
	t.Helper()
	cases, err := Read(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("no screens under %s", root)
	}
	for _, c := range cases {
		r := p.Classify(c.Capture())
		if r.State != c.Expected {
			t.Errorf("DIFFERS %s: read as %s (%s), captured as %s", c.Name, r.State, r.Reason, c.Expected)
			continue
		}
		if c.ComposerEmpty != nil && r.ComposerEmpty != *c.ComposerEmpty {
			t.Errorf("DIFFERS %s: composer empty %v, captured %v", c.Name, r.ComposerEmpty, *c.ComposerEmpty)
		}
		if ap, ok := p.(agent.ApprovalProfile); ok && c.Expected == domain.ScreenAwaitingApproval {
			g, ok := ap.ApprovalGrammar()
			if rd := g.Read(c.Capture()); !ok || !rd.Found || !rd.Answerable {
				t.Errorf("DIFFERS %s: the permission prompt is not one the grammar answers (%s)", c.Name, rd.Reason)
			}
		}
		t.Logf("same %s: %s", c.Name, r.State)
	}
}

// CheckCandidateOf runs CheckCandidate when CandidateEnv names a release of
// d's kind: the nearest profile d has, as that version (as), on the
// release's screens under CandidateDirEnv. It skips otherwise.
func CheckCandidateOf(t *testing.T, d agent.Driver, as func(agent.Profile, string) agent.Profile) {
	t.Helper()
	one := os.Getenv(CandidateEnv)
	k, version, _ := strings.Cut(one, "@")
	if one == "" || domain.AgentKind(k) != d.Kind() {
		t.Skip("make profile-new sets " + CandidateEnv)
	}
	reg, err := agent.RegistryOf([]agent.Driver{d})
	if err != nil {
		t.Fatal(err)
	}
	near, exact, ok := reg.Resolve(d.Kind(), version)
	if !ok {
		t.Fatalf("no profile near %s", one)
	}
	if exact {
		t.Fatalf("%s has a profile already", one)
	}
	t.Logf("NEAREST %s", near.Agent().Version)
	CheckCandidate(t, as(near, version), filepath.Join(os.Getenv(CandidateDirEnv), k))
}
