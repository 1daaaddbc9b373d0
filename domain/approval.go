package domain

import (
	"errors"
	"time"
)

// Offer is what a controller was shown and may answer: private, short-lived,
// bound to its host, conversation and the exact prompt fingerprint.
type Offer struct {
	ID           string
	Kind         string // "approval"
	TurnID       string // "" for a terminal-scoped offer
	TerminalID   string
	HostID       string
	Conversation string
	Fingerprint  string
	Decisions    []ApprovalDecision
	CreatedAt    time.Time
	ExpiresAt    time.Time
	// PublicID is the id the controller was shown (an interaction_id).
	PublicID string
	// Payload is private data of the offer (an interaction's id mapping).
	Payload string
}

// OfferTTL is how long a shown prompt may be answered.
const OfferTTL = 5 * time.Minute

// ErrFingerprintConsumed: this exact prompt was answered before.
var ErrFingerprintConsumed = errors.New("fingerprint already answered")

// ApprovalView is the public projection of a permission prompt.
type ApprovalView struct {
	PromptKind     string
	Tool           string
	CommandExcerpt string
	Decisions      []ApprovalDecision
	ExpiresAt      time.Time
	// ManualRequired: AKK will not answer this prompt; a person must.
	ManualRequired bool
	Reason         string
	// WaitingSince is when the prompt began to wait: its Turn's
	// announcement, or, in a pane no Turn holds, when this daemon first
	// saw it.
	WaitingSince time.Time
}

// unreadablePrompt is the view of a permission prompt that could not be
// read (a transient capture error, a profile without a grammar): shown,
// never answerable, so a status or a list still answers.
func unreadablePrompt(err error) *ApprovalView {
	reason := "the permission prompt could not be read; answer it in the pane"
	var de *Error
	if errors.As(err, &de) && de.Message != "" {
		reason = "the permission prompt could not be read (" + de.Message + "); answer it in the pane"
	}
	return &ApprovalView{ManualRequired: true, Reason: reason}
}

func checkDecision(d ApprovalDecision) error {
	if d != ApproveOnce && d != Reject {
		return Invalid("decision must be approve_once or reject", FieldError{Field: "decision", Message: "approve_once or reject"})
	}
	return nil
}
