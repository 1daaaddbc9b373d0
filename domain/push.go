package domain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"
)

// Web Push to the dashboard a person installed: each browser subscription
// belongs to a principal, and each new item that waits for a person (a
// permission prompt, a question, a Turn waiting for its host or whose end
// is not proven) sends one push to that principal's subscriptions. The
// VAPID keys are made once and kept in the store, so every node of a fleet
// signs with the same; a cursor in the store says which events were pushed.

// PushSubscription is one browser's Web Push subscription.
type PushSubscription struct {
	Endpoint    string
	Principal   string // "operator" or a host id
	P256dh      string // the browser's public key, base64url
	Auth        string // its auth secret, base64url
	HideDetails bool   // only the agent and project on the lock screen
	UISession   string // the dashboard session that made it ("": none)
	CreatedAt   time.Time
}

// PushFilter picks subscriptions to remove; every field set must match.
type PushFilter struct{ Endpoint, Principal, UISession string }

// PushTx is the part of a store transaction that writes subscriptions.
type PushTx interface {
	PutPushSubscription(ctx context.Context, s PushSubscription) error
	DeletePushSubscriptions(ctx context.Context, f PushFilter) (int64, error)
	// PutSettingOnce stores a setting unless it is set.
	PutSettingOnce(ctx context.Context, key, value string) error
	InsertActionToken(ctx context.Context, a ActionToken) error
	// UseActionToken marks a token used and returns it: ErrNotFound, or
	// ErrActionGone when it was used before or has expired.
	UseActionToken(ctx context.Context, hash string, now time.Time) (ActionToken, error)
	// DeleteActionTokensOf ends every action token of a principal.
	DeleteActionTokensOf(ctx context.Context, principal string) error
}

// ActionToken is a one-tap action on a push: it answers one Turn's prompt
// with one decision, once, as the principal the push went to and in the
// conversation whose offer showed that exact prompt, until it expires.
// Only its hash is stored.
type ActionToken struct {
	Hash         string
	Principal    string
	Conversation string
	TurnID       string
	Decision     ApprovalDecision
	ExpiresAt    time.Time
	CreatedAt    time.Time
}

// ErrActionGone: the action token was used, or has expired.
var ErrActionGone = errors.New("this action was used or has expired")

// ActionTTL bounds how long a one-tap action stays valid (the prompt's
// offer may end it sooner).
var ActionTTL = 5 * time.Minute

// PushAction is one button of a push's notification.
type PushAction struct {
	Action string `json:"action"`
	Title  string `json:"title"`
	Token  string `json:"token"`
}

// PushReader reads subscriptions.
type PushReader interface {
	PushSubscriptions(ctx context.Context) ([]PushSubscription, error)
}

// VAPIDKeys sign pushes (RFC 8292): base64url, as browsers and the sender
// take them.
type VAPIDKeys struct{ Public, Private string }

// PushSender delivers one encrypted push; status is the push service's
// answer (0 when none came).
type PushSender interface {
	NewKeys() (VAPIDKeys, error)
	Send(ctx context.Context, s PushSubscription, payload []byte, keys VAPIDKeys) (status int, err error)
}

const (
	settingVAPID      = "push_vapid_keys"
	settingPushCursor = "push_cursor"
	principalOperator = "operator"
	// pushRetention is how far back a push is still sent after a daemon
	// was down: an older prompt is stale news.
	pushRetention = 10 * time.Minute
)

// pushTypes are the events that start a wait for a person, as the "Needs
// you" queue shows them.
var pushTypes = map[string]string{
	"turn.approval_required":     "asks for permission",
	"turn.interaction_required":  "asks a question",
	"turn.waiting_for_host":      "waits for you",
	"turn.stalled":               "stalled",
	"turn.delivery_uncertain":    "may not have the task (look before resending)",
	"turn.response_uncertain":    "may not have the answer (look before answering again)",
	"turn.interaction_uncertain": "may not have the answer (look before answering again)",
}

func principalName(p Principal) string {
	if p.Operator {
		return principalOperator
	}
	return p.HostID
}

// NewPushSubscription is what a browser's PushSubscription gives, and the
// person's lock-screen choice.
type NewPushSubscription struct {
	Endpoint    string
	P256dh      string
	Auth        string
	HideDetails bool
}

// forgetPushOf removes every subscription and one-tap action of a host
// whose token was rotated or that was deleted, in the caller's transaction.
func forgetPushOf(ctx context.Context, tx Tx, hostID string) error {
	if pt, ok := tx.(PushTx); ok {
		if _, err := pt.DeletePushSubscriptions(ctx, PushFilter{Principal: hostID}); err != nil {
			return err
		}
		return pt.DeleteActionTokensOf(ctx, hostID)
	}
	return nil
}

// PushPayload is what the dashboard's service worker receives.
type PushPayload struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	Tag    string `json:"tag"`
	URL    string `json:"url"`
	TurnID string `json:"turn_id,omitempty"`
	// Actions are the one-tap answers to a permission prompt AKK can
	// prove (approve once, reject), each its own single-use token.
	Actions []PushAction `json:"actions,omitempty"`
}

// actionTitles are the one-tap decisions a push offers, and their buttons.
var actionTitles = []struct {
	d     ApprovalDecision
	title string
}{{ApproveOnce, "Approve once"}, {Reject, "Reject"}}

// ActionTokenHash is how a one-tap action's token is stored and looked up.
func ActionTokenHash(tok string) string { return hashActionToken(tok) }

func hashActionToken(tok string) string {
	sum := sha256.Sum256([]byte("action:" + tok))
	return hex.EncodeToString(sum[:])
}
