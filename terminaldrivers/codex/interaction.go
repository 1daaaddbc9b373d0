package codex

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// QuestionGrammar is one Codex version's request_user_input questionnaire
// (Plan mode). Codex draws one question per step in place of its composer:
// "Question i/N (k unanswered)", the question, the numbered options with
// their descriptions beside them, the client's own "None of the above",
// and the key hint as the last row. Tab (or Enter on "None of the above")
// opens a notes editor ("› Add notes") under the options. Submitting with
// questions unanswered (after ←/→) asks "Submit with unanswered
// questions?" with "Proceed" and "Go back".
type QuestionGrammar struct {
	Cursor string // marks the highlighted option and the notes editor
	// Heading matches a question's first row: index, total, unanswered.
	Heading *regexp.Regexp
	// Footers are the exact key hints of a question; NotesFooters those
	// shown while the notes editor is open.
	Footers, NotesFooters []string
	// Other is the client's last option, answered with notes;
	// NotesPlaceholder the dim text of the empty notes editor.
	Other, NotesPlaceholder string
	// ConfirmTitle, ConfirmFooter and ConfirmOptions are the step that asks
	// whether to submit with questions unanswered.
	ConfirmTitle, ConfirmFooter string
	ConfirmOptions              []string
	// Secret matches a question that asks for a secret.
	Secret *regexp.Regexp
	Keys   agent.StepKeys
	// Async is the version's panel of async questions; nil before 0.154.0.
	Async *AsyncGrammar
}

// codexQuestions is the questionnaire grammar of the profiled versions.
//
// Keys (measured on every profiled version): Down/Up move the highlight; Enter
// submits the highlighted option and moves to the next question or, on the
// last ("enter to submit all"), hands the answers to the model. Tab opens
// the notes of the highlighted option, empty; text typed there is sent as
// "user_note: <text>" beside the option's label. On "None of the above"
// (the client's Other) Enter first opens its empty notes, and Enter there
// submits the label itself: its native meaning, offered as a choice of its
// own beside the derived free-text choice (its notes). A digit would submit
// "None of the above" without the proof, and Escape interrupts the turn:
// neither is ever sent.
//
// FreeTextLimit: typed text arrives as a burst Codex treats as a paste; 799
// runes stays far below its paste placeholder, and the editor's one row
// bounds it further: measured, the notes row wraps text wider than
// width-7 runes after "  › " (113 at 120 columns). TextSettle waits out the ~120 ms in
// which an Enter after a burst is taken as a newline.
var codexQuestions = QuestionGrammar{
	Cursor:  "›",
	Heading: regexp.MustCompile(`^  Question ([1-9][0-9]*)/([1-9][0-9]*) \(([0-9]+) unanswered\)$`),
	Footers: []string{
		"tab to add notes | enter to submit answer | esc to interrupt",
		"tab to add notes | enter to submit answer | ←/→ to navigate questions | esc to interrupt",
		"tab to add notes | enter to submit all | ←/→ to navigate questions | esc to interrupt",
	},
	NotesFooters: []string{
		"tab or esc to clear notes | enter to submit answer",
		"tab or esc to clear notes | enter to submit answer | ←/→ to navigate questions",
		"tab or esc to clear notes | enter to submit all | ←/→ to navigate questions",
		// The last question of several, the others answered: no navigation hint.
		"tab or esc to clear notes | enter to submit all",
	},
	Other:            "None of the above",
	NotesPlaceholder: "Add notes",
	ConfirmTitle:     "Submit with unanswered questions?",
	ConfirmFooter:    "Press enter to confirm or esc to go back",
	ConfirmOptions:   []string{"Proceed", "Go back"},
	Secret:           regexp.MustCompile(`(?i)\b(password|passphrase|passcode|secret|api[ _-]?key|access[ _-]?key|token|credential|one[- ]time code|otp|2fa|pin)\b`),
	Keys: agent.StepKeys{
		Down: "Down", Up: "Up", Submit: "Enter", OpenText: "Tab",
		DerivedText: "Type something.", SubmitOpensText: true,
		TextSettle:    200 * time.Millisecond,
		FreeTextLimit: 799,
		TextMargin:    3,
	},
}

// InteractionGrammar implements agent.InteractionProfile.
func (p Profile) InteractionGrammar() (agent.InteractionGrammar, bool) {
	if p.Questions.Cursor == "" {
		return nil, false
	}
	return p.Questions, true
}

// questionStep recognises any step the version's questionnaire grammar
// isolates, such as the confirmation of unanswered questions, whose key
// hint is not a question's.
func (p Profile) questionStep(c screen.Capture) (agent.Reading, bool) {
	if p.Questions.Cursor == "" {
		return agent.Reading{}, false
	}
	if r := p.Questions.ReadStep(c); r.Found {
		switch {
		case r.Async && r.Collapsed:
			// The turn works on, the composer stays usable: the composer
			// reading says the state.
			return agent.Reading{}, false
		case r.Async:
			// The opened panel hides the composer while the turn works on.
			return agent.Reading{State: domain.ScreenWorking, AsyncQuestion: true, Region: r.Region, Reason: "async question panel"}, true
		}
		return agent.Reading{State: domain.ScreenAwaitingInteraction, Region: r.Region, Reason: "questionnaire step"}, true
	}
	return agent.Reading{}, false
}

// StepKeys implements agent.InteractionGrammar.
func (g QuestionGrammar) StepKeys(r agent.StepReading) agent.StepKeys {
	if r.Async && g.Async != nil {
		return g.Async.Keys
	}
	return g.Keys
}

var stepOption = regexp.MustCompile(`^  (\S+)? *([1-9][0-9]*)\. (.*)$`)

// ReadStep implements agent.InteractionGrammar.
func (g QuestionGrammar) ReadStep(c screen.Capture) agent.StepReading {
	bottom := c.Bottom()
	if bottom == 0 {
		return agent.StepReading{Reason: "blank screen"}
	}
	last := screen.Trim(c.Lines[bottom-1].Text)
	notes := contains(g.NotesFooters, last)
	switch {
	case contains(g.Footers, last) || notes:
		return g.question(c, bottom, notes)
	case last == g.ConfirmFooter:
		return g.confirm(c, bottom)
	}
	if g.Async != nil {
		if r := g.Async.ReadOpen(c, bottom); r.Found {
			return r
		}
		// The collapsed block sits right above the composer.
		if r := g.Async.Collapsed(c); r.Found {
			return r
		}
	}
	return agent.StepReading{Reason: "no questionnaire key hint at the bottom"}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// options reads numbered option rows from row i; it stops at the first
// row that is not one.
func (g QuestionGrammar) options(c screen.Capture, i, end int, r *agent.StepReading) (int, string) {
	for ; i < end; i++ {
		m := stepOption.FindStringSubmatch(c.Lines[i].Text)
		if m == nil {
			break
		}
		n, _ := strconv.Atoi(m[2])
		if m[1] != "" {
			if m[1] != g.Cursor || r.Cursor >= 0 {
				return i, "an unexpected mark before an option"
			}
			r.Cursor = len(r.Options)
		}
		label, desc := agent.SplitColumns(m[3])
		r.Options = append(r.Options, agent.StepOption{Number: n, Label: label, Description: desc, Row: i, Offered: true})
	}
	for k, o := range r.Options {
		if o.Number != k+1 {
			return i, "options are not numbered 1 to " + strconv.Itoa(len(r.Options)) + " in order"
		}
	}
	if r.Cursor < 0 {
		return i, "no highlighted option"
	}
	return i, ""
}

// question reads a question whose key hint is the row bottom-1.
func (g QuestionGrammar) question(c screen.Capture, bottom int, notes bool) agent.StepReading {
	footer := bottom - 1
	head := c.LastIndex(0, footer, g.Heading.MatchString)
	if head < 0 {
		return agent.StepReading{Reason: "no question heading above the key hint"}
	}
	r := agent.StepReading{Found: true, Cursor: -1, Region: c.Slice(head, bottom), ResponseKind: domain.SingleSelect}
	m := g.Heading.FindStringSubmatch(c.Lines[head].Text)
	r.Index, _ = strconv.Atoi(m[1])
	r.Total, _ = strconv.Atoi(m[2])
	if r.Index > r.Total {
		r.Reason = "an impossible question number"
		return r
	}
	i := head + 1
	var prompt []string
	for ; i < footer && !screen.Blank(c.Lines[i].Text); i++ {
		prompt = append(prompt, screen.Trim(c.Lines[i].Text))
	}
	r.Prompt = strings.Join(prompt, " ")
	if len(prompt) == 0 || i >= footer || !screen.Blank(c.Lines[i].Text) {
		r.Reason = "no question above the options"
		return r
	}
	i, reason := g.options(c, i+1, footer, &r)
	if reason != "" {
		r.Reason = reason
		return r
	}
	n := len(r.Options)
	if n < 3 || r.Options[n-1].Label != g.Other {
		r.Reason = "the options do not end with " + strconv.Quote(g.Other)
		return r
	}
	r.Options[n-1].TakesText = true
	r.TextColumn = 4
	// Under the options: nothing, or the notes editor.
	var editor []int
	for ; i < footer; i++ {
		if !screen.Blank(c.Lines[i].Text) {
			editor = append(editor, i)
		}
	}
	switch {
	case notes != (len(editor) > 0):
		r.Reason = "the key hint does not match the notes editor"
		return r
	case notes:
		first := c.Lines[editor[0]]
		prefix := "  " + g.Cursor + " "
		if len(editor) != 1 || !strings.HasPrefix(first.Text, prefix) {
			r.Reason = "an unknown notes editor"
			return r
		}
		r.Editor = true
		text := strings.TrimRight(strings.TrimPrefix(first.Text, prefix), " ")
		if !(text == g.NotesPlaceholder && first.Dim(len(prefix))) {
			r.EditorText = text
		}
		r.TextColumn = utf8.RuneCountInString(prefix)
	}
	if g.Secret.MatchString(r.Prompt) {
		r.Secret = true
		r.Reason = "a secret is answered by a person"
		return r
	}
	switch {
	case r.Editor && r.EditorText != "":
		r.Reason = "a notes editor is open: a person may be typing"
		return r
	case r.Editor && (r.Cursor < 0 || !r.Options[r.Cursor].TakesText):
		r.Reason = "notes on a choice are a person's"
		return r
	}
	r.Answerable = true
	return r
}

// confirm reads the step that asks whether to submit with questions
// unanswered.
func (g QuestionGrammar) confirm(c screen.Capture, bottom int) agent.StepReading {
	footer := bottom - 1
	head := c.LastIndex(0, footer, func(s string) bool { return screen.Trim(s) == g.ConfirmTitle })
	if head < 0 {
		return agent.StepReading{Reason: "no " + strconv.Quote(g.ConfirmTitle) + " above the key hint"}
	}
	r := agent.StepReading{Found: true, Cursor: -1, Region: c.Slice(head, bottom), ResponseKind: domain.Confirmation, Prompt: g.ConfirmTitle}
	i := head + 1
	var rows []string
	for ; i < footer && !screen.Blank(c.Lines[i].Text); i++ {
		rows = append(rows, screen.Trim(c.Lines[i].Text))
	}
	if len(rows) > 0 {
		r.Prompt += " " + strings.Join(rows, " ")
	}
	if i >= footer {
		r.Reason = "no options under the question"
		return r
	}
	i, reason := g.options(c, i+1, footer, &r)
	if reason != "" {
		r.Reason = reason
		return r
	}
	for ; i < footer; i++ {
		if !screen.Blank(c.Lines[i].Text) {
			r.Reason = "an unexpected row under the options"
			return r
		}
	}
	if len(r.Options) != len(g.ConfirmOptions) {
		r.Reason = "not the options " + strings.Join(g.ConfirmOptions, " / ")
		return r
	}
	for k, o := range r.Options {
		if o.Label != g.ConfirmOptions[k] {
			r.Reason = "not the options " + strings.Join(g.ConfirmOptions, " / ")
			return r
		}
	}
	r.Answerable = true
	return r
}
