package domain

import (
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
