package agentpane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/screen"
)

// screens are the captured fixtures, ../testdata/screens/<kind>/<version>/<case>.
const screens = "../testdata/screens"

func fixture(t *testing.T, kind, version, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(screens, kind, version, name, "screen.ansi"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func profileOf(kind, version string) agent.InteractionProfile {
	for _, p := range append((claude.Driver{}).Profiles(), (codex.Driver{}).Profiles()...) {
		if a := p.Agent(); string(a.Kind) == kind && a.Version == version {
			return p.(agent.InteractionProfile)
		}
	}
	return claude.Profile{Version: version}
}

func grammar(t *testing.T, kind, version string) agent.InteractionGrammar {
	t.Helper()
	g, ok := profileOf(kind, version).InteractionGrammar()
	if !ok {
		t.Fatalf("no grammar for %s %s", kind, version)
	}
	return g
}

// versions are every profiled version, by kind.
var versions = func() map[string][]string {
	out := map[string][]string{}
	for _, p := range append((claude.Driver{}).Profiles(), (codex.Driver{}).Profiles()...) {
		a := p.Agent()
		out[string(a.Kind)] = append(out[string(a.Kind)], a.Version)
	}
	return out
}()

// Every questionnaire fixture reads as the step it shows.
func TestReadStepOnCapturedScreens(t *testing.T) {
	type want struct {
		found, answerable bool
		reason            string
		index, total      int
		header, prompt    string
		kind              string
		options           string // label/description of every row, "*" after the highlighted one
		editor            string
	}
	color := "Which color should the widget be?"
	claudeColors := "Red/warm|Blue/cool|Type something./|Chat about this/"
	cases := map[string]want{
		"claude/question_single":       {true, true, "", 1, 1, "Color", color, domain.SingleSelect, "Red/warm*|Blue/cool|Type something./|Chat about this/", ""},
		"claude/question_multi":        {true, true, "", 1, 3, "Color", color, domain.SingleSelect, "Red/warm*|Blue/cool|Type something./|Chat about this/", ""},
		"claude/question_free_text":    {true, false, "a free-text editor is open: a person may be typing", 1, 1, "Color", color, domain.SingleSelect, strings.Replace(claudeColors, "Type something./", "Type something./*", 1), "my own words"},
		"claude/question_multi_select": {true, true, "", 1, 2, "Color", color, domain.MultiSelect, "Red/warm*|Blue/cool|Type something/|Chat about this/", ""},
		"claude/question_review":       {true, true, "", 3, 3, "Submit", "", domain.Confirmation, "Submit answers/*|Cancel/", ""},
		"codex/question_plan":          {true, true, "", 1, 1, "", color, domain.SingleSelect, "Red/warm*|Blue/cool|None of the above/", ""},
		"codex/question_multi":         {true, true, "", 1, 2, "", color, domain.SingleSelect, "Red/warm*|Blue/cool|None of the above/", ""},
		"codex/question_multi_last":    {true, true, "", 2, 2, "", "Which size should the widget be?", domain.SingleSelect, "Small/fits a pocket*|Large/fills a desk|None of the above/", ""},
		"codex/question_notes":         {true, false, "a notes editor is open: a person may be typing", 1, 1, "", color, domain.SingleSelect, "Red/warm*|Blue/cool|None of the above/", "some notes"},
	}
	for kind, vs := range versions {
		for _, v := range vs {
			g := grammar(t, kind, v)
			dirs, err := os.ReadDir(filepath.Join(screens, kind, v))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range dirs {
				name := kind + "/" + d.Name()
				r := g.ReadStep(screen.Parse(fixture(t, kind, v, d.Name())))
				w, ok := cases[name]
				if !ok {
					if r.Found {
						t.Errorf("%s %s: a step on a screen without one: %+v", name, v, r)
					}
					continue
				}
				var opts []string
				for i, o := range r.Options {
					s := o.Label + "/" + o.Description
					if kind == "codex" && o.TakesText {
						s = o.Label + "/" // its hint differs by version
					}
					if i == r.Cursor {
						s += "*"
					}
					opts = append(opts, s)
				}
				prompt := w.prompt
				if name == "claude/question_review" {
					// A version that draws a question under the review title
					// shows it; the others repeat the title.
					prompt = g.(claude.QuestionGrammar).ReviewQuestion
					if prompt == "" {
						prompt = g.(claude.QuestionGrammar).ReviewTitle
					}
				}
				if r.Found != w.found || r.Answerable != w.answerable || r.Reason != w.reason || r.Index != w.index || r.Total != w.total ||
					r.Header != w.header || r.Prompt != prompt || r.ResponseKind != w.kind || strings.Join(opts, "|") != w.options || r.EditorText != w.editor {
					t.Errorf("%s %s:\n got %+v\n options %s", name, v, r, strings.Join(opts, "|"))
				}
			}
		}
	}
}

// The projection offers only what AKK may choose: never "Chat about this"
// nor "Cancel"; the free-text option takes text, within the row's width.
func TestProjection(t *testing.T) {
	term := terminal("claude", "2.1.328")
	prof := profileOf("claude", "2.1.328")
	g := grammar(t, "claude", "2.1.328")
	s, _ := projectStep(term, prof, g, screen.Parse(fixture(t, "claude", "2.1.328", "question_single")))
	if !s.Present || !s.Answerable || s.Kind != "questionnaire" || len(s.Questions) != 1 || s.FreeTextLimit != 120-5-1 {
		t.Fatalf("step %+v", s)
	}
	q := s.Questions[0]
	if q.Header != "Color" || !q.Required || len(q.Options) != 3 || q.Options[2].Label != "Type something." || !q.Options[2].TakesText || q.Options[0].TakesText {
		t.Errorf("question %+v", q)
	}
	s, _ = projectStep(term, prof, g, screen.Parse(fixture(t, "claude", "2.1.328", "question_review")))
	if len(s.Questions) != 1 || len(s.Questions[0].Options) != 1 || s.Questions[0].Options[0].Label != "Submit answers" || s.FreeTextLimit != 0 {
		t.Errorf("review %+v", s)
	}
	// Keys are private handles, distinct per option.
	seen := map[string]bool{}
	for _, o := range q.Options {
		if o.Key == "" || seen[o.Key] || o.Key == o.Label {
			t.Errorf("option key %q", o.Key)
		}
		seen[o.Key] = true
	}
	// An idle screen has no step.
	if s, _ := projectStep(term, prof, g, screen.Parse(fixture(t, "claude", "2.1.328", "idle"))); s.Present {
		t.Errorf("idle: %+v", s)
	}
}

func terminal(kind, version string) domain.Terminal {
	return domain.Terminal{
		ID: "term_x", Provider: domain.ProviderTmux, Width: 120, Height: 40,
		Pane:    domain.PaneLocator{Socket: "/s", PaneID: "%1"},
		Agent:   profileOf(kind, version).Agent(),
		Process: domain.Incarnation{BootID: "b", PID: 42, StartTicks: 7},
	}
}

// The fingerprint covers the step and the process, not the conversation
// above it.
func TestFingerprint(t *testing.T) {
	for kind, vs := range versions {
		for _, v := range vs {
			name := map[string]string{"claude": "question_single", "codex": "question_plan"}[kind]
			ansi := fixture(t, kind, v, name)
			term, prof, g := terminal(kind, v), profileOf(kind, v), grammar(t, kind, v)
			fp := func(ansi string, term domain.Terminal) string {
				s, _ := projectStep(term, prof, g, screen.Parse(ansi))
				return s.Fingerprint
			}
			base := fp(ansi, term)
			rows := strings.Split(ansi, "\n")
			rows[2] = "something else scrolled by"
			if got := fp(strings.Join(rows, "\n"), term); got != base {
				t.Errorf("%s %s: a row above the step changed the fingerprint", kind, v)
			}
			if got := fp(strings.Replace(ansi, "Blue", "Bleu", 1), term); got == base || got == "" {
				t.Errorf("%s %s: a changed option kept the fingerprint", kind, v)
			}
			other := term
			other.Process.PID++
			if fp(ansi, other) == base {
				t.Errorf("%s %s: another process has the same fingerprint", kind, v)
			}
		}
	}
}

// Shapes the grammars do not know are refused: present (the classifier
// sees a questionnaire) but not answerable, or not a step at all.
func TestRefusals(t *testing.T) {
	cases := []struct {
		kind, version, fixture, old, new string
		reason                           string
	}{
		{"claude", "2.1.328", "question_single", "2. Blue", "5. Blue", "options are not numbered 1 to 4 in order"},
		{"claude", "2.1.328", "question_single", "Type something.", "Type anything.", `the free-text option is not "Type something."`},
		{"claude", "2.1.328", "question_single", "Chat about this", "Talk about it", `the options do not end with a rule and "Chat about this"`},
		{"claude", "2.1.328", "question_single", "Which color should the widget be?", "What is your password?", "a secret is answered by a person"},
		{"claude", "2.1.267", "question_review", "→ Small", "Small", "an unexpected row in the review"},
		{"codex", "0.169.0", "question_plan", "None of the above", "Something else", `the options do not end with "None of the above"`},
		{"codex", "0.169.0", "question_plan", "Which color should the widget be?", "Which API key should I use?", "a secret is answered by a person"},
		{"codex", "0.155.1", "question_plan", "  2. Blue", "› 2. Blue", "an unexpected mark before an option"},
	}
	for _, c := range cases {
		// The plain screen, or the one with escapes where the old text is
		// drawn in one piece (the review's active tab is on a background).
		text := fixture(t, c.kind, c.version, c.fixture)
		if !strings.Contains(text, c.old) {
			text = screen.Strip(text)
		}
		if !strings.Contains(text, c.old) {
			t.Fatalf("%s: no %q", c.fixture, c.old)
		}
		r := grammar(t, c.kind, c.version).ReadStep(screen.Parse(strings.Replace(text, c.old, c.new, 1)))
		if !r.Found || r.Answerable || r.Reason != c.reason {
			t.Errorf("%s %s %q -> %q: %+v", c.kind, c.fixture, c.old, c.new, r)
		}
	}
	// Without the key hint there is no step.
	plain := screen.Strip(fixture(t, "claude", "2.1.328", "question_single"))
	r := grammar(t, "claude", "2.1.328").ReadStep(screen.Parse(strings.Replace(plain, "Esc to cancel", "Esc to leave", 1)))
	if r.Found {
		t.Errorf("unknown key hint: %+v", r)
	}
	// Several tabs and none of them on a background: which is shown is unknown.
	plain = screen.Strip(fixture(t, "claude", "2.1.328", "question_multi"))
	r = grammar(t, "claude", "2.1.328").ReadStep(screen.Parse(plain))
	if r.Answerable || r.Reason != "cannot tell which question is shown" {
		t.Errorf("tabs without the active one: %+v", r)
	}
}

func TestResolve(t *testing.T) {
	term, prof, g := terminal("claude", "2.1.328"), profileOf("claude", "2.1.328"), grammar(t, "claude", "2.1.328")
	s, r := projectStep(term, prof, g, screen.Parse(fixture(t, "claude", "2.1.328", "question_single")))
	q := s.Questions[0]
	red, blue, text := q.Options[0].Key, q.Options[1].Key, q.Options[2].Key
	ok := []struct {
		a      domain.StepAnswer
		target int
	}{
		{domain.StepAnswer{QuestionKey: q.Key, OptionKeys: []string{blue}}, 1},
		{domain.StepAnswer{QuestionKey: q.Key, OptionKeys: []string{text}, Text: "in my words"}, 2},
		{domain.StepAnswer{QuestionKey: q.Key, OptionKeys: []string{text}}, 2}, // opens the editor step
	}
	for _, c := range ok {
		p, err := resolve(s, r, g.StepKeys(r), []domain.StepAnswer{c.a})
		if err != nil || p.target != c.target || p.text != c.a.Text || p.open != (c.a.Text == "" && c.target == 2) {
			t.Errorf("%+v: %+v %v", c.a, p, err)
		}
	}
	bad := []domain.StepAnswer{
		{QuestionKey: "q9", OptionKeys: []string{red}},
		{QuestionKey: q.Key},
		{QuestionKey: q.Key, OptionKeys: []string{red, blue}},
		{QuestionKey: q.Key, OptionKeys: []string{"o4"}}, // Chat about this
		{QuestionKey: q.Key, OptionKeys: []string{"Red"}},
		{QuestionKey: q.Key, OptionKeys: []string{"1"}},
		{QuestionKey: q.Key, OptionKeys: []string{red}, Text: "and words"},
		{QuestionKey: q.Key, OptionKeys: []string{text}, Text: " padded"},
		{QuestionKey: q.Key, OptionKeys: []string{text}, Text: "two\nlines"},
		{QuestionKey: q.Key, OptionKeys: []string{text}, Text: "tab\there"},
		{QuestionKey: q.Key, OptionKeys: []string{text}, Text: strings.Repeat("x", s.FreeTextLimit+1)},
	}
	for _, a := range bad {
		if _, err := resolve(s, r, g.StepKeys(r), []domain.StepAnswer{a}); !errors.Is(err, domain.ErrDecisionUnavailable) {
			t.Errorf("%+v: %v", a, err)
		}
	}
	if _, err := resolve(s, r, g.StepKeys(r), nil); !errors.Is(err, domain.ErrDecisionUnavailable) {
		t.Errorf("no answer: %v", err)
	}
}

// stepTmux plays a pane: capture-pane shows the screen for the keys sent
// so far; send-keys records them.
type stepTmux struct {
	mu     sync.Mutex
	sent   []string
	screen func(sent []string) string
}

func (f *stepTmux) Run(ctx context.Context, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cmd := args[2] // after -S socket
	switch cmd {
	case "capture-pane":
		return []byte(f.screen(f.sent) + "title\n"), nil
	case "send-keys":
		keys := args[5:] // send-keys -t pane ...
		if keys[0] == "-l" {
			f.sent = append(f.sent, "literal:"+keys[2]) // -l -- text
		} else {
			f.sent = append(f.sent, keys...)
		}
		return nil, nil
	}
	return nil, errors.New("unexpected tmux " + cmd)
}

func (f *stepTmux) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.sent...)
}

// rowsOf edits rows of a plain screen: f gets each row and its index.
func rowsOf(plain string, f func(i int, row string) string) string {
	rows := strings.Split(plain, "\n")
	for i, r := range rows {
		rows[i] = f(i, r)
	}
	return strings.Join(rows, "\n")
}

// highlight moves the cursor mark to the option numbered n.
func highlight(plain, mark string, n string) string {
	return rowsOf(plain, func(_ int, r string) string {
		t := strings.TrimLeft(r, " ")
		if strings.HasPrefix(t, mark+" ") && len(t) > len(mark)+2 && t[len(mark)+1] >= '1' && t[len(mark)+1] <= '9' {
			r = strings.Replace(r, mark+" ", "  ", 1)
			t = strings.TrimLeft(r, " ")
		}
		if strings.HasPrefix(t, n+". ") {
			r = strings.Replace(r, "  "+n+". ", mark+" "+n+". ", 1)
		}
		return r
	})
}

func newFake(t *testing.T, screenFor func(sent []string) string) (*Adapter, *stepTmux) {
	f := &stepTmux{screen: screenFor}
	return newTestAdapter(t, f, Config{}), f
}

// A Claude Code free text: Down, Down (each proven), the text typed into
// the focused row and read back, Enter; the agent then works.
func TestAnswerStepClaudeFreeText(t *testing.T) {
	const v = "2.1.328"
	base := screen.Strip(fixture(t, "claude", v, "question_single"))
	working := fixture(t, "claude", v, "working")
	editor := func(s string) string {
		s = strings.Replace(s, "Enter to select · ↑/↓ to navigate · Esc", "Enter to select · ↑/↓ to navigate · ctrl+g to edit in Vim · Esc", 1)
		return highlight(s, "❯", "3")
	}
	const text = "-my own words"
	x, f := newFake(t, func(sent []string) string {
		switch len(sent) {
		case 0:
			return base
		case 1:
			return highlight(base, "❯", "2")
		case 2: // the placeholder: a block cursor, then dim
			return strings.Replace(editor(base), "3. Type something.", "3. \x1b[7mT\x1b[0;2mype something.\x1b[0m", 1)
		case 3:
			return strings.Replace(editor(base), "3. Type something.", "3. "+text+" ", 1)
		}
		return working
	})
	term := terminal("claude", v)
	s, err := x.Step(context.Background(), term)
	if err != nil || !s.Answerable {
		t.Fatalf("step %+v %v", s, err)
	}
	q := s.Questions[0]
	stage, err := x.AnswerStep(context.Background(), term, s.Fingerprint, []domain.StepAnswer{{QuestionKey: q.Key, OptionKeys: []string{q.Options[2].Key}, Text: text}})
	if stage != domain.AnswerVerified || err != nil {
		t.Fatalf("%s %v", stage, err)
	}
	if got := strings.Join(f.keys(), ","); got != "Down,Down,literal:"+text+",Enter" {
		t.Errorf("keys %s", got)
	}
}

// A Codex note: Down, Down, Tab opens the empty notes, the text, Enter.
func TestAnswerStepCodexNotes(t *testing.T) {
	const v = "0.169.0"
	base := screen.Strip(fixture(t, "codex", v, "question_plan"))
	notes := func(s, text string) string {
		s = highlight(s, "›", "3")
		s = strings.Replace(s, "tab to add notes | enter to submit answer | esc to interrupt", "tab or esc to clear notes | enter to submit answer", 1)
		at := strings.Index(s, "\n\n  tab or esc")
		return s[:at] + "\n\n  › " + text + s[at:]
	}
	const text = "teal, please"
	x, f := newFake(t, func(sent []string) string {
		switch len(sent) {
		case 0:
			return base
		case 1:
			return highlight(base, "›", "2")
		case 2:
			return highlight(base, "›", "3")
		case 3:
			return notes(base, "\x1b[2mAdd notes\x1b[0m")
		case 4:
			return notes(base, text)
		}
		return fixture(t, "codex", v, "working")
	})
	term := terminal("codex", v)
	s, err := x.Step(context.Background(), term)
	if err != nil || !s.Answerable || s.FreeTextLimit != 120-4-3 {
		t.Fatalf("step %+v %v", s, err)
	}
	q := s.Questions[0]
	stage, err := x.AnswerStep(context.Background(), term, s.Fingerprint, []domain.StepAnswer{{QuestionKey: q.Key, OptionKeys: []string{q.Options[3].Key}, Text: text}})
	if stage != domain.AnswerVerified || err != nil || q.Options[3].Label != "Type something." || !q.Options[3].TakesText {
		t.Fatalf("%s %v", stage, err)
	}
	if got := strings.Join(f.keys(), ","); got != "Down,Down,Tab,literal:"+text+",Enter" {
		t.Errorf("keys %s", got)
	}
}

// Zero keys for a changed step or a refused one; a highlight that does not
// move stops the plan before Enter, as sent; a step that stays is sent,
// not verified.
func TestAnswerStepStops(t *testing.T) {
	const v = "2.1.267"
	base := screen.Strip(fixture(t, "claude", v, "question_single"))
	term := terminal("claude", v)
	stuck := func([]string) string { return base }
	x, f := newFake(t, stuck)
	x.cfg.VerifyWithin = 200_000_000 // 200ms
	s, _ := x.Step(context.Background(), term)
	q := s.Questions[0]
	blue := []domain.StepAnswer{{QuestionKey: q.Key, OptionKeys: []string{q.Options[1].Key}}}

	stage, err := x.AnswerStep(context.Background(), term, s.Fingerprint+"x", blue)
	if stage != domain.AnswerNothing || !errors.Is(err, domain.ErrPromptChanged) || len(f.keys()) != 0 {
		t.Errorf("wrong fingerprint: %s %v %v", stage, err, f.keys())
	}
	other := term
	other.Process.StartTicks++
	stage, err = x.AnswerStep(context.Background(), other, s.Fingerprint, blue)
	if stage != domain.AnswerNothing || !errors.Is(err, domain.ErrPromptChanged) || len(f.keys()) != 0 {
		t.Errorf("another process: %s %v %v", stage, err, f.keys())
	}
	stage, err = x.AnswerStep(context.Background(), term, s.Fingerprint, []domain.StepAnswer{{QuestionKey: q.Key, OptionKeys: []string{"o4"}}})
	if stage != domain.AnswerNothing || !errors.Is(err, domain.ErrDecisionUnavailable) || len(f.keys()) != 0 {
		t.Errorf("Chat about this: %s %v %v", stage, err, f.keys())
	}
	stage, err = x.AnswerStep(context.Background(), term, s.Fingerprint, blue)
	if stage != domain.AnswerSent || err == nil || strings.Join(f.keys(), ",") != "Down" {
		t.Errorf("stuck highlight: %s %v %v", stage, err, f.keys())
	}

	// Red is highlighted: Enter at once; the step stays on screen.
	x, f = newFake(t, stuck)
	x.cfg.VerifyWithin = 200_000_000
	stage, err = x.AnswerStep(context.Background(), term, s.Fingerprint, []domain.StepAnswer{{QuestionKey: q.Key, OptionKeys: []string{q.Options[0].Key}}})
	if stage != domain.AnswerSent || err == nil || strings.Join(f.keys(), ",") != "Enter" {
		t.Errorf("step stays: %s %v %v", stage, err, f.keys())
	}

	// A multi-select's refusals get nothing: no option, an unknown one.
	ms := fixture(t, "claude", v, "question_multi_select")
	x, f = newFake(t, func([]string) string { return ms })
	s, _ = x.Step(context.Background(), term)
	if !s.Present || !s.Answerable || s.Questions[0].ResponseKind != domain.MultiSelect || len(s.Questions[0].Options) != 2 {
		t.Fatalf("multi-select %+v", s)
	}
	for _, keys := range [][]string{nil, {"o9"}, {"o1", "o1"}, {"o3"}} {
		stage, err = x.AnswerStep(context.Background(), term, s.Fingerprint, []domain.StepAnswer{{QuestionKey: s.Questions[0].Key, OptionKeys: keys}})
		if stage != domain.AnswerNothing || !errors.Is(err, domain.ErrDecisionUnavailable) || len(f.keys()) != 0 {
			t.Errorf("multi-select %v: %s %v %v", keys, stage, err, f.keys())
		}
	}
}

// multiScreen is Claude Code 2.1.328's multi-select (Red, Blue, Type
// something) after the keys sent: Down/Up move the highlight, Enter flips
// the highlighted box (stuck: it does not), Tab shows the review.
func multiScreen(t *testing.T, stuck bool, checked ...int) func([]string) string {
	const v = "2.1.328"
	lines := strings.Split(fixture(t, "claude", v, "question_multi_select"), "\n")
	review := fixture(t, "claude", v, "question_review")
	labels := []string{"Red", "Blue", "Type something"}
	return func(sent []string) string {
		cursor, boxes := 0, make([]bool, 3)
		for _, k := range checked {
			boxes[k] = true
		}
		for _, k := range sent {
			switch k {
			case "Down":
				cursor = min(cursor+1, 2)
			case "Up":
				cursor = max(cursor-1, 0)
			case "Enter":
				boxes[cursor] = boxes[cursor] != !stuck
			case "Tab":
				return review
			}
		}
		out := slices.Clone(lines)
		for i, l := range labels {
			mark, box := " ", " "
			if i == cursor {
				mark = "❯"
			}
			if boxes[i] {
				box = "✔"
			}
			out[30+2*i] = fmt.Sprintf("%s %d. [%s] %s", mark, i+1, box, l)
		}
		return strings.Join(out, "\n")
	}
}

// A Claude Code multi-select: each box flipped on its own row, each flip
// proven by a recapture, the whole set proven, then Tab to the review; a
// box that does not flip stops the plan before Tab.
func TestAnswerStepClaudeMultiSelect(t *testing.T) {
	term := terminal("claude", "2.1.328")
	for _, c := range []struct {
		name    string
		stuck   bool
		checked []int
		choose  []int
		keys    string
		stage   domain.AnswerStage
	}{
		{"blue", false, nil, []int{1}, "Down,Enter,Tab", domain.AnswerVerified},
		{"both", false, nil, []int{1, 0}, "Enter,Down,Enter,Tab", domain.AnswerVerified},
		{"red already checked, blue instead", false, []int{0}, []int{1}, "Enter,Down,Enter,Tab", domain.AnswerVerified},
		{"as checked", false, []int{0, 1}, []int{0, 1}, "Tab", domain.AnswerVerified},
		{"stuck", true, nil, []int{0, 1}, "Enter", domain.AnswerSent},
	} {
		t.Run(c.name, func(t *testing.T) {
			x, f := newFake(t, multiScreen(t, c.stuck, c.checked...))
			x.cfg.VerifyWithin = 200_000_000
			s, err := x.Step(context.Background(), term)
			if err != nil || !s.Answerable {
				t.Fatalf("step %+v %v", s, err)
			}
			var keys []string
			for _, i := range c.choose {
				keys = append(keys, s.Questions[0].Options[i].Key)
			}
			stage, err := x.AnswerStep(context.Background(), term, s.Fingerprint, []domain.StepAnswer{{QuestionKey: s.Questions[0].Key, OptionKeys: keys}})
			if stage != c.stage || (err == nil) != (c.stage == domain.AnswerVerified) || strings.Join(f.keys(), ",") != c.keys {
				t.Errorf("%s %v keys %v", stage, err, f.keys())
			}
		})
	}
	// A checked free-text box is a person's answer in progress.
	x, _ := newFake(t, multiScreen(t, false, 2))
	if s, _ := x.Step(context.Background(), term); !s.Present || s.Answerable {
		t.Errorf("a checked free-text box: %+v", s)
	}
}

func TestUnprofiled(t *testing.T) {
	x, f := newFake(t, func([]string) string { return "" })
	term := terminal("claude", "2.1.328")
	term.Agent = domain.Agent{Kind: domain.AgentClaude, Version: "2.1.330", Profile: domain.ProfileUnprofiled}
	if _, err := x.Step(context.Background(), term); !errors.Is(err, ErrNoQuestionGrammar) {
		t.Errorf("step: %v", err)
	}
	if stage, err := x.AnswerStep(context.Background(), term, "fp", nil); stage != domain.AnswerNothing || !errors.Is(err, ErrNoQuestionGrammar) || len(f.keys()) != 0 {
		t.Errorf("answer: %s %v", stage, err)
	}
}

// Screens captured by hand beside each profile: Claude Code with "Type
// something." focused and empty (its placeholder is no typed text), and
// Codex asking whether to submit with a question unanswered.
func TestReadStepOnHandCaptures(t *testing.T) {
	read := map[string]int{}
	defer func() {
		if read["claude"] == 0 || read["codex"] == 0 {
			t.Errorf("hand captures read: %v", read)
		}
	}()
	for kind, vs := range versions {
		for _, v := range vs {
			name := map[string]string{"claude": "interaction-text-focused", "codex": "interaction-unanswered-confirm"}[kind]
			b, err := os.ReadFile(filepath.Join("..", kind, "testdata", "screens", v, name, "screen.ansi"))
			if errors.Is(err, os.ErrNotExist) {
				continue // hand captures exist for some versions only
			}
			if err != nil {
				t.Fatal(err)
			}
			read[kind]++
			r := grammar(t, kind, v).ReadStep(screen.Parse(string(b)))
			var labels []string
			for _, o := range r.Options {
				if o.Offered {
					labels = append(labels, o.Label)
				}
			}
			switch kind {
			case "claude":
				// The empty editor is a step of its own, answered with text.
				if !r.Found || !r.Answerable || !r.Editor || r.EditorText != "" || r.Cursor != 2 || strings.Join(labels, "|") != "Red|Blue|Type something." {
					t.Errorf("%s %s: %+v", kind, v, r)
				}
			case "codex":
				if !r.Found || !r.Answerable || r.ResponseKind != domain.Confirmation || r.Cursor != 0 ||
					r.Prompt != "Submit with unanswered questions? 1 unanswered question" || strings.Join(labels, "|") != "Proceed|Go back" {
					t.Errorf("%s %s: %+v", kind, v, r)
				}
			}
		}
	}
}

// Claude Code's review with Cancel highlighted (a person moved there): Up,
// proven, then Enter on "Submit answers".
func TestAnswerStepReviewFromCancel(t *testing.T) {
	const v = "2.1.328"
	review := fixture(t, "claude", v, "question_review")
	onCancel := rowsOf(review, func(_ int, r string) string {
		switch plain := screen.Strip(r); {
		case strings.Contains(plain, "1. Submit answers"):
			return "  1. Submit answers"
		case strings.Contains(plain, "2. Cancel"):
			return "❯ 2. Cancel"
		}
		return r
	})
	x, f := newFake(t, func(sent []string) string {
		switch len(sent) {
		case 0:
			return onCancel
		case 1:
			return review
		}
		return fixture(t, "claude", v, "working")
	})
	term := terminal("claude", v)
	s, err := x.Step(context.Background(), term)
	if err != nil || !s.Answerable || s.Index != 3 || s.Total != 3 || len(s.Questions[0].Options) != 1 {
		t.Fatalf("step %+v %v", s, err)
	}
	q := s.Questions[0]
	stage, err := x.AnswerStep(context.Background(), term, s.Fingerprint, []domain.StepAnswer{{QuestionKey: q.Key, OptionKeys: []string{q.Options[0].Key}}})
	if stage != domain.AnswerVerified || err != nil || strings.Join(f.keys(), ",") != "Up,Enter" {
		t.Fatalf("%s %v %v", stage, err, f.keys())
	}
}

// An unknown version read with its neighbour's profile: its questionnaire
// is shown, never answerable, and no key is sent.
func TestCompatibilityVersionNeverAnswers(t *testing.T) {
	const v = "2.1.328"
	shown := fixture(t, "claude", v, "question_single")
	x, f := newFake(t, func([]string) string { return shown })
	term := terminal("claude", v)
	term.Agent = domain.Agent{Kind: domain.AgentClaude, Version: "2.1.329", Profile: "claude-" + v, Compatibility: true}
	st, err := x.Step(context.Background(), term)
	if err != nil || !st.Present || st.Answerable || !strings.Contains(st.Reason, "exact agent version") {
		t.Fatalf("step %+v, %v", st, err)
	}
	if stage, err := x.AnswerStep(context.Background(), term, st.Fingerprint, nil); stage != domain.AnswerNothing || err == nil || len(f.keys()) != 0 {
		t.Fatalf("answer on an unknown version: %s %v, keys %v", stage, err, f.keys())
	}
}
