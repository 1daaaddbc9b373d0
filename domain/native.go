package domain

import (
	"context"
	"errors"
	"time"
)

// NativeControls drives an agent's own controls (its status view, its
// new-thread command) as closed, version-profiled plans. The slash
// commands they type are the profile's; nothing of them crosses the API.
// Each method is called under the terminal's lock with t observed there,
// send-ready; it captures the screen again right before its first key and
// sends nothing unless it still proves an idle, empty composer.
type NativeControls interface {
	// StatusCard opens the agent's status view once, reads it and returns
	// the pane to its idle empty composer.
	StatusCard(ctx context.Context, t Terminal) (NativeStatus, AnswerStage, error)
	// WorkingStatusCard is StatusCard on a working pane whose composer is
	// empty (Codex takes its status command while a task runs): the card
	// must be a new one, the composer empty again after it.
	WorkingStatusCard(ctx context.Context, t Terminal) (NativeStatus, AnswerStage, error)
	// NewThread runs the agent's new-thread command once and proves the
	// idle empty composer after it. The record side (which thread the pane
	// shows now) is the caller's to prove, by observing again.
	NewThread(ctx context.Context, t Terminal) (AnswerStage, error)
	// ResumeThread runs the agent's resume command with the complete id of
	// one of its threads once and proves the idle empty composer after it.
	ResumeThread(ctx context.Context, t Terminal, threadID string) (AnswerStage, error)
}

// NativeStatus is what an agent's status view showed, redacted.
type NativeStatus struct {
	NativeThreadID string
	AgentVersion   string
	Model          string
	Directory      string
	Permissions    string // Codex only
}

// ErrNativeUnsupported: the profile has no closed plan for this control
// (or the pane cannot show its result, e.g. too narrow); nothing was sent.
var ErrNativeUnsupported = errors.New("native control not supported here")

// NativeInspection is the result of one native status inspection.
type NativeInspection struct {
	TerminalID            string
	Outcome               Outcome
	DoNotRetry            bool
	Status                *NativeStatus
	IdentityMatchesRecord bool
	Detail                string // why not done
}

// ForegroundProof is a diagnostic of which thread a Codex pane shows. It
// authorizes nothing and means nothing after ExpiresAt.
type ForegroundProof struct {
	TerminalID     string
	Outcome        Outcome
	DoNotRetry     bool
	NativeThreadID string
	RecordPresent  bool
	ProvenAt       time.Time
	ExpiresAt      time.Time
	Detail         string // why not done
}

// ForegroundProofTTL is how long a foreground proof is meaningful.
const ForegroundProofTTL = 30 * time.Second

// NewThreadResult is what a new-thread plan did.
type NewThreadResult struct {
	TerminalID             string
	Outcome                Outcome
	DoNotRetry             bool
	SessionID              string
	NativeThreadID         string
	PreviousNativeThreadID string
	Binding                string // BindingBound, BindingPendingFirstTurn, BindingNone
	Detail                 string // why not done
}

const (
	BindingBound            = "bound"
	BindingPendingFirstTurn = "pending_first_turn"
	BindingNone             = "none"
)

// InspectionStatus is the one native inspection offered.
const InspectionStatus = "status"
