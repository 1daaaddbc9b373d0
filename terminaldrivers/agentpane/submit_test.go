package agentpane

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/agent/screencases"
)

func TestCheckRequest(t *testing.T) {
	ok := []string{
		"a plain request",
		"first line\nsecond line",
		"blank line inside\n\nstill fine",
		"non-ASCII: é 日本 \u00a0 emoji 🙂",
		"a # later is fine / and ! too",
		strings.Repeat("x", domain.MaxRequestBytes),
	}
	for _, s := range ok {
		if err := CheckRequest(s); err != nil {
			t.Errorf("CheckRequest(%.40q) = %v, want nil", s, err)
		}
	}
	bad := []string{
		"",
		"   ",
		"/clear",
		"/review the code",
		"!rm -rf /",
		" leading space",
		"trailing newline\n",
		"tab\there",
		"carriage\rreturn",
		"escape \x1b[201~ ends a paste",
		"nul\x00byte",
		"line\u2028separator",
		"bad utf-8 \xff",
		strings.Repeat("x", domain.MaxRequestBytes+1),
	}
	for _, s := range bad {
		if err := CheckRequest(s); !errors.Is(err, ErrRequestNotPastable) {
			t.Errorf("CheckRequest(%.40q) = %v, want ErrRequestNotPastable", s, err)
		}
	}
}

// TestSubmitUnpastable: a request that cannot be pasted is refused before
// the terminal is even looked at.
func TestSubmitUnpastable(t *testing.T) {
	x := testTerminal(t)
	term := domain.Terminal{ID: "term_x", Agent: domain.Agent{Kind: domain.AgentClaude, Version: "2.1.328", Profile: "claude-2.1.328"}}
	stage, err := x.Submit(context.Background(), term, "/clear")
	if stage != domain.SubmitNothing || !errors.Is(err, ErrRequestNotPastable) {
		t.Errorf("stage %s, err %v", stage, err)
	}
	term.Agent.Version = "1.0.0" // older than every profile: nothing lends it one
	stage, err = x.Submit(context.Background(), term, "hello")
	if stage != domain.SubmitNothing || !errors.Is(err, ErrNotProfiled) {
		t.Errorf("unprofiled: stage %s, err %v", stage, err)
	}
}

// TestComposerTextFixtures reads the composer of every captured idle
// screen of every pinned version: empty, or the draft the capture typed.
func TestComposerTextFixtures(t *testing.T) {
	x := testTerminal(t)
	for _, kind := range []domain.AgentKind{domain.AgentClaude, domain.AgentCodex} {
		cases, err := screencases.Read(filepath.Join("..", "testdata", "screens", string(kind)))
		if err != nil || len(cases) == 0 {
			t.Fatalf("%s screens: %v (%d)", kind, err, len(cases))
		}
		for _, c := range cases {
			if c.Expected != domain.ScreenIdle {
				continue
			}
			t.Run(string(kind)+"@"+c.Version+"/"+c.Name, func(t *testing.T) {
				prof, err := x.turnProfile(domain.Terminal{Agent: domain.Agent{Kind: kind, Version: c.Version}})
				if err != nil {
					t.Fatal(err)
				}
				rows, ok := prof.ComposerText(c.Capture())
				if !ok {
					t.Fatalf("no composer read on an idle screen:\n%s", c.Plain)
				}
				empty := c.ComposerEmpty == nil || *c.ComposerEmpty
				switch {
				case empty && len(rows) != 0:
					t.Errorf("empty composer read as %q", rows)
				case !empty && len(rows) == 0:
					t.Errorf("a draft read as an empty composer")
				case c.Name == "composer_text" && !slices.Equal(rows, []string{"a draft the human has not sent"}):
					t.Errorf("draft read as %q", rows)
				}
			})
		}
	}
}

func TestHolds(t *testing.T) {
	x := testTerminal(t)
	placeholder := func(kind domain.AgentKind, version string) func([]string, string) bool {
		prof, err := x.turnProfile(domain.Terminal{Agent: domain.Agent{Kind: kind, Version: version}})
		if err != nil {
			t.Fatal(err)
		}
		return prof.TurnRules().Placeholder
	}
	claude := placeholder(domain.AgentClaude, "2.1.328")
	codex := placeholder(domain.AgentCodex, "0.169.0")
	five := "one\ntwo\nthree\nfour\nfive"
	long := strings.Repeat("abcdefghi ", 120) + "end"
	cases := []struct {
		name        string
		rows        []string
		text        string
		placeholder func([]string, string) bool
		want        bool
	}{
		{"exact", []string{"a plain request"}, "a plain request", nil, true},
		{"lines", []string{"first", "second"}, "first\nsecond", nil, true},
		{"blank line", []string{"first", "", "third"}, "first\n\nthird", nil, true},
		{"wrapped", []string{"a long line that", "wraps here", "second"}, "a long line that wraps here\nsecond", nil, true},
		{"empty composer", nil, "a plain request", nil, false},
		{"other text", []string{"a plain reques"}, "a plain request", nil, false},
		{"text before", []string{"xa plain request"}, "a plain request", nil, false},
		{"line missing", []string{"first"}, "first\nsecond", nil, false},
		{"lines joined", []string{"first second"}, "first\nsecond", nil, false},
		{"extra row", []string{"first", "second", "third"}, "first\nsecond", nil, false},
		{"claude collapsed", []string{"[Pasted text #3 +4 lines]"}, five, claude, true},
		{"claude collapsed, other count", []string{"[Pasted text #3 +5 lines]"}, five, claude, false},
		{"claude collapsed line", []string{"[Pasted text #1]"}, long, claude, true},
		{"claude collapsed line for lines", []string{"[Pasted text #1]"}, five, claude, false},
		{"claude collapsed after text", []string{"x[Pasted text #3 +4 lines]"}, five, claude, false},
		{"codex collapsed", []string{"[Pasted Content 1203 chars]"}, long, codex, true},
		{"codex collapsed, other count", []string{"[Pasted Content 1202 chars]"}, long, codex, false},
		{"codex collapsed with a row", []string{"[Pasted Content 1203 chars]", "x"}, long, codex, false},
	}
	for _, c := range cases {
		if got := Holds(c.rows, c.text, c.placeholder); got != c.want {
			t.Errorf("%s: Holds = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRows(t *testing.T) {
	cases := []struct {
		text  string
		width int
		want  int
	}{
		{"one line", 120, 1},
		{"a\nb\nc", 120, 3},
		{"a\n\nc", 120, 3},
		{strings.Repeat("x", 116), 120, 1},
		{strings.Repeat("x", 117), 120, 2},
		{strings.Repeat("日", 58), 120, 1},
		{strings.Repeat("日", 59), 120, 2},
	}
	for _, c := range cases {
		if got := Rows(c.text, c.width); got != c.want {
			t.Errorf("Rows(%.20q, %d) = %d, want %d", c.text, c.width, got, c.want)
		}
	}
}

func TestCollapses(t *testing.T) {
	x := testTerminal(t)
	rules := func(kind domain.AgentKind, version string) func(string) bool {
		prof, err := x.turnProfile(domain.Terminal{Agent: domain.Agent{Kind: kind, Version: version}})
		if err != nil {
			t.Fatal(err)
		}
		return prof.TurnRules().Collapses
	}
	claude, codex := rules(domain.AgentClaude, "2.1.267"), rules(domain.AgentCodex, "0.155.1")
	cases := []struct {
		text          string
		claude, codex bool
	}{
		{"a\nb\nc", false, false},
		{"a\nb\nc\nd", true, false},
		{strings.Repeat("x", 800), false, false},
		{strings.Repeat("x", 801), true, false},
		{strings.Repeat("🙂", 401), true, false}, // two UTF-16 units each
		{strings.Repeat("x", 1001), true, true},
	}
	for _, c := range cases {
		if claude(c.text) != c.claude || codex(c.text) != c.codex {
			t.Errorf("%.20q: claude %v codex %v, want %v %v", c.text, claude(c.text), codex(c.text), c.claude, c.codex)
		}
	}
}
