package agent

import (
	"strings"
	"time"

	"akk/terminaldrivers/screen"
)

// InteractionProfile is a Profile that can isolate its questionnaire steps
// and names the keys that answer them.
type InteractionProfile interface {
	Profile
	// InteractionGrammar returns the version's questionnaire grammar; ok is
	// false when the version has none (its questionnaires are never answered).
	InteractionGrammar() (g InteractionGrammar, ok bool)
}

// InteractionGrammar is one agent version's questionnaire: it reads the one
// bottom-most step of a capture and says with which keys a step is
// answered. Each agent implements it once for the way it draws steps; each
// version is a value of that implementation (with its captured fixtures).
type InteractionGrammar interface {
	ReadStep(c screen.Capture) StepReading
	// StepKeys are the keys that answer the step r (a version may draw
	// steps answered with different keys: Codex's async question panel).
	StepKeys(r StepReading) StepKeys
}

// StepKeys is the closed key plan of a version's questionnaire steps: tmux
// key names and the timings the real TUI was measured with.
type StepKeys struct {
	// Down and Up move the highlight one option row; each move is proven by
	// a recapture before the next key.
	Down, Up string
	// Submit answers the highlighted option (or the text typed for it).
	Submit string
	// Toggle flips the highlighted checkbox of a multi-select, and Next
	// leaves a multi-select question whose boxes are as planned (to the
	// next question or the review). Empty: the version's multi-selects are
	// a person's.
	Toggle, Next string
	// OpenText, on the highlighted TakesText option, opens its empty text
	// editor (Codex's notes). Empty: the highlighted option is itself the
	// editor and text is typed straight into it (Claude Code).
	OpenText string
	// DerivedText, when set, is the label of a free-text choice derived
	// beside the TakesText row, which is then a plain choice of its own:
	// Codex's native Other submits its own label ("None of the above")
	// when chosen, and its notes are reached only through the derived
	// choice. Submit on that row first opens its empty editor, and Submit
	// again there submits the label (SubmitOpensText).
	DerivedText     string
	SubmitOpensText bool
	// TextSettle is the pause between the typed text showing and Submit,
	// clear of the TUI's paste-burst window (in which Enter is a newline).
	TextSettle time.Duration
	// FreeTextLimit is the longest text, in runes, the version types and
	// reads back exactly on one row.
	FreeTextLimit int
	// TextMargin is how many columns at the right end of the editor's row
	// text never reaches (a wider text wraps): the row holds at most
	// width - StepReading.TextColumn - TextMargin runes.
	TextMargin int
	// Open opens a collapsed step (Codex's async questions); Queue, on
	// typed text, queues the answer for the agent's next turn where Submit
	// steers it into the running one. Empty: no such step or choice.
	Open, Queue string
}

// StepReading is what a grammar proved from one capture: one questionnaire
// step, which in every profiled version shows exactly one question.
type StepReading struct {
	// Found: a complete step (frame, question, options, key hint) is
	// isolated at the bottom of the screen.
	Found bool
	// Answerable: the step's shape is one the grammar has a key plan for.
	// Otherwise Reason says why not.
	Answerable bool
	Reason     string

	Index, Total int // 1-based, 0 when the step does not show them
	Header       string
	Prompt       string
	ResponseKind string // domain.SingleSelect, domain.Confirmation, domain.MultiSelect
	// Options are the menu rows in order, including rows that are never
	// chosen (Offered false: "Chat about this", "Cancel").
	Options []StepOption
	// Cursor indexes the highlighted option, -1 when none.
	Cursor int
	// Editor: a text editor of the highlighted option is open; EditorText
	// is what it holds ("" while it shows its placeholder).
	Editor     bool
	EditorText string
	// TextColumn is the column where text typed for the TakesText option
	// starts on its row: with the pane's width it bounds what one row shows.
	TextColumn int
	// Secret: the question asks for a secret, which is never relayed.
	Secret bool
	// Async: a question the agent asked without stopping its turn (Codex's
	// request_user_input_async); Collapsed: only its count shows, and the
	// step's one choice opens it (StepKeys.Open).
	Async, Collapsed bool

	// Region is the step from its frame to its last row, exact and
	// unredacted: what its fingerprint is taken over.
	Region screen.Region
}

// StepOption is one menu row of a step.
type StepOption struct {
	Number      int
	Label       string
	Description string
	Row         int // index in the capture
	// Offered: AKK may choose it. Rows that leave the questionnaire
	// without answering it are never offered.
	Offered bool
	// TakesText: choosing it types a free text (Claude Code's "Type
	// something.", Codex's "None of the above" with notes).
	TakesText bool
	// Checkbox: a multi-select's option; Checked: its box is checked.
	Checkbox, Checked bool
}

// Same reports whether n shows the same step as r: same question and
// options, wherever the highlight is, whatever an editor holds and
// whichever boxes are checked (Checks compares those).
func (r StepReading) Same(n StepReading) bool {
	if !r.Found || !n.Found || r.Index != n.Index || r.Total != n.Total || r.Header != n.Header ||
		r.Prompt != n.Prompt || r.ResponseKind != n.ResponseKind || len(r.Options) != len(n.Options) {
		return false
	}
	for i, o := range r.Options {
		m := n.Options[i]
		if o.Number != m.Number || o.Offered != m.Offered || o.TakesText != m.TakesText || o.Checkbox != m.Checkbox ||
			o.Row-r.Region.Start != m.Row-n.Region.Start {
			return false
		}
		// A text option's row shows what is typed into it.
		if !o.TakesText && (o.Label != m.Label || o.Description != m.Description) {
			return false
		}
	}
	return true
}

// Checks are the indexes of the checked options, in order.
func (r StepReading) Checks() []int {
	var out []int
	for i, o := range r.Options {
		if o.Checked {
			out = append(out, i)
		}
	}
	return out
}

// SplitColumns splits an option row's text into its label and the
// description drawn beside it after a run of at least two spaces.
func SplitColumns(s string) (label, description string) {
	s = screen.Trim(s)
	if i := strings.Index(s, "  "); i >= 0 {
		return s[:i], screen.Trim(s[i:])
	}
	return s, ""
}
