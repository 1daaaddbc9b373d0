package codex

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// AsyncGrammar is one version's panel of request_user_input_async
// questions (Codex 0.154.0 and later). The tool returns at once and the
// turn keeps working; the TUI keeps the questions in a "Queued follow-up
// inputs" block above the composer. Collapsed, it shows only their count
// and the key that opens it:
//
//   - Queued follow-up inputs
//     ? 2 questions
//     shift+← to answer
//
// Opened (the composer hidden), it shows one question at a time: "i of N"
// when several wait, the question, its suggestions numbered, and last the
// client's free-text row ("Other", dim, until text is typed on it), then a
// key hint as the last row of the screen. Answers already queued sit at the
// top of the block ("↳ > question" and the answer indented under it).
//
// Keys (measured on every profiled version with the panel): Down/Up move
// the highlight; text typed while the free-text row is highlighted goes
// into that row; Enter submits the highlighted answer to the running turn
// (steer: 0.154/0.155 hold it until the next tool call, later versions
// deliver it at once), Tab on a typed answer queues it for the next turn
// (Tab on a suggestion does nothing); shift+← opens the collapsed block.
// The skip key and the key back to the main prompt are never sent.
type AsyncGrammar struct {
	Header string         // the block's first row
	Count  *regexp.Regexp // the collapsed block's count row
	// OpenHint is the collapsed block's key hint row; Footer matches the
	// opened panel's key hint.
	OpenHint string
	Footer   *regexp.Regexp
	Other    string // the free-text row's dim placeholder
	Keys     agent.StepKeys
}

var (
	asyncCount  = regexp.MustCompile(`^  \? ([1-9][0-9]*) questions?$`)
	asyncIndex  = regexp.MustCompile(`^  ([1-9][0-9]*) of ([1-9][0-9]*)$`)
	asyncOption = regexp.MustCompile(`^  (\S+)? *([1-9][0-9]*)\. (.*)$`)
	// The panel's keys: typed text goes straight on the free-text row (no
	// editor to open, no derived choice); the text timings are the
	// questionnaire's.
	asyncKeys = agent.StepKeys{
		Down: "Down", Up: "Up", Submit: "Enter", Open: "S-Left", Queue: "Tab",
		TextSettle: codexQuestions.Keys.TextSettle, FreeTextLimit: codexQuestions.Keys.FreeTextLimit, TextMargin: codexQuestions.Keys.TextMargin,
	}
)

// asyncPanel154 is the panel of 0.154.0 and 0.155.1; asyncPanel158 that of
// 0.158.0 to 0.159.2; asyncPanel169 that of 0.169.0 and 0.171.0. They
// differ only in how the key hints are spelled.
var (
	asyncPanel154 = AsyncGrammar{
		Header: "• Queued follow-up inputs", Count: asyncCount, OpenHint: "    shift + ← to answer",
		Footer: regexp.MustCompile(`^  enter submit {3}ctrl \+ \] skip( {3}alt \+ ↓ (main prompt|prev question))?( {3}shift \+ ← (next question|queued messages))?$`),
		Other:  "Other", Keys: asyncKeys,
	}
	asyncPanel158 = AsyncGrammar{
		Header: "• Queued follow-up inputs", Count: asyncCount, OpenHint: "    shift+← to answer",
		Footer: regexp.MustCompile(`^  enter submit {3}ctrl\+\] skip( {3}shift\+→ (main prompt|prev question))?( {3}shift\+← (next question|queued messages))?$`),
		Other:  "Other", Keys: asyncKeys,
	}
	asyncPanel169 = AsyncGrammar{
		Header: "• Queued follow-up inputs", Count: asyncCount, OpenHint: "    shift+← to answer",
		Footer: regexp.MustCompile(`^  enter submit {3}\^\] skip( {3}shift\+→ (main prompt|prev question))?( {3}shift\+← (next question|queued messages))?$`),
		Other:  "Other", Keys: asyncKeys,
	}
)

// withAsync is p reading the async question panel g.
func withAsync(p Profile, g AsyncGrammar) Profile {
	p.Questions.Async = &g
	return p
}

// header finds the block's first row at or above row from: only rows of
// the block (indented) may lie between.
func (g *AsyncGrammar) header(c screen.Capture, from int) int {
	for i := from; i >= 0; i-- {
		t := c.Lines[i].Text
		if screen.Trim(t) == g.Header && strings.HasPrefix(t, "•") {
			return i
		}
		if !screen.Blank(t) && !strings.HasPrefix(t, "  ") {
			return -1
		}
	}
	return -1
}

// asyncPromptRow: a row of the question's text (indented by two), not the
// "i of N" row nor a queued answer ("↳ ..." and the rows indented under it).
func asyncPromptRow(t string) bool {
	return !screen.Blank(t) && strings.HasPrefix(t, "  ") && !strings.HasPrefix(t, "   ") &&
		!strings.HasPrefix(t, "  ↳ ") && !asyncIndex.MatchString(t)
}

// Collapsed reads the collapsed block above the composer, the "›" row near
// the bottom of the screen.
func (g *AsyncGrammar) Collapsed(c screen.Capture) agent.StepReading {
	bottom := c.Bottom()
	at := c.LastIndex(max(0, bottom-6), bottom, func(s string) bool { return s == "›" || strings.HasPrefix(s, "› ") })
	if at < 0 {
		return agent.StepReading{Reason: "no composer"}
	}
	return g.ReadCollapsed(c, at)
}

// ReadCollapsed reads the collapsed block right above the composer row at.
// It is a step of one confirmation whose only choice opens the panel.
func (g *AsyncGrammar) ReadCollapsed(c screen.Capture, at int) agent.StepReading {
	hint := c.LastIndex(max(0, at-4), at, func(s string) bool { return strings.TrimRight(s, " ") == g.OpenHint })
	if hint < 1 {
		return agent.StepReading{Reason: "no collapsed async questions"}
	}
	for i := hint + 1; i < at; i++ {
		if !screen.Blank(c.Lines[i].Text) {
			return agent.StepReading{Reason: "rows between the async questions and the composer"}
		}
	}
	m := g.Count.FindStringSubmatch(strings.TrimRight(c.Lines[hint-1].Text, " "))
	head := g.header(c, hint-2)
	if m == nil || head < 0 {
		return agent.StepReading{Reason: "an unknown collapsed async block"}
	}
	r := agent.StepReading{Found: true, Async: true, Collapsed: true, Cursor: 0, Region: c.Slice(head, hint+1),
		ResponseKind: domain.Confirmation, Header: screen.Trim(g.Header[len("• "):]), Prompt: screen.Trim(c.Lines[hint-1].Text)[2:],
		Options: []agent.StepOption{{Number: 1, Label: "Answer", Row: hint, Offered: true}}}
	r.Total, _ = strconv.Atoi(m[1])
	if !c.Lines[at].Dim(len("› ")) && !screen.Blank(strings.TrimPrefix(c.Lines[at].Text, "›")) {
		// Opening the panel takes the keyboard from the composer.
		r.Reason = "the composer holds a draft: a person may be typing"
		return r
	}
	r.Answerable = true
	return r
}

// ReadOpen reads the opened panel whose key hint is the row bottom-1.
// It is long because it checks the panel's rows top to bottom, each
// against the one before.
func (g *AsyncGrammar) ReadOpen(c screen.Capture, bottom int) agent.StepReading {
	footer := bottom - 1
	if !g.Footer.MatchString(strings.TrimRight(c.Lines[footer].Text, " ")) {
		return agent.StepReading{Reason: "no async question key hint at the bottom"}
	}
	// Up from the hint: a blank row, the options, a blank row, the question.
	last := footer - 1
	for last >= 0 && screen.Blank(c.Lines[last].Text) {
		last--
	}
	first := last
	for first >= 0 && asyncOption.MatchString(c.Lines[first].Text) {
		first--
	}
	first++
	if first > last {
		return agent.StepReading{Reason: "no suggestions above the key hint"}
	}
	r := agent.StepReading{Found: true, Async: true, Cursor: -1, ResponseKind: domain.SingleSelect}
	for i := first; i <= last; i++ {
		m := asyncOption.FindStringSubmatch(c.Lines[i].Text)
		if m[1] != "" {
			if m[1] != "›" || r.Cursor >= 0 {
				return agent.StepReading{Reason: "an unexpected mark before a suggestion"}
			}
			r.Cursor = len(r.Options)
		}
		n, _ := strconv.Atoi(m[2])
		if n != len(r.Options)+1 {
			return agent.StepReading{Reason: "suggestions are not numbered in order"}
		}
		r.Options = append(r.Options, agent.StepOption{Number: n, Label: strings.TrimRight(m[3], " "), Row: i, Offered: true})
	}
	if r.Cursor < 0 {
		return agent.StepReading{Reason: "no highlighted suggestion"}
	}
	// The last row is the free-text row: its dim placeholder, or the text
	// typed on it (only while it is highlighted).
	n := len(r.Options)
	other := &r.Options[n-1]
	other.TakesText = true
	col := strings.Index(c.Lines[other.Row].Text, strconv.Itoa(other.Number)+". ") + len(strconv.Itoa(other.Number)+". ")
	r.TextColumn = utf8.RuneCountInString(c.Lines[other.Row].Text[:col])
	// Highlighted, its placeholder is dim (typed text is not); otherwise
	// it reads its label.
	switch {
	case r.Cursor == n-1:
		r.Editor = true
		if !(other.Label == g.Other && c.Lines[other.Row].Dim(col)) {
			r.EditorText = other.Label
		}
	case other.Label != g.Other:
		return agent.StepReading{Reason: "text on a free-text row that is not highlighted"}
	}
	other.Label = g.Other
	if n < 2 || n > 5 {
		r.Reason = "more suggestions than AKK answers (at most four and the free-text row)"
		return r
	}
	// The question: the rows above a blank row over the options.
	if first < 2 || !screen.Blank(c.Lines[first-1].Text) {
		return agent.StepReading{Reason: "no blank row above the suggestions"}
	}
	end := first - 1
	start := end
	for start > 0 && asyncPromptRow(c.Lines[start-1].Text) {
		start--
	}
	if start == end {
		return agent.StepReading{Reason: "no question above the suggestions"}
	}
	var prompt []string
	for i := start; i < end; i++ {
		prompt = append(prompt, screen.Trim(c.Lines[i].Text))
	}
	r.Prompt = strings.Join(prompt, " ")
	r.Index, r.Total = 1, 1
	if start > 0 {
		if m := asyncIndex.FindStringSubmatch(c.Lines[start-1].Text); m != nil {
			r.Index, _ = strconv.Atoi(m[1])
			r.Total, _ = strconv.Atoi(m[2])
			start--
		}
	}
	head := g.header(c, start-1)
	if head < 0 {
		return agent.StepReading{Reason: "no " + strconv.Quote(g.Header) + " above the question"}
	}
	r.Header = screen.Trim(g.Header[len("• "):])
	r.Region = c.Slice(head, bottom)
	if codexQuestions.Secret.MatchString(r.Prompt) {
		r.Secret = true
		r.Reason = "a secret is answered by a person"
		return r
	}
	if r.Editor && r.EditorText != "" {
		r.Reason = "text is typed on the free-text row: a person may be typing"
		return r
	}
	r.Answerable = true
	return r
}
