package claude

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

// QuestionGrammar is one Claude Code version's AskUserQuestion
// questionnaire. Claude Code draws one question per step under a
// full-width rule: a header (" ☐ Color" for a single question; a row of
// tabs "←  ☐ Color  ☐ Size  ✔ Submit  →" for several, the active tab on a
// background colour), the question, the numbered options with their
// descriptions under them, "Type something." (an inline editor), a rule,
// "Chat about this", and the key hint as the last row. With several
// questions a final review step ("Review your answers", "❯ 1. Submit
// answers / 2. Cancel") has no key hint.
type QuestionGrammar struct {
	Cursor string // marks the highlighted option
	// Unanswered, Answered and Submit mark the tabs of the header.
	Unanswered, Answered, SubmitTab string
	TabLeft, TabRight               string
	// Footers are the exact key hints of a question step; EditorFooters
	// those shown while the "Type something." row is focused.
	Footers, EditorFooters []string
	// TextOption is the placeholder of the inline editor row; ChatOption
	// the row under the rule that leaves the questionnaire (never chosen).
	TextOption, ChatOption string
	// CheckBox marks the options of a multi-select question: "[ ] " or,
	// checked, "[✔] " (Checked).
	CheckBox *regexp.Regexp
	Checked  string
	// MultiTextOption is the free-text row of a multi-select question, and
	// MultiSubmit the row under it that ends the question.
	MultiTextOption, MultiSubmit string
	// ReviewTitle and ReviewQuestion (empty when the version draws none)
	// head the review; SubmitLabel and CancelLabel are its options.
	ReviewTitle, ReviewQuestion string
	SubmitLabel, CancelLabel    string
	// Secret matches a header or question that asks for a secret.
	Secret *regexp.Regexp
	Keys   agent.StepKeys
}

// claudeQuestions is the questionnaire grammar of the profiled versions;
// they differ only in the question under the review title.
//
// Keys (measured on every profiled version): Down/Up move the highlight one row;
// Enter answers the highlighted option and moves to the next question,
// the review, or back to the agent. A row's digit also selects and submits
// at once, but the plan moves and proves the highlight instead, so a
// surprise stops it before anything is answered. On "Type something." the
// row itself becomes the editor: typed text replaces the dim placeholder
// and Enter submits it verbatim. Escape declines the whole questionnaire
// and is never sent.
//
// FreeTextLimit: 799 runes keeps typed text under Claude Code's
// 800-character paste-collapse threshold (a longer burst is shown as
// "[Pasted text …]" and cannot be read back); the row's width bounds it
// further, since only one unwrapped row is verified: measured, the row
// holds width-6 runes after "❯ 3. " and its block cursor (114 at 120
// columns).
var (
	checkBox     = regexp.MustCompile(`^\[([^\]])\] `)
	secretPrompt = regexp.MustCompile(`(?i)\b(password|passphrase|passcode|secret|api[ _-]?key|access[ _-]?key|token|credential|one[- ]time code|otp|2fa|pin)\b`)
)

func claudeQuestions(reviewQuestion string) QuestionGrammar {
	return QuestionGrammar{
		Cursor:     "❯",
		Unanswered: "☐", Answered: "☒", SubmitTab: "✔",
		TabLeft: "←", TabRight: "→",
		Footers: []string{
			"Enter to select · ↑/↓ to navigate · Esc to cancel",
			"Enter to select · Tab/Arrow keys to navigate · Esc to cancel",
		},
		EditorFooters: []string{
			"Enter to select · ↑/↓ to navigate · ctrl+g to edit in Vim · Esc to cancel",
			"Enter to select · Tab/Arrow keys to navigate · ctrl+g to edit in Vim · Esc to cancel",
		},
		TextOption:      "Type something.",
		ChatOption:      "Chat about this",
		CheckBox:        checkBox,
		Checked:         "✔",
		MultiTextOption: "Type something",
		MultiSubmit:     "Submit",
		ReviewTitle:     "Review your answers",
		ReviewQuestion:  reviewQuestion,
		SubmitLabel:     "Submit answers",
		CancelLabel:     "Cancel",
		Secret:          secretPrompt,
		Keys: agent.StepKeys{
			Down: "Down", Up: "Up", Submit: "Enter",
			Toggle: "Enter", Next: "Tab",
			TextSettle:    150 * time.Millisecond,
			FreeTextLimit: 799,
			TextMargin:    1, // the block cursor after the text
		},
	}
}

// InteractionGrammar implements agent.InteractionProfile.
func (p Profile) InteractionGrammar() (agent.InteractionGrammar, bool) {
	if p.Questions.Cursor == "" {
		return nil, false
	}
	return p.Questions, true
}

// StepKeys implements agent.InteractionGrammar.
func (g QuestionGrammar) StepKeys(agent.StepReading) agent.StepKeys { return g.Keys }

var stepOption = regexp.MustCompile(`^(\S+)? *([1-9][0-9]*)\. (.*)$`)

// ReadStep implements agent.InteractionGrammar.
func (g QuestionGrammar) ReadStep(c screen.Capture) agent.StepReading {
	bottom := c.Bottom()
	if bottom == 0 {
		return agent.StepReading{Reason: "blank screen"}
	}
	last := screen.Trim(c.Lines[bottom-1].Text)
	editor := contains(g.EditorFooters, last)
	if contains(g.Footers, last) || editor {
		return g.question(c, bottom, editor)
	}
	if m := stepOption.FindStringSubmatch(last); m != nil && m[3] == g.CancelLabel {
		return g.review(c, bottom)
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

// frame finds the rule above the step's header, searching up from row
// below; header is the row under it.
func (g QuestionGrammar) frame(c screen.Capture, below int) (rule int, ok bool) {
	for i := below - 2; i >= 0; i-- {
		if isRule(c.Lines[i].Text) && g.header(c.Lines[i+1].Text) {
			return i, true
		}
	}
	return -1, false
}

func (g QuestionGrammar) header(s string) bool {
	t := screen.Trim(s)
	return strings.HasPrefix(t, g.TabLeft) && strings.HasSuffix(t, g.TabRight) ||
		strings.HasPrefix(t, g.Unanswered+" ") || strings.HasPrefix(t, g.Answered+" ")
}

type tab struct {
	mark, name string
	active     bool
}

// tabs reads the header row: a row of tabs, or a single question's header.
func (g QuestionGrammar) tabs(l screen.Line) ([]tab, bool) {
	t := screen.Trim(l.Text)
	single := !strings.HasPrefix(t, g.TabLeft)
	var out []tab
	for off := 0; off < len(l.Text); {
		r, size := utf8.DecodeRuneInString(l.Text[off:])
		m := string(r)
		if m != g.Unanswered && m != g.Answered && m != g.SubmitTab {
			off += size
			continue
		}
		end := off + size
		for end < len(l.Text) {
			r2, s2 := utf8.DecodeRuneInString(l.Text[end:])
			if s := string(r2); s == g.Unanswered || s == g.Answered || s == g.SubmitTab || s == g.TabRight {
				break
			}
			end += s2
		}
		name := screen.Trim(l.Text[off+size : end])
		at := off + size + strings.Index(l.Text[off+size:end], name)
		out = append(out, tab{mark: m, name: name, active: name != "" && l.Background(at)})
		off = end
	}
	if single {
		if len(out) != 1 || out[0].mark == g.SubmitTab || out[0].name == "" {
			return nil, false
		}
		out[0].active = true
		return out, true
	}
	if len(out) < 2 || out[len(out)-1].mark != g.SubmitTab {
		return nil, false
	}
	for _, x := range out[:len(out)-1] {
		if x.mark == g.SubmitTab || x.name == "" {
			return nil, false
		}
	}
	return out, true
}

// position returns the 1-based index of the one active tab.
func position(tabs []tab) (int, bool) {
	at := 0
	for i, x := range tabs {
		if x.active {
			if at != 0 {
				return 0, false
			}
			at = i + 1
		}
	}
	return at, at != 0
}

// question reads a question step whose key hint is the row bottom-1.
// It is long because it checks the step's rows top to bottom, each
// against the one before; split, a row's rule would lose its context.
func (g QuestionGrammar) question(c screen.Capture, bottom int, editorFooter bool) agent.StepReading {
	footer := bottom - 1
	rule, ok := g.frame(c, footer)
	if !ok {
		return agent.StepReading{Reason: "no framed questionnaire header above the key hint"}
	}
	r := agent.StepReading{Found: true, Cursor: -1, Region: c.Slice(rule, bottom), ResponseKind: domain.SingleSelect}
	tabs, ok := g.tabs(c.Lines[rule+1])
	if !ok {
		r.Reason = "an unknown questionnaire header"
		return r
	}
	r.Total = len(tabs)
	// Which tab is shown is checked once the options say whether the
	// question is a multi-select, the plainer reason.
	shown := true
	if len(tabs) == 1 {
		r.Index = 1
	} else if r.Index, ok = position(tabs); !ok || r.Index == r.Total {
		r.Index, shown = 0, false
	} else {
		r.Header = tabs[r.Index-1].name
	}
	if len(tabs) == 1 {
		r.Header = tabs[0].name
	}

	// The body: question rows, then options (each with its description
	// rows), one rule, the chat row.
	i := rule + 2
	var prompt []string
	for ; i < footer; i++ {
		t := c.Lines[i].Text
		if stepOption.MatchString(t) {
			break
		}
		if !screen.Blank(t) {
			prompt = append(prompt, screen.Trim(t))
		}
	}
	r.Prompt = strings.Join(prompt, " ")
	if len(prompt) == 0 || i == footer {
		r.Reason = "no question above the options"
		return r
	}
	rules := 0
	for ; i < footer; i++ {
		t := c.Lines[i].Text
		switch m := stepOption.FindStringSubmatch(t); {
		case isRule(t):
			rules++
		case m != nil:
			n, _ := strconv.Atoi(m[2])
			if m[1] != "" {
				if m[1] != g.Cursor || r.Cursor >= 0 {
					r.Reason = "an unexpected mark before an option"
					return r
				}
				r.Cursor = len(r.Options)
			}
			// The editor row ends with its block cursor, a space.
			label := strings.TrimRight(m[3], " ")
			o := agent.StepOption{Number: n, Label: label, Row: i, Offered: rules == 0}
			if cb := g.CheckBox.FindStringSubmatch(label); cb != nil && rules == 0 {
				if len(r.Options) > 0 && r.ResponseKind != domain.MultiSelect || cb[1] != " " && cb[1] != g.Checked {
					r.Reason = "an unexpected checkbox"
					return r
				}
				r.ResponseKind = domain.MultiSelect
				o.Label, o.Checkbox, o.Checked = label[len(cb[0]):], true, cb[1] == g.Checked
			} else if r.ResponseKind == domain.MultiSelect && rules == 0 {
				r.Reason = "an option without a checkbox in a multi-select"
				return r
			}
			r.Options = append(r.Options, o)
		case screen.Blank(t):
		case len(r.Options) > 0 && rules == 0:
			o := &r.Options[len(r.Options)-1]
			o.Description = strings.TrimSpace(o.Description + " " + screen.Trim(t))
		default:
			r.Reason = "an unexpected row among the options"
			return r
		}
	}
	if !shown {
		r.Reason = "cannot tell which question is shown"
		return r
	}
	n := len(r.Options)
	if rules != 1 || n < 4 || r.Options[n-1].Offered || r.Options[n-1].Label != g.ChatOption {
		r.Reason = "the options do not end with a rule and " + strconv.Quote(g.ChatOption)
		return r
	}
	for k, o := range r.Options {
		if o.Number != k+1 {
			r.Reason = "options are not numbered 1 to " + strconv.Itoa(n) + " in order"
			return r
		}
	}
	if r.Cursor < 0 {
		r.Reason = "no highlighted option"
		return r
	}
	multi := r.ResponseKind == domain.MultiSelect
	text := &r.Options[n-2]
	textLabel := g.TextOption
	if multi {
		// The free-text checkbox is a person's: never offered (a checked
		// one makes the step a person's too), and the row under it
		// ends the question.
		textLabel = g.MultiTextOption
		if text.Description != g.MultiSubmit {
			r.Reason = "no " + strconv.Quote(g.MultiSubmit) + " row under the multi-select's options"
			return r
		}
		text.Description, text.Offered = "", false
	}
	text.TakesText = true
	focused := r.Cursor == n-2
	line := c.Lines[text.Row]
	at := strings.Index(line.Text, strconv.Itoa(text.Number)+". ") + len(strconv.Itoa(text.Number)+". ")
	r.TextColumn = utf8.RuneCountInString(line.Text[:at])
	switch {
	case focused != editorFooter:
		r.Reason = "the key hint does not match the highlighted option"
		return r
	case focused:
		r.Editor = true
		// The placeholder is dim after the block cursor on its first letter.
		if !(text.Label == textLabel && line.Dim(at+1)) {
			r.EditorText = text.Label
		}
		text.Label = textLabel
	case text.Label != textLabel || text.Description != "":
		r.Reason = "the free-text option is not " + strconv.Quote(textLabel)
		return r
	}
	if g.Secret.MatchString(r.Header) || g.Secret.MatchString(r.Prompt) {
		r.Secret = true
		r.Reason = "a secret is answered by a person"
		return r
	}
	if r.Editor && (r.EditorText != "" || multi) {
		r.Reason = "a free-text editor is open: a person may be typing"
		return r
	}
	if multi && text.Checked {
		r.Reason = "the multi-select's free-text choice is checked: a person is answering"
		return r
	}
	r.Answerable = true
	return r
}

// review reads the final review step, whose last row is its Cancel option.
func (g QuestionGrammar) review(c screen.Capture, bottom int) agent.StepReading {
	rule, ok := g.frame(c, bottom)
	if !ok {
		return agent.StepReading{Reason: "no framed questionnaire header above the review"}
	}
	r := agent.StepReading{Found: true, Cursor: -1, Region: c.Slice(rule, bottom), ResponseKind: domain.Confirmation}
	tabs, ok := g.tabs(c.Lines[rule+1])
	if !ok || len(tabs) < 2 {
		r.Reason = "an unknown review header"
		return r
	}
	r.Total = len(tabs)
	if r.Index, ok = position(tabs); !ok || r.Index != r.Total {
		r.Reason = "cannot tell that the review is shown"
		return r
	}
	r.Header = tabs[r.Index-1].name
	var rows []string
	first := -1
	for i := rule + 2; i < bottom; i++ {
		t := c.Lines[i].Text
		if m := stepOption.FindStringSubmatch(t); m != nil && (m[3] == g.SubmitLabel || m[3] == g.CancelLabel) {
			if first < 0 {
				first = i
			}
			n, _ := strconv.Atoi(m[2])
			if m[1] != "" {
				if m[1] != g.Cursor || r.Cursor >= 0 {
					r.Reason = "an unexpected mark before an option"
					return r
				}
				r.Cursor = len(r.Options)
			}
			r.Options = append(r.Options, agent.StepOption{Number: n, Label: m[3], Row: i, Offered: m[3] == g.SubmitLabel})
			continue
		}
		if first >= 0 && !screen.Blank(t) {
			r.Reason = "an unexpected row among the review's options"
			return r
		}
		if !screen.Blank(t) {
			rows = append(rows, screen.Trim(t))
		}
	}
	if len(r.Options) != 2 || r.Options[0].Label != g.SubmitLabel || r.Options[0].Number != 1 ||
		r.Options[1].Label != g.CancelLabel || r.Options[1].Number != 2 || r.Cursor < 0 {
		r.Reason = "the review's options are not " + strconv.Quote(g.SubmitLabel) + " and " + strconv.Quote(g.CancelLabel)
		return r
	}
	if r.Prompt, r.Reason = g.reviewBody(rows, tabs); r.Reason != "" {
		return r
	}
	r.Answerable = true
	return r
}

// reviewBody checks the review's rows above its options: its title, a
// "● question" and "→ answer" row per question that has an answer, then
// the version's closing question if any; every question answered. prompt
// is the review's question; reason why it cannot be read, else "".
func (g QuestionGrammar) reviewBody(rows []string, tabs []tab) (prompt, reason string) {
	// "Review your answers", a "● question" and "→ answer" row per question
	// that has an answer, then the version's closing question if any.
	if len(rows) == 0 || rows[0] != g.ReviewTitle {
		return "", "no " + strconv.Quote(g.ReviewTitle)
	}
	rows = rows[1:]
	prompt = g.ReviewTitle
	if g.ReviewQuestion != "" {
		if len(rows) == 0 || rows[len(rows)-1] != g.ReviewQuestion {
			return prompt, "no " + strconv.Quote(g.ReviewQuestion) + " above the options"
		}
		rows = rows[:len(rows)-1]
		prompt = g.ReviewQuestion
	}
	answered := 0
	for k := 0; k < len(rows); k++ {
		if !strings.HasPrefix(rows[k], "● ") || k+1 >= len(rows) || !strings.HasPrefix(rows[k+1], "→ ") {
			return prompt, "an unexpected row in the review"
		}
		k++
		answered++
	}
	for _, x := range tabs[:len(tabs)-1] {
		if x.mark != g.Answered {
			return prompt, "a question is unanswered"
		}
	}
	if answered != len(tabs)-1 {
		return prompt, "the review does not list every answer"
	}
	return prompt, ""
}
