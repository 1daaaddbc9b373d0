package domain

import (
	"fmt"
	"time"
)

var zeroTime time.Time

// TurnStatus is a Turn with what its owner should see about its callbacks.
type TurnStatus struct {
	Turn Turn
	// WaitingSince is when the Turn began to wait on a person; zero when
	// it does not.
	WaitingSince  time.Time
	Notifications []Notification
	// Approval is the prompt of a Turn awaiting approval, offered to the caller.
	Approval *ApprovalView
	// Screen is a redacted excerpt of the bottom of the pane while the Turn
	// holds it ("" when it cannot be read).
	Screen string
	// Progress is the public progress body.
	Progress ProgressView
	// Interaction is the questionnaire step of a Turn awaiting an
	// interaction, offered to the caller (as GET …/interaction serves it);
	// nil when there is none or it cannot be read now.
	Interaction *Interaction
	// WatchID is the Send's Watch ("" when none was stored).
	WatchID string
}

// ActionResult is what an action on a Turn did.
type ActionResult struct {
	Turn       Turn
	Outcome    Outcome
	DoNotRetry bool
}

func stateConflict(t Turn, action string) error {
	return E(CodeTurnStateConflict, fmt.Sprintf("turn %s is %s; %s is not possible now", t.ID, t.State, action))
}
