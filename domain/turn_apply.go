package domain

import (
	"context"
)

// applyProgress folds what the durable record proves into the Turn.
func (s *turnLedger) applyProgress(t Turn, p TurnProgress) (Turn, string, bool) {
	if !p.LastActivity.IsZero() && p.LastActivity.After(t.LastActivityAt) {
		t.LastActivityAt = p.LastActivity.UTC()
	}
	if p.LatestText != "" {
		t.LatestText = boundText(s.turns.redact, p.LatestText, StoredCommentaryLimit)
	}
	if len(p.Actions) > 0 {
		t.Actions = append([]ProgressAction(nil), p.Actions...)
	}
	if !p.LatestItemAt.IsZero() {
		t.LatestItemAt = p.LatestItemAt.UTC()
	}
	t.NewChanges = append(t.NewChanges, s.storedChanges(p.Changes)...)
	if p.Accepted && t.AcceptedAt.IsZero() {
		t.AcceptedAt = s.clock.Now().UTC()
		if p.NativeThreadID != "" {
			t.NativeThreadID = p.NativeThreadID
		}
		t.NativeTurnID = p.NativeTurnID
	}
	if p.Accepted && t.State == TurnDispatching {
		// Acceptance is announced first, even when the same read already
		// shows the end: the next read (from the returned mark) reports it.
		t.State = TurnWorking
		return t, "turn.accepted", true
	}
	switch {
	case p.Completed:
		t.State, t.FinalMessage = TurnCompleted, s.redact(p.FinalMessage)
		return t, "turn.completed", true
	case p.Failed:
		t.State, t.FailureReason = TurnFailed, s.redact(p.FailureReason)
		return t, "turn.failed", true
	case p.Interrupted && t.CancelRequested:
		t.State = TurnCancelled
		return t, "turn.cancelled", true
	case p.Interrupted && t.State != TurnWaitingForHost:
		t.State, t.FailureReason = TurnWaitingForHost, "the turn was interrupted in the pane; the agent waits for instructions"
		return t, "turn.waiting_for_host", true
	}
	return t, "", false
}

// promptFingerprint is the fingerprint of the permission prompt or
// questionnaire step a Turn in state waits on, "" when none is read.
func (s *Monitors) promptFingerprint(ctx context.Context, state TurnState, term Terminal) string {
	switch {
	case term.ID == "":
	case state == TurnAwaitingApproval && s.ac.approvals != nil:
		if pr, err := s.ac.approvals.Prompt(ctx, term); err == nil && pr.Present {
			return pr.Fingerprint
		}
	case state == TurnAwaitingInteraction && s.ic.interactions != nil:
		if st, err := s.ic.interactions.Step(ctx, term); err == nil && st.Present {
			return st.Fingerprint
		}
	}
	return ""
}

func announceType(state TurnState) string {
	if state == TurnAwaitingApproval {
		return "turn.approval_required"
	}
	return "turn.interaction_required"
}

// redact hides secret-looking strings: none crosses the public API.
func (s *turnLedger) redact(text string) string {
	if s.turns == nil || s.turns.redact == nil {
		return text
	}
	return s.turns.redact.Redact(text)
}

// applyScreen reflects prompts the screen shows while the Turn works.
func applyScreen(t Turn, term Terminal) (Turn, string, bool) {
	switch {
	case t.State == TurnWorking && term.ScreenState == ScreenAwaitingApproval:
		t.State = TurnAwaitingApproval
		return t, "turn.approval_required", true
	case t.State == TurnWorking && term.ScreenState == ScreenAwaitingInteraction:
		t.State = TurnAwaitingInteraction
		return t, "turn.interaction_required", true
	case (t.State == TurnAwaitingApproval || t.State == TurnAwaitingInteraction) && term.ScreenState == ScreenWorking:
		t.State = TurnWorking
		return t, "turn.working", false
	}
	return t, "", false
}
