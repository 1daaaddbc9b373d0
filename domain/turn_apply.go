package domain

func announceType(state TurnState) string {
	if state == TurnAwaitingApproval {
		return "turn.approval_required"
	}
	return "turn.interaction_required"
}

// applyAsks reflects what the agent asks while the Turn works: a prompt
// or step it waits on, or none any more.
func applyAsks(t Turn, a Asking) (Turn, string, bool) {
	switch {
	case t.State == TurnWorking && a == AskingApproval:
		t.State = TurnAwaitingApproval
		return t, "turn.approval_required", true
	case t.State == TurnWorking && a == AskingQuestion:
		t.State = TurnAwaitingInteraction
		return t, "turn.interaction_required", true
	case (t.State == TurnAwaitingApproval || t.State == TurnAwaitingInteraction) && a == AskingNothing:
		t.State = TurnWorking
		return t, "turn.working", false
	}
	return t, "", false
}

// screenAsks is what a screen shows the agent asking.
func screenAsks(term Terminal) Asking {
	switch term.ScreenState {
	case ScreenAwaitingApproval:
		return AskingApproval
	case ScreenAwaitingInteraction:
		return AskingQuestion
	case ScreenWorking:
		return AskingNothing
	}
	return AskingUnknown
}
