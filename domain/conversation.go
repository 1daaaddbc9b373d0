package domain

import (
	"strings"
	"time"
)

// Conversation is one agent terminal as a controller sees it: what AKK can
// prove about it now and the actions it may take.
type Conversation struct {
	ID string
	// Endpoint is what the row's Turns drive: its pane, or its Codex
	// thread (a row merged from both drives the thread).
	Endpoint EndpointRef
	Terminal Terminal
	// Backend is set (and Terminal zero) for a thread of a Codex
	// app-server daemon, driven through the daemon.
	Backend *BackendThread
	Actions []Action
	// SessionID is the caller's AKK session on this terminal, if any.
	SessionID string
	// CurrentTurn holds the terminal now; RecentTurn is the caller's latest
	// ended Turn there. Only Turns the caller may see are shown.
	CurrentTurn, RecentTurn *Turn
	// WaitingSince is when CurrentTurn began to wait on a person (a
	// prompt, a question, or the host's words); zero when it does not.
	WaitingSince time.Time
	// HeldByOther: a Turn the caller may not see holds the terminal.
	HeldByOther bool
	// Approval is the permission prompt the pane shows, offered to the caller.
	Approval *ApprovalView
	// Watches are the caller's active Watches of this terminal.
	Watches []Watch
	// PaneID is, on a row merged from a pane's and a thread's, the pane's
	// own conversation id, which the row answers to too.
	PaneID string
}

// Action is one call a controller may make now, with its semantic ids
// prefilled. It is the only authority for what may be called.
type Action struct {
	Name string
	// On is what the action acts on, ID which one (none for a
	// collection): the handlers map Name and On to a method and a route.
	On ActionOn
	ID string
	// Body is the request body with its semantic ids prefilled; nil when
	// the route takes none. As given it satisfies the contract, apart from
	// the user content Input names.
	Body map[string]any
	// Input names the user content the caller adds to Body (e.g. request).
	Input []string
	// Target says what a send follows: "terminal_follow_current" (whatever
	// conversation the pane shows now) or "session_exact" (only the native
	// conversation of the caller's session).
	Target string
}

// Send targets.
const (
	TargetTerminal = "terminal_follow_current"
	TargetSession  = "session_exact"
)

// UnavailableTurn is a Turn of the caller that still needs attention while
// its pane is gone: only record-side actions remain.
type UnavailableTurn struct {
	Turn    Turn
	Actions []Action
}

// ConversationList is what List shows.
type ConversationList struct {
	Conversations []Conversation
	Unavailable   []UnavailableTurn
}

// ConversationIDFor is the conversation id of a terminal: as stable as the
// terminal id itself.
func ConversationIDFor(terminalID string) string {
	return "conv_" + strings.TrimPrefix(terminalID, "term_")
}

// Terminals are the ports conversations and the doctor read.
type Terminals interface {
	TerminalDiscovery
	TerminalDiagnostics
}

// ActionOn names the kind of record an action acts on.
type ActionOn string

const (
	OnTurns    ActionOn = "turns"    // the collection: a Send makes a Turn
	OnTurn     ActionOn = "turn"     // one Turn
	OnTerminal ActionOn = "terminal" // one terminal (a pane or a Codex thread)
	OnWatches  ActionOn = "watches"  // the collection: a new Watch
	OnWatch    ActionOn = "watch"    // one Watch
)

// ActionKinds lists every action the domain offers, by what it acts on:
// the handlers give each its route.
var ActionKinds = map[ActionOn][]string{
	OnTurns:    {"send"},
	OnTurn:     {"status", "respond", "cancel", "renew", "recover", "close", "retry_callback", "respond_interaction", "approve"},
	OnTerminal: {"threads", "new_thread", "resume_thread", "model_options", "set_model", "permission_options", "set_permissions", "native_inspect", "identify_foreground", "repair_model_control", "approve"},
	OnWatches:  {"watch"},
	OnWatch:    {"status", "unwatch"},
}

func act(name string, on ActionOn, id string, body map[string]any, input ...string) Action {
	return Action{Name: name, On: on, ID: id, Body: body, Input: input}
}

// turnsOf sets the row's Turns from its endpoint's newest Turns: the one
// holding it (the caller's, else HeldByOther), the caller's latest ended
// one, and the caller's latest session. held: a Turn holds the endpoint.
func (c *Conversation) turnsOf(p Principal, newest []Turn) (held bool) {
	for _, x := range newest {
		if x.State.HoldsTerminal() {
			held = true
			if p.CanSeeHost(x.HostID) {
				c.CurrentTurn = &x
			} else {
				c.HeldByOther = true
			}
			continue
		}
		if c.RecentTurn == nil && p.CanSeeHost(x.HostID) {
			c.RecentTurn = &x
		}
	}
	for _, x := range newest {
		if p.CanSeeHost(x.HostID) {
			c.SessionID = x.SessionID
			break
		}
	}
	return held
}
