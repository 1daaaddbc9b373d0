package claude

import (
	"regexp"
	"strings"

	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// NativeRules implements agent.NativeProfile.
func (p Profile) NativeRules() agent.NativeRules { return p.Native }

// nativeRules are the plans every profiled Claude Code version shares
// (measured on each: the command menu above the composer selects its first
// entry; 2.1.328 and later mark it "❯"; /status opens the Status tab of a
// settings panel that Esc closes; /clear starts a new session, which the
// session record names at once; /resume <id> resumes that session without
// its picker).
func nativeRules(p Profile) agent.NativeRules {
	typed := func(c screen.Capture, command string) bool { return p.typedCommand(c, command) }
	return agent.NativeRules{
		Status: &agent.StatusPlan{
			CommandPlan: agent.CommandPlan{Command: "/status", Menu: typed},
			Read:        readStatusPanel,
			Dismiss:     "Escape",
		},
		NewThread: &agent.CommandPlan{Command: "/clear", Menu: typed},
		Resume:    &agent.CommandPlan{Command: "/resume", Menu: typed},
		Permissions: &agent.PermissionPlan{
			Modes: claudeModes, Cycle: true, CycleKey: "BTab", Current: p.permissionMode,
		},
		Models: claudeModels(p),
	}
}

// typedCommand: the composer holds exactly command on one row, and the
// command menu drawn right above the composer selects exactly it (none is
// open for a command with an argument).
func (p Profile) typedCommand(c screen.Capture, command string) bool {
	rows, ok := p.ComposerText(c)
	if !ok || len(rows) != 1 || rows[0] != command {
		return false
	}
	lower := c.LastIndex(0, c.Bottom(), isRule)
	upper := c.LastIndex(0, lower, isRule)
	return agent.MenuSelects(c, upper-12, upper, command)
}

// readStatusPanel reads the Status tab of Claude Code's settings panel:
// the tab row, the fields, and the key hint that closes it, all on screen.
func readStatusPanel(c screen.Capture) (agent.StatusCard, bool) {
	var card agent.StatusCard
	tabs, hint := -1, -1
	for i, l := range c.Lines {
		t := strings.TrimSpace(l.Text)
		switch {
		case strings.HasPrefix(t, "Settings") && strings.Contains(t, "Status") && strings.Contains(t, "Config"):
			tabs = i
		case strings.Contains(t, "Esc to close") || strings.Contains(t, "Esc to cancel"):
			hint = i
		}
		if tabs < 0 {
			continue
		}
		if v, ok := agent.Field(l.Text, "Session ID"); ok && card.SessionID == "" {
			card.SessionID = v
		}
		if v, ok := agent.Field(l.Text, "Version"); ok && card.Version == "" {
			card.Version = v
		}
		if v, ok := agent.Field(l.Text, "cwd"); ok && card.Directory == "" {
			card.Directory = v
		}
		if v, ok := agent.Field(l.Text, "Model"); ok && card.Model == "" {
			card.Model = v
		}
	}
	if tabs < 0 || hint < tabs || !agent.IsUUID(card.SessionID) || card.Version == "" {
		return agent.StatusCard{}, false
	}
	return card, true
}

// claudeModes are the permission modes Claude Code's Shift+Tab cycles
// through, as its footer names them ("⏸ manual mode on", "⏵⏵ accept edits
// on", ...). A setup that leaves one out of the cycle skips it.
var claudeModes = []agent.PermissionMode{
	{Mode: "manual", Label: "manual mode"},
	{Mode: "accept_edits", Label: "accept edits"},
	{Mode: "plan", Label: "plan mode"},
	{Mode: "auto", Label: "auto mode"},
}

// permissionMode reads the mode from the footer under the composer.
func (p Profile) permissionMode(c screen.Capture) (string, bool) {
	bottom := c.Bottom()
	lower := c.LastIndex(0, bottom, isRule)
	if lower < 0 {
		return "", false
	}
	found := ""
	for i := lower + 1; i < bottom && i <= lower+3; i++ {
		for _, m := range claudeModes {
			if strings.Contains(c.Lines[i].Text, m.Label+" on") {
				if found != "" && found != m.Mode {
					return "", false
				}
				found = m.Mode
			}
		}
	}
	return found, found != ""
}

// claudeEfforts are the levels of Claude Code's effort slider, in order.
var claudeEfforts = []string{"low", "medium", "high", "xhigh", "max"}

var effortRow = regexp.MustCompile(`^\s*\S\s+(Low|Medium|High|xHigh|Max) effort\b`)

// readEffort reads the effort row of the model screen.
func readEffort(c screen.Capture) (string, bool) {
	for i := c.Bottom() - 1; i >= 0; i-- {
		if m := effortRow.FindStringSubmatch(c.Lines[i].Text); m != nil {
			return strings.ToLower(m[1]), true
		}
	}
	return "", false
}

func claudeModels(p Profile) *agent.ModelPlan {
	typed := func(c screen.Capture, command string) bool { return p.typedCommand(c, command) }
	return &agent.ModelPlan{
		Command: &agent.CommandPlan{Command: "/model", Menu: typed},
		ReadModels: func(c screen.Capture) (agent.PermissionMenu, bool) {
			return agent.ReadNumberedMenu(c, "Select model", "Esc to cancel")
		},
		Efforts: claudeEfforts, ReadEffort: readEffort, EffortLess: "Left", EffortMore: "Right", ApplyKey: "s",
		Scope: "current_session",
		Open:  func(c screen.Capture) bool { return agent.MenuOpen(c, "Select model", "Esc to cancel") },
		// A short pane scrolls the list ("↑ 2 more", "↓ 2 more").
		ReadModelWindow: func(c screen.Capture) (agent.PermissionMenu, bool) {
			return agent.ReadNumberedWindow(c, "Select model", "Esc to cancel")
		},
	}
}
