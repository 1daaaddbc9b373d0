package agentpane

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agent/screencases"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
)

// fakeTmux plays screens: capture-pane returns the current one, and each
// send-keys is recorded and may switch to the next screen.
type fakeTmux struct {
	mu     sync.Mutex
	screen string
	keys   []string
	// after maps a key to the screen it leads to; none: the screen stays.
	after func(key string, n int) (string, bool)
}

func (f *fakeTmux) Run(_ context.Context, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := slices.Index(args, "capture-pane")
	j := slices.Index(args, "send-keys")
	switch {
	case i >= 0:
		return []byte(f.screen + "\n" + "title\n"), nil
	case j >= 0:
		for _, k := range args[j+3:] {
			f.keys = append(f.keys, k)
			if f.after != nil {
				if s, ok := f.after(k, len(f.keys)); ok {
					f.screen = s
				}
			}
		}
		return nil, nil
	}
	return nil, errors.New("unexpected tmux call")
}

func (f *fakeTmux) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.keys)
}

// permissionCase is a captured permission prompt of one pinned version.
type permissionCase struct {
	profile agent.ApprovalProfile
	screen  string // plain capture
	ansi    string // the same, with escapes
	command string
	tool    string
	yes, no string // the digit of each decision's row
}

func permissionCases(t *testing.T) []permissionCase {
	t.Helper()
	var out []permissionCase
	add := func(root, name string, p agent.ApprovalProfile, tool, yes, no string) {
		cases, err := screencases.Read(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if c.Version == p.Agent().Version && c.Name == name {
				out = append(out, permissionCase{profile: p, screen: c.Plain, ansi: c.ANSI, command: "touch akk-approval-probe && echo akk-bash-ran", tool: tool, yes: yes, no: no})
				return
			}
		}
		t.Fatalf("no %s fixture for %s", name, p.Agent().Profile)
	}
	add("../testdata/screens/claude", "permission_bash", claude.V2_1_267, "Bash", "1", "4")
	add("../testdata/screens/claude", "permission_bash", claude.V2_1_328, "Bash", "1", "4")
	add("../testdata/screens/codex", "permission_command", codex.V0_155_1, "exec_command", "1", "3")
	add("../testdata/screens/codex", "permission_command", codex.V0_169_0, "exec_command", "1", "3")
	return out
}

func terminalOf(p agent.Profile) domain.Terminal {
	return domain.Terminal{
		ID:      "term_test",
		Pane:    domain.PaneLocator{Socket: "/run/test/tmux", PaneID: "%3"},
		Process: domain.Incarnation{BootID: "boot", PID: 4242, StartTicks: 99},
		Agent:   p.Agent(),
	}
}

func newApprovals(t *testing.T, f *fakeTmux) *Adapter {
	t.Helper()
	return newTestAdapter(t, f, Config{VerifyWithin: 300 * time.Millisecond, AnswerPollEvery: time.Millisecond})
}

func prompt(t *testing.T, p agent.ApprovalProfile, screen string) domain.ApprovalPrompt {
	t.Helper()
	a := newApprovals(t, &fakeTmux{screen: screen})
	pr, err := a.Prompt(context.Background(), terminalOf(p))
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func TestPromptOnCapturedScreens(t *testing.T) {
	for _, c := range permissionCases(t) {
		t.Run(c.profile.Agent().Profile, func(t *testing.T) {
			pr := prompt(t, c.profile, c.ansi)
			if !pr.Present || !pr.Answerable || pr.Reason != "" {
				t.Fatalf("prompt %+v", pr)
			}
			if plain := prompt(t, c.profile, c.screen); plain.Fingerprint != pr.Fingerprint {
				t.Errorf("the plain capture's fingerprint differs from the one with escapes")
			}
			// Claude Code 2.1.267 draws the tool's description under the
			// command in the same indent, so the command is never proven
			// whole there.
			whole := c.command
			if c.profile.Agent().Version == "2.1.267" {
				whole = ""
			}
			if pr.Kind != "shell_command" || pr.Tool != c.tool || !strings.Contains(pr.CommandExcerpt, c.command) || pr.Command != whole {
				t.Errorf("kind %q tool %q excerpt %q", pr.Kind, pr.Tool, pr.CommandExcerpt)
			}
			if !slices.Equal(pr.Decisions, []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject}) {
				t.Errorf("decisions %v", pr.Decisions)
			}
			if !strings.HasPrefix(pr.Fingerprint, "sha256:") {
				t.Errorf("fingerprint %q", pr.Fingerprint)
			}
			for _, bad := range []string{"Tip:", "Do you want", "Yes", "Environment", "Reason"} {
				if strings.Contains(pr.CommandExcerpt, bad) {
					t.Errorf("excerpt %q holds %q", pr.CommandExcerpt, bad)
				}
			}
		})
	}
}

// A long command in a narrow pane (captured by hand into testdata): the
// command and the persistent options wrap, the prompt is still answerable
// and the excerpt holds the whole command.
func TestWrappedPromptOnCapturedScreens(t *testing.T) {
	const command = "touch akk-a-very-long-file-name-that-goes-on-and-on-and-on-for-a-while-longer && echo akk-approved-1 with some more words to wrap the line"
	squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
	n := 0
	for _, d := range []agent.Driver{claude.Driver{}, codex.Driver{}} {
		cases, err := screencases.Read("testdata/screens/" + string(d.Kind()))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			for _, p := range d.Profiles() {
				if p.Agent().Version != c.Version {
					continue
				}
				n++
				pr := prompt(t, p.(agent.ApprovalProfile), c.ANSI)
				if !pr.Answerable || squash(pr.CommandExcerpt) != squash(command) || pr.Command != "" {
					t.Errorf("%s: %+v", c.Dir, pr)
				}
				if got := p.Classify(c.Capture()).State; got != c.Expected {
					t.Errorf("%s: the profile classifies it %s", c.Dir, got)
				}
			}
		}
	}
	if n != 4 {
		t.Errorf("%d wrapped prompts, want one per pinned version", n)
	}
}

// Every captured screen that is not a permission prompt has none.
func TestNoPromptOnOtherScreens(t *testing.T) {
	for _, kind := range []struct {
		root     string
		profiles []agent.Profile
	}{
		{"../testdata/screens/claude", claude.Driver{}.Profiles()},
		{"../testdata/screens/codex", codex.Driver{}.Profiles()},
	} {
		cases, err := screencases.Read(kind.root)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			if c.Expected == domain.ScreenAwaitingApproval {
				continue
			}
			for _, p := range kind.profiles {
				if p.Agent().Version != c.Version {
					continue
				}
				if pr := prompt(t, p.(agent.ApprovalProfile), c.ANSI); pr.Present {
					t.Errorf("%s: a prompt on a %s screen: %+v", c.Dir, c.Expected, pr)
				}
			}
		}
	}
}

// lines edits a plain screen row by row.
func lines(screen string, edit func([]string) []string) string {
	return strings.Join(edit(strings.Split(screen, "\n")), "\n")
}

func rowWith(rows []string, s string) int {
	for i, r := range rows {
		if strings.Contains(r, s) {
			return i
		}
	}
	return -1
}

func TestFingerprintFencesTheRegionOnly(t *testing.T) {
	for _, c := range permissionCases(t) {
		t.Run(c.profile.Agent().Profile, func(t *testing.T) {
			base := prompt(t, c.profile, c.screen).Fingerprint
			same := map[string]string{
				"a row above changes": lines(c.screen, func(r []string) []string {
					r[rowWith(r, "I need to run a command.")] = "● Some other output"
					return r
				}),
				"output scrolls up": lines(c.screen, func(r []string) []string {
					at := rowWith(r, "I need to run a command.") + 1
					out := append(slices.Clone(r[1:at]), "more output")
					return append(out, r[at:]...)
				}),
			}
			for what, s := range same {
				if got := prompt(t, c.profile, s); got.Fingerprint != base || !got.Answerable {
					t.Errorf("%s: fingerprint changed (%+v)", what, got)
				}
			}
			changed := map[string]string{
				"the command": strings.Replace(c.screen, "touch akk-approval-probe && echo akk-bash-ran", "touch akk-approval-probe && echo akk-bash-rax", -1),
				"the highlight": lines(c.screen, func(r []string) []string {
					i := rowWith(r, "1. Yes")
					r[i] = strings.Replace(strings.Replace(r[i], "❯", " ", 1), "›", " ", 1)
					j := rowWith(r, "2. Yes, and")
					r[j] = strings.Replace(r[j], "  2.", "❯ 2.", 1)
					if c.tool == "exec_command" {
						r[j] = "› " + strings.TrimPrefix(r[j], "  ")
					}
					return r
				}),
			}
			for what, s := range changed {
				if got := prompt(t, c.profile, s); got.Fingerprint == base || !got.Present {
					t.Errorf("%s changed but the fingerprint did not (%+v)", what, got)
				}
			}
			other := terminalOf(c.profile)
			other.Process.StartTicks++
			a := newApprovals(t, &fakeTmux{screen: c.screen})
			if got, _ := a.Prompt(context.Background(), other); got.Fingerprint == base {
				t.Error("another process incarnation has the same fingerprint")
			}
		})
	}
}

func TestUnanswerableShapes(t *testing.T) {
	cs := permissionCases(t)
	claudeScreen, codexScreen := cs[1].screen, cs[3].screen
	tests := []struct {
		name    string
		profile agent.ApprovalProfile
		screen  string
	}{
		{"claude file edit", claude.V2_1_328, strings.Replace(strings.Replace(claudeScreen, " Bash command", " Edit file", 1), "Do you want to proceed?", "Do you want to make this edit to a.go?", 1)},
		{"claude unknown option", claude.V2_1_328, strings.Replace(claudeScreen, "3. Yes, and switch to auto mode", "3. Yes, and something new", 1)},
		{"claude no last row", claude.V2_1_328, strings.Replace(claudeScreen, "4. No", "4. Nope", 1)},
		{"claude title away from the frame", claude.V2_1_328, lines(claudeScreen, func(r []string) []string {
			i := rowWith(r, " Bash command")
			return append(r[:i:i], append([]string{""}, r[i:len(r)-1]...)...)
		})},
		{"codex edits", codex.V0_169_0, strings.Replace(codexScreen, "Would you like to run the following command?", "Would you like to make the following edits?", 1)},
		{"codex network", codex.V0_169_0, strings.Replace(codexScreen, "Would you like to run the following command?", "Do you want to approve network access to \"example.com\"?", 1)},
		{"codex two highlights", codex.V0_169_0, strings.Replace(codexScreen, "  3. No, and tell", "› 3. No, and tell", 1)},
		{"codex missing row", codex.V0_169_0, lines(codexScreen, func(r []string) []string {
			i := rowWith(r, "2. Yes, and")
			return append(r[:i:i], r[i+1:]...)
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pr := prompt(t, tc.profile, tc.screen)
			if !pr.Present || pr.Answerable || pr.Reason == "" || len(pr.Decisions) != 0 || pr.CommandExcerpt != "" || pr.Fingerprint == "" {
				t.Fatalf("prompt %+v", pr)
			}
			f := &fakeTmux{screen: tc.screen}
			stage, err := newApprovals(t, f).Answer(context.Background(), terminalOf(tc.profile), pr.Fingerprint, domain.ApproveOnce)
			if stage != domain.AnswerNothing || !errors.Is(err, domain.ErrDecisionUnavailable) || len(f.sent()) != 0 {
				t.Errorf("answer: %s, %v, keys %q", stage, err, f.sent())
			}
		})
	}
}

func TestExcerptRedactedAndBounded(t *testing.T) {
	secret := "sk-ant-api03-" + strings.Repeat("A", 40)
	if got := CommandExcerpt([]string{"curl -H 'x-api-key: " + secret + "'"}); strings.Contains(got, "AAAAAAAA") {
		t.Errorf("secret in %q", got)
	}
	// Cut in two by the terminal's wrap.
	if got := CommandExcerpt([]string{"export K=sk-ant-api03-AAAA", strings.Repeat("A", 30)}); strings.Contains(got, "AAAAAAAAAAAA") {
		t.Errorf("wrapped secret in %q", got)
	}
	if got := CommandExcerpt([]string{strings.Repeat("x", 1000)}); len([]rune(got)) != MaxExcerpt {
		t.Errorf("excerpt of %d runes", len([]rune(got)))
	}
}

func TestAnswer(t *testing.T) {
	idle := "────\n❯ \n────\n"
	for _, c := range permissionCases(t) {
		t.Run(c.profile.Agent().Profile, func(t *testing.T) {
			term := terminalOf(c.profile)
			fp := prompt(t, c.profile, c.screen).Fingerprint
			for _, d := range []struct {
				decision domain.ApprovalDecision
				key      string
			}{{domain.ApproveOnce, c.yes}, {domain.Reject, c.no}} {
				f := &fakeTmux{screen: c.screen, after: func(string, int) (string, bool) { return idle, true }}
				stage, err := newApprovals(t, f).Answer(context.Background(), term, fp, d.decision)
				if stage != domain.AnswerVerified || err != nil || !slices.Equal(f.sent(), []string{d.key}) {
					t.Errorf("%s: %s, %v, keys %q", d.decision, stage, err, f.sent())
				}
			}

			f := &fakeTmux{screen: c.screen}
			stage, err := newApprovals(t, f).Answer(context.Background(), term, fp+"x", domain.ApproveOnce)
			if stage != domain.AnswerNothing || !errors.Is(err, domain.ErrPromptChanged) || len(f.sent()) != 0 {
				t.Errorf("changed fingerprint: %s, %v, keys %q", stage, err, f.sent())
			}
			f = &fakeTmux{screen: idle}
			if stage, err := newApprovals(t, f).Answer(context.Background(), term, fp, domain.Reject); stage != domain.AnswerNothing || !errors.Is(err, domain.ErrPromptChanged) || len(f.sent()) != 0 {
				t.Errorf("no prompt: %s, %v, keys %q", stage, err, f.sent())
			}
			f = &fakeTmux{screen: c.screen}
			if stage, err := newApprovals(t, f).Answer(context.Background(), term, fp, "approve_always"); stage != domain.AnswerNothing || !errors.Is(err, domain.ErrDecisionUnavailable) || len(f.sent()) != 0 {
				t.Errorf("persistent decision: %s, %v, keys %q", stage, err, f.sent())
			}
			// The key went but the prompt stays: sent, not verified, never resent.
			f = &fakeTmux{screen: c.screen}
			if stage, err := newApprovals(t, f).Answer(context.Background(), term, fp, domain.ApproveOnce); stage != domain.AnswerSent || err == nil || len(f.sent()) != 1 {
				t.Errorf("prompt stays: %s, %v, keys %q", stage, err, f.sent())
			}
		})
	}
}

// A person moved the highlight onto a persistent row: Claude Code then
// drops "Tab to amend" from the footer (seen in TestE2EApproval). The
// prompt is still answerable, by the rows' own digits.
func TestHighlightOnPersistentRow(t *testing.T) {
	for _, c := range permissionCases(t)[:2] {
		t.Run(c.profile.Agent().Profile, func(t *testing.T) {
			moved := lines(c.screen, func(r []string) []string {
				i, j := rowWith(r, "❯ 1. Yes"), rowWith(r, "  2. Yes, and always")
				r[i] = strings.Replace(r[i], "❯", " ", 1)
				r[j] = strings.Replace(r[j], "  2.", "❯ 2.", 1)
				f := rowWith(r, "Esc to cancel · Tab to amend")
				r[f] = " Esc to cancel"
				return r
			})
			p := prompt(t, c.profile, moved)
			if !p.Answerable || p.Fingerprint == prompt(t, c.profile, c.screen).Fingerprint {
				t.Fatalf("prompt %+v", p)
			}
			f := &fakeTmux{screen: moved, after: func(string, int) (string, bool) { return "", true }}
			stage, err := newApprovals(t, f).Answer(context.Background(), terminalOf(c.profile), p.Fingerprint, domain.ApproveOnce)
			if stage != domain.AnswerVerified || err != nil || !slices.Equal(f.sent(), []string{"1"}) {
				t.Errorf("%s, %v, keys %q", stage, err, f.sent())
			}
		})
	}
}

// navigating is the Codex grammar with a plan that moves the highlight.
type navigating struct{ codex.Profile }

func (p navigating) ApprovalGrammar() (agent.ApprovalGrammar, bool) {
	g, ok := p.Profile.ApprovalGrammar()
	g.Shapes = slices.Clone(g.Shapes)
	g.Shapes[0].Keys = agent.KeyNavigate
	return g, ok
}

type navDriver struct{ codex.Driver }

func (navDriver) Profiles() []agent.Profile { return []agent.Profile{navigating{codex.V0_169_0}} }

func TestNavigatingPlan(t *testing.T) {
	base := permissionCases(t)[3].screen
	moved := func(to int) string {
		return lines(base, func(r []string) []string {
			for i, l := range r {
				if strings.HasPrefix(l, "› ") && strings.Contains(l, ". ") {
					r[i] = "  " + strings.TrimPrefix(l, "› ")
				}
			}
			i := rowWith(r, []string{"1. Yes", "2. Yes, and", "3. No, and"}[to])
			r[i] = "› " + strings.TrimPrefix(r[i], "  ")
			return r
		})
	}
	idle := "› Ask Codex to do anything\n"
	p := navigating{codex.V0_169_0}
	term := terminalOf(p)
	fp := prompt(t, p, base).Fingerprint
	run := func(f *fakeTmux) (domain.AnswerStage, error) {
		a, err := newTestAdapter(t, f, Config{VerifyWithin: 200 * time.Millisecond, AnswerPollEvery: time.Millisecond}, navDriver{}), error(nil)
		if err != nil {
			t.Fatal(err)
		}
		return a.Answer(context.Background(), term, fp, domain.Reject)
	}

	f := &fakeTmux{screen: base, after: func(k string, n int) (string, bool) {
		if k == "Enter" {
			return idle, true
		}
		return moved(n), true
	}}
	if stage, err := run(f); stage != domain.AnswerVerified || err != nil || !slices.Equal(f.sent(), []string{"Down", "Down", "Enter"}) {
		t.Errorf("reject: %s, %v, keys %q", stage, err, f.sent())
	}
	// The second move lands elsewhere: stop before Enter.
	f = &fakeTmux{screen: base, after: func(k string, n int) (string, bool) { return moved(n % 2), true }}
	if stage, err := run(f); stage != domain.AnswerSent || err == nil || !slices.Equal(f.sent(), []string{"Down", "Down"}) {
		t.Errorf("surprise: %s, %v, keys %q", stage, err, f.sent())
	}
	// Something else changes with the move: stop.
	f = &fakeTmux{screen: base, after: func(k string, n int) (string, bool) {
		return strings.Replace(moved(min(n, 2)), "$ touch akk-approval-probe", "$ touch akk-approval-probx", 1), true
	}}
	if stage, err := run(f); stage != domain.AnswerSent || err == nil || !slices.Equal(f.sent(), []string{"Down"}) {
		t.Errorf("changed prompt: %s, %v, keys %q", stage, err, f.sent())
	}
}
