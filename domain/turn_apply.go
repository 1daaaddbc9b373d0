package domain

func announceType(state TurnState) string {
	if state == TurnAwaitingApproval {
		return "turn.approval_required"
	}
	return "turn.interaction_required"
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
