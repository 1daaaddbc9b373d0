package domain

import (
	"context"
	"errors"
	"fmt"
)

// sendReady is the rule for typing into a terminal on the managed path.
func sendReady(t Terminal) error {
	switch {
	case !t.Agent.Profiled():
		return E(CodeUnprofiledAgent, fmt.Sprintf("%s %s has no profile; AKK never types into it", t.Agent.Kind, t.Agent.Version))
	case t.ScreenState != ScreenIdle:
		return &Error{Code: CodeTerminalNotIdle, Message: "the terminal is " + string(t.ScreenState) + ", not idle"}
	case !t.ComposerEmpty:
		return E(CodeTerminalNotIdle, "the composer holds text someone typed; AKK will not overwrite it")
	}
	return nil
}

// sendPath decides how a Send may reach terminal t: current is the
// caller's Turn that holds t (nil when none), heldByOther says a Turn the
// caller may not see holds it, and explicit that the caller named t.
//
// The managed path needs an idle screen, an empty composer and no Turn
// holding t. When the caller named t, two things the managed path refuses
// cannot veto the user's Send (the user-explicit path): a draft in the
// composer (cleared once with the profile's native key) and a broken Turn
// of the caller's (stalled or uncertain; it is closed). Everything else
// still refuses before input: an unprofiled agent, another controller's
// Turn, a Turn still running, and any screen but the idle composer (a
// permission prompt, a questionnaire, a menu or viewer, a working task,
// or what AKK cannot read). On a version read with a borrowed profile
// (Compatibility) a draft is refused too: its clear key is not proven there.
func sendPath(t Terminal, current *Turn, heldByOther, explicit bool) (DeliveryPath, error) {
	broken := current != nil && !current.State.Active()
	switch {
	case !t.Agent.Profiled():
		return "", E(CodeUnprofiledAgent, fmt.Sprintf("%s %s has no profile; AKK never types into it", t.Agent.Kind, t.Agent.Version))
	case heldByOther:
		return "", E(CodeConflictActiveTurn, "a Turn of another controller holds this terminal")
	case current != nil && !broken:
		return "", E(CodeConflictActiveTurn, "turn "+current.ID+" ("+string(current.State)+") still holds this terminal")
	case broken && !explicit:
		return "", E(CodeConflictActiveTurn, "turn "+current.ID+" ("+string(current.State)+") still holds this terminal; send with its terminal_id to take the terminal back, or close the turn")
	case t.ScreenState != ScreenIdle:
		return "", &Error{Code: CodeTerminalNotIdle, Message: "the terminal is " + string(t.ScreenState) + ", not idle"}
	case !t.ComposerEmpty && t.Agent.Compatibility:
		// A borrowed profile's clear key is not proven on this version: AKK
		// types nothing but the paste and the Enter of a proven empty composer.
		return "", E(CodeTerminalNotIdle, fmt.Sprintf("the composer holds text someone typed, and %s %s has no profile of its own, so AKK presses no key to clear it; nothing was typed", t.Agent.Kind, t.Agent.Version))
	case !t.ComposerEmpty && !explicit:
		return "", E(CodeTerminalNotIdle, "the composer holds text someone typed; send with the terminal_id to have AKK clear it once (Claude Code stashes it) before the request")
	case broken || !t.ComposerEmpty:
		return PathUserExplicit, nil
	}
	return PathManaged, nil
}

// sessionMatches refuses to follow a session to another native thread.
func sessionMatches(sess Session, t Terminal) error {
	if sess.NativeThreadID == "" {
		return nil // bound by the first accepted Turn; the terminal id is the same incarnation
	}
	switch {
	case t.NativeIdentity == IdentityResolved && t.NativeThreadID == sess.NativeThreadID:
		return nil
	case t.NativeIdentity == IdentityResolved:
		return E(CodeSessionThreadChanged, "the pane now shows another native conversation than this session's; send to its terminal_id to start a new session")
	}
	return E(CodeNativeIdentityUnproven, "AKK cannot prove the pane still shows this session's native conversation ("+string(t.NativeIdentity)+"); send to its terminal_id instead")
}

// probeable reports whether the closed status probe can prove that the
// pane shows sess's thread where the records cannot: a bound session on
// an exactly profiled Codex pane whose identity is ambiguous (threads in a
// shared daemon), send-ready.
func (s *NativeCases) probeable(sess Session, t Terminal) bool {
	return s.native != nil && sess.NativeThreadID != "" && t.Agent.ThreadProbe && t.Agent.Profiled() &&
		!t.Agent.Compatibility && t.NativeIdentity == IdentityAmbiguous && t.SendReady()
}

// probeSession runs the status probe once (the caller holds the terminal
// lock) and refuses unless the card names sess's thread.
func (s *Service) probeSession(ctx context.Context, p Principal, sess Session, t Terminal) error {
	st, err := s.probe(ctx, p, t)
	if err != nil {
		return err
	}
	if st != sess.NativeThreadID {
		return E(CodeSessionThreadChanged, "the pane shows another native conversation than this session's; send to its terminal_id to start a new session")
	}
	return nil
}

// probe runs the closed status probe once before a Send's text (the caller
// holds the terminal lock) and returns the thread it names. A probe that
// sent keys and proved nothing stops the Send before its text, never
// retried.
func (s *Service) probe(ctx context.Context, p Principal, t Terminal) (string, error) {
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := s.native.StatusCard(seq, t)
	if rerr := refusedBeforeInput(stage, err, "the status plan"); rerr != nil {
		return "", rerr
	}
	if err != nil || stage != AnswerVerified || st.NativeThreadID == "" {
		s.noteNativeUncertain(seq, p, t.ID, "send_identify", err)
		return "", E(CodeManualRequired, "the status probe sent keys and proved no thread ("+s.why(err)+"); nothing of the task was typed; look at the pane before sending again")
	}
	return st.NativeThreadID, nil
}

// onlySendReadyTerminal resolves a Send with no target.
func (s *Service) onlySendReadyTerminal(ctx context.Context) (string, error) {
	if s.terminals == nil {
		return "", E(CodeUnavailable, "terminal discovery is not configured")
	}
	ts, err := s.terminals.Discover(ctx)
	if err != nil {
		return "", &Error{Code: CodeUnavailable, Message: "terminal discovery failed", Err: err}
	}
	var ready []string
	for _, t := range ts {
		if t.SendReady() {
			if _, err := s.holdingTurn(ctx, t.ID); errors.Is(err, ErrNotFound) {
				ready = append(ready, t.ID)
			}
		}
	}
	switch len(ready) {
	case 1:
		return ready[0], nil
	case 0:
		return "", E(CodeNoSendReadyTerminal, "no send-ready terminal; give terminal_id or session_id")
	}
	return "", E(CodeAmbiguousTarget, fmt.Sprintf("%d terminals are send-ready; give terminal_id or session_id", len(ready)))
}
