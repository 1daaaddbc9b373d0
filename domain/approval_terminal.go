package domain

import (
	"context"
	"errors"
)

// ApprovalTerminal is what permission decisions need from the terminal
// side: read the one permission prompt a profile can prove, and answer it
// with the profile's closed key plan, fenced by the prompt's fingerprint.
type ApprovalTerminal interface {
	// Prompt looks at t's screen now and isolates its bottom-most complete
	// permission prompt. Present is false when there is none.
	Prompt(ctx context.Context, t Terminal) (ApprovalPrompt, error)

	// Answer recaptures the screen and, only if the prompt there has exactly
	// the fingerprint fp, sends the profile's key plan for decision once,
	// then verifies the prompt is gone. A different or missing prompt is
	// ErrPromptChanged with AnswerNothing: zero keys. A decision the profile
	// cannot prove for this prompt is ErrDecisionUnavailable, zero keys.
	Answer(ctx context.Context, t Terminal, fp string, d ApprovalDecision) (AnswerStage, error)
}

// ApprovalDecision is a semantic decision; never a key or a menu index.
type ApprovalDecision string

const (
	ApproveOnce ApprovalDecision = "approve_once"
	Reject      ApprovalDecision = "reject"
)

// ApprovalPrompt is one permission prompt as the profile proves it.
type ApprovalPrompt struct {
	Present bool
	// Answerable: the prompt's shape is one the profile has key plans for
	// (a shell command so far). Otherwise the prompt is manual_required and
	// Reason says why.
	Answerable bool
	Reason     string

	Kind           string // e.g. "shell_command"
	Tool           string // the agent's tool name, e.g. "Bash", "exec_command"
	CommandExcerpt string // redacted, bounded
	// Command is the exact command, unredacted, only when the profile read
	// it whole on one row (not wrapped, not cut); "" otherwise. Private:
	// only an exact-command approval rule is compared with it.
	Command string
	// Decisions the profile proves safe for this prompt. Persistent choices
	// ("always allow", "don't ask again", "switch to auto mode") never appear.
	Decisions []ApprovalDecision
	// Fingerprint of the exact unredacted prompt region with the terminal's
	// process identity. Private: never shown to a controller.
	Fingerprint string
	// Channel is where the prompt was read and is answered: the screen
	// (empty) or an exact channel (ChannelHook).
	Channel Channel

	// How an answer to it is taken, as the transport that read it says.
	// RejectEndsTurn: a rejection ends the agent's turn, which then waits
	// for the host's words (keys on a TUI's prompt); else the agent works
	// on with the rejection as the tool's result (a hook, a daemon).
	RejectEndsTurn bool
	// Unproven is why an answer short of verified leaves it unproven;
	// Where is where a person answers it when AKK does not ("in the
	// pane"). Left empty, the domain's general words stand.
	Unproven, Where string
}

// AnswerStage is how far an Answer got.
type AnswerStage string

const (
	AnswerNothing  AnswerStage = "nothing"  // no key was sent
	AnswerSent     AnswerStage = "sent"     // keys sent; the prompt's departure is not proven
	AnswerVerified AnswerStage = "verified" // keys sent and the prompt is gone
)

var (
	// ErrPromptChanged: the screen no longer shows the fingerprinted prompt.
	ErrPromptChanged = errors.New("prompt changed")
	// ErrDecisionUnavailable: the profile proves no key plan for this decision here.
	ErrDecisionUnavailable = errors.New("decision unavailable for this prompt")
)
