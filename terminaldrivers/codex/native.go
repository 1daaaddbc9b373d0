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
			ReadAnywhere: readLastCard,
			Count:        CountStatusCards,
		},
		NewThread: &agent.CommandPlan{Command: "/new", Menu: typed},
		Resume:    &agent.CommandPlan{Command: "/resume", Menu: typed},
	}
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
	}
	return cardAt(c, session, card)
}

// readLastCard reads the bottom-most /status card on screen, wherever it
// is (while a task runs, its live output follows the card).
func readLastCard(c screen.Capture) (agent.StatusCard, bool) {
	for i := c.Bottom() - 1; i >= 0; i-- {
		if v, ok := agent.Field(c.Lines[i].Text, "Session"); ok {
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
	for i := session - 1; i >= max(0, session-16); i-- {
		t := c.Lines[i].Text
		if m := cardVersion.FindStringSubmatch(t); m != nil {
			card.Version = m[1]
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
	if card.Version == "" || card.Directory == "" {
		return agent.StatusCard{}, false
	}
	return card, true
}

// CountStatusCards counts the /status cards in rows (the pane with its
// history): a fresh card is one more than before the command.
func CountStatusCards(rows []string) int {
	n := 0
	for _, r := range rows {
		if v, ok := agent.Field(r, "Session"); ok && agent.IsUUID(v) {
			n++
		}
	}
	return n
}
