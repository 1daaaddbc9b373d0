package domain

import (
	"context"
	"errors"
)

func (s *NativeCases) permissionControls() (PermissionControls, error) {
	pc, ok := s.native.(PermissionControls)
	if !ok {
		return nil, E(CodeUnavailable, "permission controls are not configured")
	}
	return pc, nil
}

// Permissions reads a pane's native permission mode and the modes it
// offers, on an idle pane with an empty composer no Turn holds.
func (s *NativeCases) Permissions(ctx context.Context, terminalID string) (PermissionsResult, error) {
	p, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return PermissionsResult{}, err
	}
	defer unlock()
	pc, err := s.permissionControls()
	if err != nil {
		return PermissionsResult{}, err
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, uncertain, err := s.readPermissions(seq, pc, p, term, "permission_options")
	if err != nil || uncertain != nil {
		return derefResult(uncertain), err
	}
	return PermissionsResult{TerminalID: term.ID, Outcome: OutcomeDone, Current: st.Current, Modes: st.Modes}, nil
}

// readPermissions reads term's mode and the modes it offers. A refusal
// that typed nothing, or a plan that backed out, is an error; an outcome
// not proven (a menu may be open) is an uncertain result, noted on the
// pane as action.
func (s *NativeCases) readPermissions(seq context.Context, pc PermissionControls, p Principal, term Terminal, action string) (PermissionState, *PermissionsResult, error) {
	st, stage, err := pc.Permissions(seq, term)
	if berr := backedOut(err); berr != nil {
		return st, nil, berr
	}
	if err != nil && stage == AnswerNothing {
		return st, nil, nativeRefusal(err)
	}
	if err != nil || (stage != AnswerNothing && stage != AnswerVerified) {
		s.noteNativeUncertain(seq, p, term.ID, action, err)
		return st, &PermissionsResult{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, Detail: s.why(err)}, nil
	}
	return st, nil, nil
}

func derefResult(r *PermissionsResult) PermissionsResult {
	if r == nil {
		return PermissionsResult{}
	}
	return *r
}

// SetPermissions changes a pane's native permission mode to one the
// profile knows (Full Access is an explicit choice whose native
// confirmation AKK answers), then reads it back. A mode already in effect
// is reported as such without a key where the mode is on screen.
func (s *NativeCases) SetPermissions(ctx context.Context, terminalID, mode string) (PermissionsResult, error) {
	if mode == "" || len(mode) > 40 {
		return PermissionsResult{}, Invalid("mode is required", FieldError{Field: "mode", Message: "a mode from the permissions listing"})
	}
	p, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return PermissionsResult{}, err
	}
	defer unlock()
	pc, err := s.permissionControls()
	if err != nil {
		return PermissionsResult{}, err
	}
	seq, done := s.keySequence(ctx)
	defer done()
	before, uncertain, err := s.readPermissions(seq, pc, p, term, "set_permissions")
	if err != nil || uncertain != nil {
		return derefResult(uncertain), err
	}
	offered := false
	for _, m := range before.Modes {
		offered = offered || m.Mode == mode
	}
	if !offered {
		return PermissionsResult{}, E(CodeValidationFailed, "the pane does not offer mode "+mode+"; read its permissions for the modes it offers")
	}
	if before.Current == mode {
		return PermissionsResult{TerminalID: term.ID, Outcome: OutcomeDone, Current: mode, Previous: mode, Modes: before.Modes, AlreadyEffective: true}, nil
	}
	if term, err = s.turns.term.Observe(seq, terminalID); err != nil || !term.SendReady() {
		return PermissionsResult{}, E(CodeTerminalNotIdle, "the pane is not idle with an empty composer after reading its modes; nothing was changed")
	}
	after, stage, err := pc.SetPermissions(seq, term, mode)
	if errors.Is(err, ErrModeUnavailable) {
		return PermissionsResult{}, &Error{Code: CodeManualRequired, Message: "the pane cycled back to " + before.Current + " without offering " + mode + "; its mode is unchanged", Err: err}
	}
	if berr := backedOut(err); berr != nil {
		return PermissionsResult{}, berr
	}
	if err != nil && stage == AnswerNothing {
		return PermissionsResult{}, nativeRefusal(err)
	}
	if err != nil || stage != AnswerVerified || after.Current != mode {
		s.noteNativeUncertain(seq, p, term.ID, "set_permissions", err)
		return PermissionsResult{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, Previous: before.Current, Detail: s.why(err)}, nil
	}
	_ = s.store.InTx(seq, func(tx Tx) error {
		_, err := s.emitLocked(seq, tx, Event{Type: "terminal.permissions_changed", HostID: p.HostID, Conversation: p.Conversation, Subject: term.ID,
			Data: map[string]any{"terminal_id": term.ID, "mode": mode, "previous": before.Current}}, false)
		return err
	})
	return PermissionsResult{TerminalID: term.ID, Outcome: OutcomeDone, Current: after.Current, Previous: before.Current, Modes: after.Modes}, nil
}
