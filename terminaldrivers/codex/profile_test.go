package codex

import (
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agent/screencases"
	"akk/terminaldrivers/screen"
)

// Screens captured from the real TUIs: by hand into testdata/screens, and by
// the harness into ../testdata/screens/codex.
func TestProfilesOnCapturedScreens(t *testing.T) {
	screencases.Check(t, Driver{}, "testdata/screens", "../testdata/screens/codex")
}

func TestProfilesRegister(t *testing.T) {
	r, err := agent.NewRegistry(Driver{}.Profiles()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"0.155.1", "0.169.0"} {
		if p, ok := r.Lookup(domain.AgentCodex, v); !ok || p.Agent().Profile != "codex-"+v {
			t.Errorf("no profile for Codex %s", v)
		}
	}
	if _, ok := r.Lookup(domain.AgentCodex, "0.168.0"); ok { // a release with no profile
		t.Error("an unpinned version has a profile")
	}
}

// Synthetic screens for shapes the captures do not show, built from rows the
// real TUI draws. "\x1b[2m" is the dim placeholder style.
func TestClassifyFailsClosed(t *testing.T) {
	const st = "  gpt-5 high · ~/proj"
	cases := []struct {
		name  string
		rows  []string
		state domain.ScreenState
		empty bool
	}{
		{"blank", []string{""}, domain.ScreenUnknown, false},
		{"composer before the session is ready", []string{"› \x1b[2mAsk Codex to do anything\x1b[0m", ""}, domain.ScreenUnknown, false},
		{"idle placeholder", []string{"› \x1b[2mExplain this codebase\x1b[0m", "", st}, domain.ScreenIdle, true},
		{"typed text reading like a placeholder", []string{"› Ask Codex to do anything", "", st}, domain.ScreenIdle, false},
		{"multi-line draft", []string{"› first", "  second", "", st}, domain.ScreenIdle, false},
		{"bare composer", []string{"›", "", st}, domain.ScreenIdle, true},
		{"working", []string{"• Working (3s • esc to interrupt)", "", "› \x1b[2mAsk\x1b[0m", "", st}, domain.ScreenWorking, true},
		{"status line alone", []string{"some output", "", st}, domain.ScreenUnknown, false},
		{"approval hint without question", []string{"› 1. Yes, proceed (y)", "  Press enter to confirm or esc to cancel"}, domain.ScreenUnknown, false},
		{"approval question without options", []string{"  Would you like to run the following command?", "  $ rm -rf x", "  Press enter to confirm or esc to cancel"}, domain.ScreenUnknown, false},
		{"approval of a long command", append(append([]string{"  Would you like to run the following command?", "  Reason: build"}, strings.Split(strings.Repeat("  $ make step\n", 40), "\n")...), "› 1. Yes, proceed (y)", "  2. No, and tell Codex what to do differently (esc)", "  Press enter to confirm or esc to cancel"), domain.ScreenAwaitingApproval, false},
		{"questionnaire", []string{"  Question 1/1 (1 unanswered)", "  Which color?", "› 1. Red  warm", "  2. Blue  cool", "  tab to add notes | enter to submit answer | esc to interrupt"}, domain.ScreenAwaitingInteraction, false},
		{"trust dialog", []string{"  Do you trust the contents of this directory?", "› 1. Yes, continue", "  2. No, quit"}, domain.ScreenStartupDialog, false},
	}
	for _, c := range cases {
		r := V0_169_0.Classify(screen.Parse(strings.Join(c.rows, "\n") + "\n"))
		if c.state == domain.ScreenIdle {
			// The same screen under a spinning pane title: a reply streams.
			sc := screen.Parse(strings.Join(c.rows, "\n") + "\n")
			sc.Title = "⠙ Fix the tests | proj"
			if got := V0_169_0.Classify(sc); got.State != domain.ScreenWorking || got.ComposerEmpty != c.empty {
				t.Errorf("%s under a spinning title: %s empty=%v", c.name, got.State, got.ComposerEmpty)
			}
		}
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
