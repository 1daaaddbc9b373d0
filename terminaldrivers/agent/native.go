package agent

import (
	"regexp"
	"strconv"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/screen"
)

// NativeProfile is a TurnProfile with closed plans for the agent's own
// controls. A version without a plan for a control leaves it nil: AKK
// types nothing for it there.
type NativeProfile interface {
	TurnProfile
	NativeRules() NativeRules
}

// NativeRules are one version's native control plans.
type NativeRules struct {
	// Status opens the agent's status view (its /status).
	Status *StatusPlan
	// NewThread starts a clean thread (Claude Code /clear, Codex /new).
	NewThread *CommandPlan
	// Resume resumes one thread by its complete id (Command + " " + id).
	Resume *CommandPlan
	// Permissions shows and changes the permission mode.
	Permissions *PermissionPlan
	// Models shows and changes the model and reasoning effort.
	Models *ModelPlan
}

// CommandPlan is one closed slash command: typed into the idle, empty
// composer, proven to be the composer's exact text and the entry the
// command menu would run, then Enter once.
type CommandPlan struct {
	// Command is the exact text typed, e.g. "/status" (a plan with an
	// argument types Command, a space and the argument).
	Command string
	// Menu reads the composer and the command menu the agent draws for the
	// typed text: ok only when Enter runs exactly it (MenuSelects).
	Menu func(c screen.Capture, typed string) bool
	// MinWidth is the narrowest pane the plan's result can be read in
	// (0: any).
	MinWidth int
}

// StatusPlan is the status command's plan and how its view reads.
type StatusPlan struct {
	CommandPlan
	// Read parses the newest status view on screen; ok only when it is
	// complete.
	Read func(c screen.Capture) (StatusCard, bool)
	// ReadAnywhere parses the bottom-most complete card after the last
	// prompt on screen (while a task runs, its live output follows the
	// card). Nil: the view is not read while working.
	ReadAnywhere func(c screen.Capture) (StatusCard, bool)
	// Inline: the view is printed into the transcript (Codex's card), not
	// a panel that Dismiss closes.
	Inline  bool
	Dismiss string
}

// StatusCard is what a status view states.
type StatusCard struct {
	SessionID   string
	Version     string
	Model       string
	Directory   string
	Permissions string
}

// Domain is the card as the domain reports it.
func (c StatusCard) Domain() domain.NativeStatus {
	return domain.NativeStatus{NativeThreadID: c.SessionID, AgentVersion: c.Version, Model: c.Model, Directory: c.Directory, Permissions: c.Permissions}
}

// menuRow matches a row of a slash-command menu: an optional selection
// glyph, the command, two or more spaces, its description.
var menuRow = regexp.MustCompile(`^\s*([❯›>]?)\s*(/[a-z][a-z0-9:_-]*)\s{2,}\S`)

// FirstMenuEntry is the Menu of agents whose command menu selects its first
// entry as the typed text changes: the menu's top-most entry, and the
// entry any selection glyph marks, must both be exactly command. from and
// to bound the rows searched (the menu is drawn above or below the
// composer depending on the version).
func FirstMenuEntry(c screen.Capture, from, to int, command string) bool {
	first, marked, marks := "", "", 0
	for i := max(0, from); i < min(to, len(c.Lines)); i++ {
		m := menuRow.FindStringSubmatch(c.Lines[i].Text)
		if m == nil {
			continue
		}
		if first == "" {
			first = m[2]
		}
		if m[1] != "" {
			marked = m[2]
			marks++
		}
	}
	if first != command {
		return false
	}
	return marks == 0 || (marks == 1 && marked == command)
}

// MenuSelects is how the menu proves typed: a bare command must be the
// menu's first and selected entry (FirstMenuEntry); a command with an
// argument must have no menu open at all, so Enter cannot complete a menu
// entry in place of the typed text.
func MenuSelects(c screen.Capture, from, to int, typed string) bool {
	if strings.Contains(typed, " ") {
		for i := max(0, from); i < min(to, len(c.Lines)); i++ {
			if menuRow.MatchString(c.Lines[i].Text) {
				return false
			}
		}
		return true
	}
	return FirstMenuEntry(c, from, to, typed)
}

// Field reads "Label:   value" from a row (an optional box border "│"
// around it); ok when the row states label.
func Field(row, label string) (string, bool) {
	t := strings.TrimSpace(strings.Trim(strings.TrimSpace(row), "│"))
	if !strings.HasPrefix(t, label+":") {
		return "", false
	}
	return strings.TrimSpace(strings.TrimPrefix(t, label+":")), true
}

// uuidPattern is a complete thread id.
var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// IsUUID reports whether s is a complete lower-case UUID.
func IsUUID(s string) bool { return uuidPattern.MatchString(s) }

// PermissionPlan is how a version shows and changes its permission mode.
// Exactly one of Cycle and Menu is set.
type PermissionPlan struct {
	// Modes are the modes the profile knows, in the agent's own order.
	Modes []PermissionMode
	// Cycle: the mode is shown on the idle screen (Current reads it) and
	// CycleKey moves to the next one (Claude Code's Shift+Tab).
	Cycle    bool
	CycleKey string
	Current  func(c screen.Capture) (mode string, ok bool)
	// Menu: a command opens a menu of the modes (Codex /permissions) that
	// ReadMenu reads; Up/Down move its selection, Enter picks, Escape
	// closes it. A mode with Confirm asks again in a dialog whose
	// confirming option ReadConfirm proves selected.
	Menu        *CommandPlan
	ReadMenu    func(c screen.Capture) (PermissionMenu, bool)
	ReadConfirm func(c screen.Capture) bool
}

// PermissionMode is one mode: a semantic id and the agent's label.
type PermissionMode struct {
	Mode  string
	Label string
	// Confirm: the agent asks to confirm this mode (Codex Full Access).
	Confirm bool
}

// PermissionMenu is the permission menu as drawn: its options in order,
// the selected one and the current one (indexes into Labels).
type PermissionMenu struct {
	Labels   []string
	Selected int
	Current  int
	// Above and Below: a window of a menu that scrolls has rows above or
	// below it (a "↑"/"↓" marker); a whole read has neither.
	Above, Below bool
}

// ModeOf is the mode whose label is label.
func (p PermissionPlan) ModeOf(label string) (PermissionMode, bool) {
	for _, m := range p.Modes {
		if m.Label == label {
			return m, true
		}
	}
	return PermissionMode{}, false
}

// numberedRow matches a menu option: an optional selection glyph, its
// number, its label (with "(current)" when it is), two or more spaces and
// its description.
var numberedRow = regexp.MustCompile(`^\s*([›❯>]?)\s*(\d+)\.\s+(.+?)(?:\s{2,}\S.*)?$`)

// ReadNumberedMenu reads the numbered options under heading (a trailing
// "*" matches any heading with that prefix), up to the
// row holding hint: labels (without "(current)"), the selected option
// (glyph) and the current one (-1 when none is marked). ok only when one
// option is selected and at most one is current.
func ReadNumberedMenu(c screen.Capture, heading, hint string) (PermissionMenu, bool) {
	m, first, ok := readNumbered(c, heading, hint)
	if !ok || first != 1 || m.Above || m.Below {
		return PermissionMenu{}, false // not shown whole
	}
	return m, true
}

// ReadNumberedWindow reads the visible window of a numbered menu that may
// scroll: its rows must be numbered one after another from any number,
// and its scroll markers say whether rows lie above or below it.
func ReadNumberedWindow(c screen.Capture, heading, hint string) (PermissionMenu, bool) {
	m, _, ok := readNumbered(c, heading, hint)
	return m, ok
}

// readNumbered reads a numbered menu's window and the number of its first
// row.
func readNumbered(c screen.Capture, heading, hint string) (m PermissionMenu, first int, ok bool) {
	prefix, isPrefix := strings.CutSuffix(heading, "*")
	start := c.LastIndex(0, c.Bottom(), func(s string) bool {
		t := strings.TrimSpace(s)
		return t == heading || (isPrefix && strings.HasPrefix(t, prefix))
	})
	if start < 0 {
		return PermissionMenu{}, 0, false
	}
	m = PermissionMenu{Selected: -1, Current: -1}
	for i := start + 1; i < c.Bottom(); i++ {
		t := c.Lines[i].Text
		if strings.Contains(t, hint) {
			if len(m.Labels) == 0 || m.Selected < 0 {
				return PermissionMenu{}, 0, false
			}
			return m, first, true
		}
		if mk := strings.TrimSpace(t); strings.HasPrefix(mk, "↑") || strings.HasPrefix(mk, "↓") {
			if strings.HasPrefix(mk, "↑") {
				if len(m.Labels) > 0 {
					return PermissionMenu{}, 0, false // a marker above is above every row
				}
				m.Above = true
			} else {
				m.Below = true
			}
			continue
		}
		r := numberedRow.FindStringSubmatch(t)
		if r == nil {
			continue // a description's continuation row
		}
		if m.Below {
			return PermissionMenu{}, 0, false // a row under the marker below
		}
		n, _ := strconv.Atoi(r[2])
		if len(m.Labels) == 0 {
			first = n
		} else if n != first+len(m.Labels) {
			return PermissionMenu{}, 0, false
		}
		label := strings.TrimSpace(r[3])
		if l, ok := strings.CutSuffix(label, "(current)"); ok {
			if m.Current >= 0 {
				return PermissionMenu{}, 0, false
			}
			label, m.Current = strings.TrimSpace(l), len(m.Labels)
		}
		if r[1] != "" {
			if m.Selected >= 0 {
				return PermissionMenu{}, 0, false
			}
			m.Selected = len(m.Labels)
		}
		m.Labels = append(m.Labels, label)
	}
	return PermissionMenu{}, 0, false
}

// ScrollMarker reports whether a menu row is a scroll marker: "↓", "↑",
// or "↓ 2 more" (the menu has rows above or below its visible window).
func ScrollMarker(row string) bool {
	t := strings.TrimSpace(row)
	return strings.HasPrefix(t, "↓") || strings.HasPrefix(t, "↑")
}

// MenuOpen reports whether c shows a menu under heading (a "*" suffix
// matches a prefix) with hint in a row below it, read whole or not: how
// a surface a control left open is found for its repair.
func MenuOpen(c screen.Capture, heading, hint string) bool {
	prefix, isPrefix := strings.CutSuffix(heading, "*")
	start := c.LastIndex(0, c.Bottom(), func(s string) bool {
		t := strings.TrimSpace(s)
		return t == heading || (isPrefix && strings.HasPrefix(t, prefix))
	})
	return start >= 0 && c.LastIndex(start+1, c.Bottom(), func(s string) bool { return strings.Contains(s, hint) }) >= 0
}

// ModelPlan is how a version shows and changes its model and reasoning
// effort. Claude Code shows the effort on its model screen as a slider
// (EffortLess/EffortMore move it one level); Codex asks for the effort in
// a second menu after the model (ReadEffortMenu).
type ModelPlan struct {
	Command *CommandPlan
	// ReadModels reads the model menu: its options, the selected one (the
	// model in effect when the menu opens).
	ReadModels func(c screen.Capture) (PermissionMenu, bool)
	// Slider (Claude Code): the effort levels in order, the one the model
	// screen shows, the keys that move it, the key that applies the pick
	// to this session only.
	Efforts    []string
	ReadEffort func(c screen.Capture) (string, bool)
	EffortLess string
	EffortMore string
	ApplyKey   string
	// Menu (Codex): Enter on a model opens its effort menu; the effort in
	// effect is read from the idle screen.
	ReadEffortMenu func(c screen.Capture) (PermissionMenu, bool)
	CurrentEffort  func(c screen.Capture) (string, bool)
	// Scope is what a change applies to: "current_session" (Claude Code's
	// session-only key) or "current_and_new_sessions" (Codex persists it).
	Scope string
	// Open reports whether a model or effort menu of this plan is drawn,
	// whole or not (one that scrolls, or lists no model in effect).
	Open func(c screen.Capture) bool
	// ReadModelWindow, when set, reads the visible window of a model menu
	// that may scroll (Above, Below; Current -1 when the model in effect is
	// not in view): the read walks the selection through it one proven row
	// at a time to list every model, and a change needs only the window
	// the menu opens on (the model in effect selected).
	ReadModelWindow func(c screen.Capture) (PermissionMenu, bool)
}

// LabelID is the semantic id of a menu label: its words in lower case
// joined by "_", markers such as "(current)", "(default)",
// "(recommended)" and "✔" dropped.
func LabelID(label string) string {
	for _, m := range []string{"(current)", "(default)", "(recommended)", "✔"} {
		label = strings.ReplaceAll(label, m, " ")
	}
	f := strings.FieldsFunc(strings.ToLower(label), func(r rune) bool {
		return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '.')
	})
	return strings.Join(f, "_")
}
