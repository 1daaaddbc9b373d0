package codex

import (
	"regexp"
	"strings"

	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// NativeRules implements agent.NativeProfile.
func (p Profile) NativeRules() agent.NativeRules { return p.Native }

// nativeRules are the plans every profiled Codex version shares (measured
// on each: the command menu selects its first entry, drawn under the
// composer up to 0.155.1 and above it, marked "›", from 0.158.0; /status
// prints a card into the transcript naming the thread's complete id in a
// pane of at least 80 columns; /new starts a thread that Codex records
// only at its first request; /resume <id> resumes that thread without its
// picker).
func nativeRules(p Profile) agent.NativeRules {
	typed := func(c screen.Capture, command string) bool { return p.typedCommand(c, command) }
	return agent.NativeRules{
		Status: &agent.StatusPlan{
			CommandPlan:  agent.CommandPlan{Command: "/status", Menu: typed, MinWidth: 80},
			Read:         p.readStatusCard,
			ReadAnywhere: p.readLastCard,
			Inline:       true,
		},
		NewThread: &agent.CommandPlan{Command: "/new", Menu: typed},
		Resume:    &agent.CommandPlan{Command: "/resume", Menu: typed},
		Permissions: &agent.PermissionPlan{
			Modes: codexModes,
			Menu:  &agent.CommandPlan{Command: "/permissions", Menu: typed},
			ReadMenu: func(c screen.Capture) (agent.PermissionMenu, bool) {
				m, ok := agent.ReadNumberedMenu(c, "Update Model Permissions", p.MenuHint)
				return m, ok && m.Current >= 0
			},
			ReadConfirm: func(c screen.Capture) bool {
				m, ok := agent.ReadNumberedMenu(c, "Enable full access?", p.MenuHint)
				return ok && m.Labels[m.Selected] == "Yes, continue anyway"
			},
		},
		Models: codexModels(p),
	}
}

// codexModes are the permission modes of Codex's /permissions menu (Read
// Only from 0.158.0); Full Access asks to be confirmed.
var codexModes = []agent.PermissionMode{
	{Mode: "ask_for_approval", Label: "Ask for approval"},
	{Mode: "approve_for_me", Label: "Approve for me"},
	{Mode: "full_access", Label: "Full Access", Confirm: true},
	{Mode: "read_only", Label: "Read Only"},
}

// withNative is p with its native control plans.
func withNative(p Profile) Profile {
	p.Native = nativeRules(p)
	return p
}

// typedCommand: the composer row holds exactly command, and the command
// menu next to it (under it or above it, by version) selects exactly it.
func (p Profile) typedCommand(c screen.Capture, command string) bool {
	bottom := c.Bottom()
	at := -1
	for i := bottom - 1; i >= max(0, bottom-12); i-- {
		if strings.TrimRight(c.Lines[i].Text, " \u00a0") == p.Composer+" "+command {
			at = i
			break
		}
	}
	if at < 0 {
		return false
	}
	return agent.MenuSelects(c, at-8, min(bottom, at+8), command)
}

var cardVersion = regexp.MustCompile(`OpenAI Codex \(v([0-9][0-9A-Za-z.+-]*)\)`)

// readStatusCard reads the newest /status card: its Session row, with the
// card's header and fields above it, and nothing but the card's own rows
// between it and the composer (the card is the last thing printed).
func (p Profile) readStatusCard(c screen.Capture) (agent.StatusCard, bool) {
	bottom := c.Bottom()
	composer := c.LastIndex(max(0, bottom-4), bottom, func(s string) bool { return strings.HasPrefix(s, p.Composer) })
	if composer < 0 {
		return agent.StatusCard{}, false
	}
	session := -1
	var card agent.StatusCard
	// Up to eight of the card's own rows (blank rows aside: 0.169.0 and
	// later leave blank rows between the transcript and the composer).
	for i, rows := composer-1, 0; i >= 0 && rows < 8; i-- {
		t := c.Lines[i].Text
		if screen.Blank(t) {
			continue
		}
		rows++
		if v, ok := agent.Field(t, "Session"); ok {
			session, card.SessionID = i, v
			break
		}
		if strings.HasPrefix(t, p.Composer) || strings.HasPrefix(t, "•") {
			return agent.StatusCard{}, false // a prompt or output after the card
		}
	}
	return cardAt(c, session, card)
}

// readLastCard reads the bottom-most /status card on screen, wherever it
// is above the composer (while a task runs, its live output follows the
// card), provided no prompt row lies between it and the composer: a card
// printed before the task the person typed is not this task's.
func (p Profile) readLastCard(c screen.Capture) (agent.StatusCard, bool) {
	bottom := c.Bottom()
	composer := c.LastIndex(max(0, bottom-4), bottom, func(s string) bool { return strings.HasPrefix(s, p.Composer) })
	if composer < 0 {
		return agent.StatusCard{}, false
	}
	for i := composer - 1; i >= 0; i-- {
		t := c.Lines[i].Text
		if strings.HasPrefix(t, p.Composer) {
			return agent.StatusCard{}, false // a prompt after any card
		}
		if v, ok := agent.Field(t, "Session"); ok {
			return cardAt(c, i, agent.StatusCard{SessionID: v})
		}
	}
	return agent.StatusCard{}, false
}

// cardAt reads the card whose Session row is at session.
func cardAt(c screen.Capture, session int, card agent.StatusCard) (agent.StatusCard, bool) {
	if session < 0 || !agent.IsUUID(card.SessionID) {
		return agent.StatusCard{}, false
	}
	header := -1
	for i := session - 1; i >= max(0, session-16); i-- {
		t := c.Lines[i].Text
		if m := cardVersion.FindStringSubmatch(t); m != nil {
			card.Version, header = m[1], i
			break
		}
		if v, ok := agent.Field(t, "Model"); ok {
			card.Model = v
		}
		if v, ok := agent.Field(t, "Directory"); ok {
			card.Directory = v
		}
		if v, ok := agent.Field(t, "Permissions"); ok {
			card.Permissions = v
		}
	}
	if card.Version == "" || card.Directory == "" || !echoAbove(c, header) {
		return agent.StatusCard{}, false
	}
	return card, true
}

// echoAbove reports whether the typed "/status" is echoed right above the
// card's header row (a box's top border or blank rows between).
func echoAbove(c screen.Capture, header int) bool {
	for i := header - 1; i >= max(0, header-3); i-- {
		t := strings.TrimSpace(c.Lines[i].Text)
		switch {
		case t == "/status":
			return true
		case t == "" || strings.HasPrefix(t, "╭"):
			continue
		default:
			return false
		}
	}
	return false
}

// modelRow is an option of Codex's model menu: the selection glyph, an
// optional number (a scrolled list drops it), the label, two or more
// spaces, its description.
var modelRow = regexp.MustCompile(`^([›>]?)\s*(?:\d+\.)?\s+(\S.*?)\s{2,}\S`)

// readModelMenu reads the model menu whole: no rows above or below the
// window, the model in effect among them.
func (p Profile) readModelMenu(c screen.Capture) (agent.PermissionMenu, bool) {
	m, ok := p.readModelWindow(c)
	if !ok || m.Above || m.Below || m.Current < 0 {
		return agent.PermissionMenu{}, false
	}
	return m, true
}

// readModelWindow reads the model menu's visible window: the rows between
// its heading and its key hint, a "↑" above them and a "↓" below them
// when it scrolls (0.169.0 and later show eight rows; rows past 9 have no
// number).
func (p Profile) readModelWindow(c screen.Capture) (agent.PermissionMenu, bool) {
	start := c.LastIndex(0, c.Bottom(), func(s string) bool { return strings.TrimSpace(s) == "Select Model and Effort" })
	if start < 0 {
		return agent.PermissionMenu{}, false
	}
	m := agent.PermissionMenu{Selected: -1, Current: -1}
	for i := start + 1; i < c.Bottom(); i++ {
		t := c.Lines[i].Text
		if strings.Contains(t, p.MenuHint) {
			if m.Selected < 0 || len(m.Labels) == 0 || (p.UnmarkedRows > 0 && len(m.Labels) >= p.UnmarkedRows) {
				return agent.PermissionMenu{}, false // a full window may hide rows no marker names
			}
			return m, true
		}
		if agent.ScrollMarker(t) {
			if strings.HasPrefix(strings.TrimSpace(t), "↑") {
				if len(m.Labels) > 0 {
					return agent.PermissionMenu{}, false
				}
				m.Above = true
			} else {
				m.Below = true
			}
			continue
		}
		if m.Below && strings.TrimSpace(t) != "" {
			return agent.PermissionMenu{}, false // nothing but the hint under the marker below
		}
		r := modelRow.FindStringSubmatch(t)
		if r == nil || strings.HasPrefix(strings.TrimSpace(t), "Access legacy models") {
			continue
		}
		label := strings.TrimSpace(r[2])
		if l, ok := strings.CutSuffix(label, "(current)"); ok {
			label, m.Current = strings.TrimSpace(l), len(m.Labels)
		}
		if r[1] != "" {
			if m.Selected >= 0 {
				return agent.PermissionMenu{}, false
			}
			m.Selected = len(m.Labels)
		}
		m.Labels = append(m.Labels, label)
	}
	return agent.PermissionMenu{}, false
}

// statusEffort maps the effort word of the session status line to the
// effort menu's id ("default": the menu's default).
var statusEffort = map[string]string{"minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": "extra_high", "default": ""}

// currentEffort reads the effort from the status line under the composer
// ("gpt-5.5 high · /path"): its id, "" for the default.
func (p Profile) currentEffort(c screen.Capture) (string, bool) {
	bottom := c.Bottom()
	at := c.LastIndex(max(0, bottom-3), bottom, p.Status.MatchString)
	if at < 0 {
		return "", false
	}
	f := strings.Fields(c.Lines[at].Text)
	if len(f) < 2 {
		return "", false
	}
	e, ok := statusEffort[f[1]]
	return e, ok
}

func codexModels(p Profile) *agent.ModelPlan {
	typed := func(c screen.Capture, command string) bool { return p.typedCommand(c, command) }
	return &agent.ModelPlan{
		Command:         &agent.CommandPlan{Command: "/model", Menu: typed},
		ReadModels:      p.readModelMenu,
		ReadModelWindow: p.readModelWindow,
		ReadEffortMenu: func(c screen.Capture) (agent.PermissionMenu, bool) {
			return agent.ReadNumberedMenu(c, "Select Reasoning Level for *", p.MenuHint)
		},
		CurrentEffort: p.currentEffort,
		Scope:         "current_and_new_sessions",
		Open: func(c screen.Capture) bool {
			return agent.MenuOpen(c, "Select Model and Effort", p.MenuHint) || agent.MenuOpen(c, "Select Reasoning Level for *", p.MenuHint)
		},
	}
}
