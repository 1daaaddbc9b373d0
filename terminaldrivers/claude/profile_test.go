package claude

import (
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agent/screencases"
	"akk/terminaldrivers/screen"
)

// Screens captured from the real TUIs: by hand into testdata/screens, and by
// the harness into ../testdata/screens/claude.
func TestProfilesOnCapturedScreens(t *testing.T) {
	screencases.Check(t, Driver{}, "testdata/screens", "../testdata/screens/claude")
}

// The questionnaire's region is the whole questionnaire, from its header
// down, though Claude Code draws a rule between its options.
func TestQuestionnaireRegion(t *testing.T) {
	cases, err := screencases.Read("testdata/screens")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range cases {
		if c.Expected != domain.ScreenAwaitingInteraction {
			continue
		}
		found = true
		r := V2_1_328.Classify(c.Capture())
		text := strings.Join(r.Region.Lines, "\n")
		if !strings.Contains(text, "☐ Color") || !strings.Contains(text, "1. Red") || !strings.Contains(text, "Enter to select") {
			t.Errorf("%s: region\n%s", c.Dir, text)
		}
	}
	if !found {
		t.Fatal("no questionnaire screen captured")
	}
}

func TestProfilesRegister(t *testing.T) {
	r, err := agent.NewRegistry(Driver{}.Profiles()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"2.1.267", "2.1.328"} {
		p, ok := r.Lookup(domain.AgentClaude, v)
		if !ok || p.Agent().Profile != "claude-"+v {
			t.Errorf("no profile for Claude Code %s", v)
		}
	}
	if _, ok := r.Lookup(domain.AgentClaude, "2.1.329"); ok { // a release with no profile (make profile-new may pin 2.1.330 and later)
		t.Error("an unpinned version has a profile")
	}
}

// Synthetic screens for shapes the captures do not show; each is built from
// rows the real TUI draws.
func TestClassifyFailsClosed(t *testing.T) {
	rule := strings.Repeat("─", 80)
	cases := []struct {
		name  string
		rows  []string
		state domain.ScreenState
		empty bool
	}{
		{"blank", []string{"", ""}, domain.ScreenUnknown, false},
		{"no rule", []string{"$ ls", "file"}, domain.ScreenUnknown, false},
		{"idle", []string{rule, "❯\u00a0", rule, "  ? for shortcuts"}, domain.ScreenIdle, true},
		{"dim suggestion", []string{rule, "❯\u00a0\x1b[2mTry \"fix lint errors\"\x1b[0m", rule, "  ? for shortcuts"}, domain.ScreenIdle, true},
		{"typed text with a dim completion", []string{rule, "❯ fix \x1b[2mlint errors\x1b[0m", rule, "  ? for shortcuts"}, domain.ScreenIdle, false},
		{"multi-line draft", []string{rule, "❯ first line", "  second line", rule, "  ? for shortcuts"}, domain.ScreenIdle, false},
		{"busy footer", []string{rule, "❯ ", rule, "  ⏸ manual mode on · esc to interrupt"}, domain.ScreenWorking, true},
		{"spinner", []string{"✶ Newspapering… (3s · ↓ 12 tokens)", "", rule, "❯ ", rule, ""}, domain.ScreenWorking, true},
		{"finished spinner row", []string{"✻ Churned for 0s · done 8:28 PM", rule, "❯ ", rule, ""}, domain.ScreenIdle, true},
		{"menu under composer", []string{rule, "❯ /", rule, "  /add-dir", "  /agents", "  /clear", "  /compact", "  /config"}, domain.ScreenUnknown, false},
		{"unknown dialog", []string{rule, " Something new", " ❯ 1. Go"}, domain.ScreenUnknown, false},
		{"question without options", []string{rule, " Do you want to proceed?", " Esc to cancel"}, domain.ScreenUnknown, false},
		{"questionnaire", []string{rule, " ☐ Color", " Which color?", " ❯ 1. Red", "   2. Blue", " Enter to select · ↑/↓ to navigate · Esc to cancel"}, domain.ScreenAwaitingInteraction, false},
		{"trust dialog", []string{rule, " Do you trust the files in this folder?", " ❯ 1. Yes, proceed", "   2. No, exit"}, domain.ScreenStartupDialog, false},
	}
	for _, c := range cases {
		r := V2_1_328.Classify(screen.Parse(strings.Join(c.rows, "\n") + "\n"))
		if r.State != c.state || r.ComposerEmpty != c.empty {
			t.Errorf("%s: %s empty=%v (%s), want %s empty=%v", c.name, r.State, r.ComposerEmpty, r.Reason, c.state, c.empty)
		}
	}
}

// TestProfileCandidate: make profile-new's check of a new release's
// captured screens with its nearest profile.
func TestProfileCandidate(t *testing.T) {
	screencases.CheckCandidateOf(t, Driver{}, func(p agent.Profile, v string) agent.Profile { return p.(Profile).As(v) })
}
