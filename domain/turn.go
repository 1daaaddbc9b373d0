package domain

import (
	"strings"
	"time"
	"unicode/utf8"
)

// TurnState is where a Turn stands. The names are part of the API.
type TurnState string

const (
	TurnDispatching         TurnState = "dispatching"
	TurnWorking             TurnState = "working"
	TurnAwaitingApproval    TurnState = "awaiting_approval"
	TurnAwaitingInteraction TurnState = "awaiting_interaction"
	TurnWaitingForHost      TurnState = "waiting_for_host"
	TurnCompleted           TurnState = "completed"
	TurnFailed              TurnState = "failed"
	TurnCancelled           TurnState = "cancelled"
	TurnStalled             TurnState = "stalled"
	TurnDeliveryUncertain   TurnState = "delivery_uncertain"
	TurnResponseUncertain   TurnState = "response_uncertain"
	TurnClosed              TurnState = "closed"
)

// Active reports whether the Turn still holds its terminal: no other Turn
// may be sent there, and the monitor watches it.
func (s TurnState) Active() bool {
	switch s {
	case TurnDispatching, TurnWorking, TurnAwaitingApproval, TurnAwaitingInteraction, TurnWaitingForHost:
		return true
	}
	return false
}

// Monitored reports whether the monitor follows a Turn in this state.
func (s TurnState) Monitored() bool { return s.Active() }

// Final reports whether nothing more happens to the Turn (closed, or an end
// no action can reopen). stalled, delivery_uncertain and response_uncertain
// still hold the terminal until renewed, recovered or closed.
func (s TurnState) Final() bool {
	switch s {
	case TurnCompleted, TurnFailed, TurnCancelled, TurnClosed:
		return true
	}
	return false
}

// HoldsTerminal reports whether a Turn in this state blocks new sends to its
// terminal: an unproven outcome keeps the pane AKK's until a person closes
// or recovers the Turn.
func (s TurnState) HoldsTerminal() bool {
	return s.Active() || s == TurnStalled || s == TurnDeliveryUncertain || s == TurnResponseUncertain
}

// DeliveryPath is how a Send reached the pane. The names are part of the API.
type DeliveryPath string

const (
	// PathManaged: an idle pane with an empty composer that no Turn held.
	PathManaged DeliveryPath = "managed"
	// PathUserExplicit: the caller named the terminal and AKK proved the
	// live pane and its agent, but not the managed path's stronger
	// conditions (a draft in the composer, a broken Turn of the caller's
	// holding it): the draft is cleared with the profile's one native key
	// (Claude Code's stash keeps it for the person) before the request.
	PathUserExplicit DeliveryPath = "terminal_user_explicit"
	// PathCodexBackend: the request went to a backend conversation's
	// thread through Codex's app-server daemon (turn/start); no key.
	PathCodexBackend DeliveryPath = "codex_backend"
)

// OrManaged is p, or managed for a Turn stored before paths existed.
func (p DeliveryPath) OrManaged() DeliveryPath {
	if p == "" {
		return PathManaged
	}
	return p
}

// Outcome says what a terminal-touching call actually did.
type Outcome string

const (
	OutcomeDone                Outcome = "done"
	OutcomeRejectedBeforeInput Outcome = "rejected_before_input"
	OutcomeUncertain           Outcome = "uncertain"
)

// Turn is one request dispatched to an agent terminal, from reservation to
// its final state and callback.
type Turn struct {
	ID           string
	HostID       string // "" when the operator sent it
	Conversation string // the controller's AKK-Conversation
	SessionID    string
	TerminalID   string      // the endpoint's public id
	Endpoint     EndpointRef // what the Turn holds, stored as it is
	MessageID    string      // idempotency key, "" when none was given

	// OriginalRequest is what the Turn was sent with (idempotency compares it).
	OriginalRequest string
	// Request is the text of the current dispatch (the original request, or
	// the latest respond). Private: it matches acceptance.
	Request     string
	State       TurnState
	SubmitStage SubmitStage
	Mark        DurableMark

	NativeThreadID string
	NativeTurnID   string
	LatestText     string
	FinalMessage   string
	FailureReason  string
	// CancelRequested is set, durably, before AKK presses the interrupt key.
	CancelRequested bool
	// DeliveryPath is how the request reached the pane.
	DeliveryPath DeliveryPath
	// Actions are the native turn's latest actions (at most two), and
	// LatestItemAt the agent's timestamp of its newest public item.
	Actions      []ProgressAction
	LatestItemAt time.Time

	InactivityLimit time.Duration
	HardTimeout     time.Duration

	CreatedAt      time.Time
	UpdatedAt      time.Time
	AcceptedAt     time.Time
	LastActivityAt time.Time
	EndedAt        time.Time
	Revision       int64

	// NewChanges are file changes read from the record and not yet
	// stored: the transition that stores the Turn appends them to its
	// changes, in the same transaction, and clears them.
	NewChanges []TurnChange
}

// HardDeadline is when observation of the Turn ends.
func (t Turn) HardDeadline() time.Time { return t.CreatedAt.Add(t.HardTimeout) }

// InactivityDeadline is when the Turn stalls without activity.
func (t Turn) InactivityDeadline() time.Time {
	last := t.LastActivityAt
	if last.IsZero() {
		last = t.UpdatedAt
	}
	return last.Add(t.InactivityLimit)
}

// Session binds one terminal to one native thread for one owner.
type Session struct {
	ID             string
	HostID         string
	TerminalID     string
	NativeThreadID string // "" until the first accepted Turn proves it
	CreatedAt      time.Time
	Revision       int64
}

// TurnFilter selects Turns.
type TurnFilter struct {
	HostID   string // "" with All: every owner
	All      bool
	State    TurnState
	Terminal string
	Holding  bool // only Turns that hold their terminal
	// Owned: only the Turns this daemon monitors (in a fleet, those its
	// node started; a daemon on its own owns every Turn).
	Owned bool
	Limit int
}

// ProgressLimit bounds the public progress text, in code points.
const ProgressLimit = 800

// FailureReasonLimit bounds the reason an agent gave for a failed turn, in
// code points.
const FailureReasonLimit = 500

// boundText redacts, then truncates to max code points.
func boundText(r Redactor, s string, max int) string {
	if r != nil {
		s = r.Redact(s)
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	runes := []rune(s)
	return strings.TrimRightFunc(string(runes[:max]), func(r rune) bool { return r == ' ' }) + "…"
}

// Redactor hides secret-looking strings in text shown to a controller.
type Redactor interface{ Redact(string) string }
