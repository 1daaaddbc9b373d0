package agent

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/screen"
)

// ApprovalProfile is a Profile that can isolate its permission prompts and
// names the keys that answer them.
type ApprovalProfile interface {
	Profile
	// ApprovalGrammar returns the version's permission prompt grammar; ok is
	// false when the version has none (its prompts are never answered).
	ApprovalGrammar() (g ApprovalGrammar, ok bool)
}

// ApprovalGrammar is one agent version's permission prompt: how the prompt
// is framed, which shapes of it the version can answer and with which keys.
// A value, so a new version is a new value (with its captured fixtures).
//
// A prompt is read from the bottom: one of its Footers is the last row
// drawn; its title is the row under the nearest Frame above (when Frame is
// set) or else the nearest row above matching Title. Options are the
// numbered rows "N. label" above the footer, one of them marked with
// Cursor; the body (and the command) lies between the title and them.
type ApprovalGrammar struct {
	// Frame, when set, matches the row right above a prompt's title (Claude
	// Code's full-width rule).
	Frame *regexp.Regexp
	// Title matches the first row of any permission prompt of this agent.
	Title *regexp.Regexp
	// Footers are the exact (trimmed) last rows a prompt may have (Claude
	// Code drops "Tab to amend" while a persistent row is highlighted).
	Footers []string
	// Cursor marks the highlighted option.
	Cursor string
	// Shapes are the prompts this version can answer, by exact title.
	Shapes []ApprovalShape
}

// ApprovalShape is one answerable kind of permission prompt.
type ApprovalShape struct {
	// Title is the exact (trimmed) title row.
	Title string
	Kind  string // "shell_command"
	Tool  string // the agent's tool name
	// Question, when set, is the exact (trimmed) row right above the options.
	Question string
	// The command is found in the body (the rows between the title and the
	// question or options): between the two rows drawn with CommandRule when
	// set; else from the row starting with CommandPrefix (which is dropped)
	// to the end of the body when set; else the body rows matching
	// CommandRows. When some of those rows start with CommandMargin (the
	// bar beside a wrapped command), only those are the command.
	CommandRule   rune
	CommandPrefix string
	CommandRows   *regexp.Regexp
	CommandMargin string
	// Once and Reject are the exact labels of the one-time yes (the first
	// row) and of the native no (the last row), each on one row. Every row
	// between them must match one of Persistent (its label joined with a
	// space where the terminal wrapped it): choices that are never sent.
	Once, Reject string
	Persistent   []*regexp.Regexp
	// Keys says how a row is chosen.
	Keys KeyMethod
}

// KeyMethod is how a key plan chooses an option row.
type KeyMethod int

const (
	// KeyRowNumber: the row's own number key selects and submits it at
	// once (proven on the real TUI for the version).
	KeyRowNumber KeyMethod = iota + 1
	// KeyNavigate: Down/Up move the highlight one row (each move proven by
	// a recapture), then Enter submits the highlighted row.
	KeyNavigate
)

// ApprovalReading is what a grammar proved from one capture.
type ApprovalReading struct {
	// Found: a complete prompt (title, frame, footer) is isolated.
	Found bool
	// Answerable: its shape and menu are exactly one of the grammar's
	// shapes. Otherwise Reason says why not.
	Answerable bool
	Reason     string

	Title string
	Shape ApprovalShape // set when Answerable
	// Region is the prompt from its frame (or title) to its footer, exact
	// and unredacted: what its fingerprint is taken over.
	Region screen.Region
	// Command is the command's rows as drawn, unredacted.
	Command []string
	// Options are the menu rows in order; Cursor indexes the highlighted one.
	Options []Option
	Cursor  int
}

// Option is one numbered menu row.
type Option struct {
	Number  int
	Label   string
	Row     int  // index in the capture
	Wrapped bool // the label goes on in the rows below
}

// Row returns the option a decision chooses: the first row for approve_once,
// the last for reject. ok is false when the reading is not answerable.
func (r ApprovalReading) Row(d domain.ApprovalDecision) (Option, bool) {
	if !r.Answerable || len(r.Options) == 0 {
		return Option{}, false
	}
	switch d {
	case domain.ApproveOnce:
		return r.Options[0], true
	case domain.Reject:
		return r.Options[len(r.Options)-1], true
	}
	return Option{}, false
}

var (
	optionRow    = regexp.MustCompile(`^\s*(\S+\s+)?([1-9])\.\s+(.*\S)\s*$`)
	continuedRow = regexp.MustCompile(`^\s{5,}\S`)
)

// Read isolates the bottom-most complete permission prompt of c.
func (g ApprovalGrammar) Read(c screen.Capture) ApprovalReading {
	bottom := c.Bottom()
	if bottom == 0 || g.Title == nil || !slices.Contains(g.Footers, screen.Trim(c.Lines[bottom-1].Text)) {
		return ApprovalReading{Reason: "no permission prompt footer at the bottom"}
	}
	footer := bottom - 1
	var start, title int
	if g.Frame != nil {
		start = c.LastIndex(0, footer, g.Frame.MatchString)
		title = start + 1
		if start < 0 || title >= footer || !g.Title.MatchString(c.Lines[title].Text) {
			return ApprovalReading{Reason: "no framed permission prompt title above the footer"}
		}
	} else {
		title = c.LastIndex(0, footer, g.Title.MatchString)
		start = title
		if title < 0 {
			return ApprovalReading{Reason: "no permission prompt title above the footer"}
		}
	}
	r := ApprovalReading{Found: true, Title: screen.Trim(c.Lines[title].Text), Region: c.Slice(start, bottom), Cursor: -1}

	first, end := menuRows(c, title, footer)
	var shape *ApprovalShape
	for i := range g.Shapes {
		if g.Shapes[i].Title == r.Title {
			shape = &g.Shapes[i]
		}
	}
	if shape == nil {
		r.Reason = "a " + strconv.Quote(r.Title) + " prompt is not profiled for answers"
		return r
	}
	for i := first; i < end; i++ {
		m := optionRow.FindStringSubmatch(c.Lines[i].Text)
		if m == nil {
			last := &r.Options[len(r.Options)-1]
			last.Label += " " + screen.Trim(c.Lines[i].Text)
			last.Wrapped = true
			continue
		}
		if m[1] != "" {
			if strings.TrimSpace(m[1]) != g.Cursor || r.Cursor >= 0 {
				r.Reason = "unexpected mark before a menu row"
				return r
			}
			r.Cursor = len(r.Options)
		}
		n, _ := strconv.Atoi(m[2])
		r.Options = append(r.Options, Option{Number: n, Label: m[3], Row: i})
	}
	if reason := shape.menu(r.Options, r.Cursor); reason != "" {
		r.Reason = reason
		return r
	}
	bodyEnd := first
	if shape.Question != "" {
		bodyEnd = first - 1
		if bodyEnd <= title || screen.Trim(c.Lines[bodyEnd].Text) != shape.Question {
			r.Reason = "no " + strconv.Quote(shape.Question) + " right above the options"
			return r
		}
	}
	cmd, reason := shape.command(c.Slice(title+1, bodyEnd).Lines)
	if reason != "" {
		r.Reason = reason
		return r
	}
	r.Command, r.Shape, r.Answerable = cmd, *shape, true
	return r
}

// menuRows are the rows [first, end) of a prompt's menu: the numbered rows
// above the footer, only blank rows between, with the rows a long option
// wraps onto (indented deeper).
func menuRows(c screen.Capture, title, footer int) (first, end int) {
	end = footer
	for end > title+1 && screen.Blank(c.Lines[end-1].Text) {
		end--
	}
	first = end
	for first > title+1 && (optionRow.MatchString(c.Lines[first-1].Text) || continuedRow.MatchString(c.Lines[first-1].Text)) {
		first--
	}
	for first < end && !optionRow.MatchString(c.Lines[first].Text) {
		first++ // deep body rows right above the options are not the menu
	}
	return first, end
}

// menu checks the options against the shape: numbered 1..N in order, the
// one-time yes first, the native no last, only known persistent rows
// between, exactly one highlighted.
func (s ApprovalShape) menu(opts []Option, cursor int) string {
	if len(opts) < 2 {
		return "fewer than two options"
	}
	for i, o := range opts {
		if o.Number != i+1 {
			return "options are not numbered 1 to " + strconv.Itoa(len(opts)) + " in order"
		}
	}
	if cursor < 0 {
		return "no highlighted option"
	}
	if opts[0].Label != s.Once || opts[0].Wrapped {
		return "the first option is not " + strconv.Quote(s.Once)
	}
	if last := opts[len(opts)-1]; last.Label != s.Reject || last.Wrapped {
		return "the last option is not " + strconv.Quote(s.Reject)
	}
	for _, o := range opts[1 : len(opts)-1] {
		known := false
		for _, p := range s.Persistent {
			known = known || p.MatchString(o.Label)
		}
		if !known {
			return "an unknown option " + strconv.Quote(o.Label)
		}
	}
	return ""
}

// command finds the command's rows in the prompt's body.
func (s ApprovalShape) command(body []string) ([]string, string) {
	var out []string
	switch {
	case s.CommandRule != 0:
		var rules []int
		for i, l := range body {
			if screen.IsRule(l, s.CommandRule, 10) {
				rules = append(rules, i)
			}
		}
		if len(rules) != 2 {
			return nil, "the command is not between two rules"
		}
		out = body[rules[0]+1 : rules[1]]
	case s.CommandPrefix != "":
		at := -1
		for i, l := range body {
			if strings.HasPrefix(screen.Trim(l), s.CommandPrefix) {
				at = i
				break
			}
		}
		if at < 0 {
			return nil, "no command row starting with " + strconv.Quote(s.CommandPrefix)
		}
		out = append([]string{strings.TrimPrefix(screen.Trim(body[at]), s.CommandPrefix)}, body[at+1:]...)
	case s.CommandRows != nil:
		for _, l := range body {
			if s.CommandRows.MatchString(l) {
				out = append(out, l)
			}
		}
	}
	var rows, margin []string
	for _, l := range out {
		l = screen.Trim(l)
		if s.CommandMargin != "" && strings.HasPrefix(l, s.CommandMargin) {
			margin = append(margin, screen.Trim(strings.TrimPrefix(l, s.CommandMargin)))
		}
		if l != "" {
			rows = append(rows, l)
		}
	}
	if len(margin) > 0 {
		rows = margin
	}
	if len(rows) == 0 {
		return nil, "no command text in the prompt"
	}
	return rows, ""
}
