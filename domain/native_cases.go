package domain

import (
	"context"
	"errors"
	"fmt"
)

// NativeCases are a pane's own controls: its status view, its threads
// (new, resumed, listed), its model and its permissions. They hold only
// their ports.
type NativeCases struct {
	basics
	*inputGate
	native    NativeControls // the panes' (UsePanes)
	threads   ThreadReader
	turns     *turns // the panes' locks, observer and redactor (UsePanes)
	endpoints *endpointRegistry
	catalogs  catalogs
}

// nativeReady is the common gate of every native control: a caller, the
// port, the terminal's lock (returned: the caller unlocks), no Turn
// holding the pane, a live exactly profiled agent on an idle screen with
// an empty composer. An error means no key was sent.
func (s *NativeCases) nativeReady(ctx context.Context, terminalID string) (Principal, Terminal, func(), error) {
	return s.nativeGate(ctx, terminalID, true)
}

// nativeGate is nativeReady; with idle false the screen may show anything
// but a working task or a prompt (a repair's residue).
func (s *NativeCases) nativeGate(ctx context.Context, terminalID string, idle bool) (Principal, Terminal, func(), error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return Principal{}, Terminal{}, nil, err
	}
	if s.native == nil || s.turns == nil {
		return Principal{}, Terminal{}, nil, E(CodeUnavailable, "native controls are not configured")
	}
	unlock := s.turns.lockTerminal(terminalID)
	fail := func(err error) (Principal, Terminal, func(), error) {
		unlock()
		return Principal{}, Terminal{}, nil, err
	}
	if held, err := s.holdingTurn(ctx, terminalID); err == nil {
		if p.CanSeeHost(held.HostID) {
			return fail(E(CodeConflictActiveTurn, "turn "+held.ID+" holds this terminal; wait for it to end or close it"))
		}
		return fail(E(CodeConflictActiveTurn, "a Turn of another controller holds this terminal"))
	} else if !errors.Is(err, ErrNotFound) {
		return fail(err)
	}
	term, err := s.turns.term.Observe(ctx, terminalID)
	if errors.Is(err, ErrTerminalGone) {
		return fail(E(CodeTerminalNotFound, "no live pane runs terminal "+terminalID))
	}
	if err != nil {
		return fail(&Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err})
	}
	switch {
	case !term.Agent.Profiled():
		return fail(E(CodeUnprofiledAgent, string(term.Agent.Kind)+" "+term.Agent.Version+" has no profile; AKK types nothing into it"))
	case term.Agent.Compatibility:
		return fail(E(CodeManualRequired, string(term.Agent.Kind)+" "+term.Agent.Version+" is read with a neighbour's profile; its native controls are left to the person"))
	case idle && !term.SendReady():
		return fail(E(CodeTerminalNotIdle, fmt.Sprintf("the pane is not idle with an empty composer (screen %s)", term.ScreenState)))
	case !idle && (term.ScreenState == ScreenWorking || term.ScreenState == ScreenAwaitingApproval || term.ScreenState == ScreenAwaitingInteraction):
		return fail(E(CodeTerminalNotIdle, fmt.Sprintf("the pane is %s", term.ScreenState)))
	}
	return p, term, unlock, nil
}

// refusedBeforeInput is the refusal of a native plan that sent nothing
// (stage AnswerNothing), nil when it sent keys.
func refusedBeforeInput(stage AnswerStage, err error, plan string) error {
	if berr := backedOut(err); berr != nil {
		return berr // keys went out, and the pane is proven as it was
	}
	if stage != AnswerNothing {
		return nil
	}
	if err == nil {
		err = errors.New(plan + " sent nothing")
	}
	return nativeRefusal(err)
}

// nativeRefusal maps an error of a native plan that sent nothing.
func nativeRefusal(err error) error {
	var de *Error
	switch {
	case errors.As(err, &de):
		return err
	case errors.Is(err, ErrTerminalGone):
		return E(CodeTerminalNotFound, "the pane is gone or its agent restarted")
	case errors.Is(err, ErrNativeUnsupported):
		return &Error{Code: CodeManualRequired, Message: err.Error(), Err: err}
	}
	return &Error{Code: CodeTerminalNotIdle, Message: "the pane did not prove the exact screen the plan starts from; nothing was sent (" + err.Error() + ")", Err: err}
}

// redactText hides secrets in screen-derived text, as everywhere else.
func (s *NativeCases) redactText(text string) string { return s.turns.redactText(text) }

func (s *NativeCases) redactStatus(st NativeStatus) NativeStatus {
	st.Model = s.redactText(st.Model)
	st.Directory = s.redactText(st.Directory)
	st.Permissions = s.redactText(st.Permissions)
	st.AgentVersion = s.redactText(st.AgentVersion)
	return st
}

// Inspect opens the agent's native status view once (native_inspect) on
// an idle pane whose native identity is proven, and reports what it shows
// beside whether it names the thread the records prove. No Turn, Session,
// monitor or callback is created.
func (s *NativeCases) Inspect(ctx context.Context, terminalID, inspection string) (NativeInspection, error) {
	if inspection != InspectionStatus {
		return NativeInspection{}, Invalid("inspection must be status", FieldError{Field: "inspection", Message: "status"})
	}
	_, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return NativeInspection{}, err
	}
	defer unlock()
	if term.NativeIdentity != IdentityResolved {
		hint := ""
		if term.Agent.ThreadProbe {
			hint = "; identify-foreground reads which thread it shows"
		}
		return NativeInspection{}, E(CodeNativeIdentityUnproven, "the pane's native identity is "+string(term.NativeIdentity)+", not proven by the agent's records"+hint)
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := s.native.StatusCard(seq, term)
	if rerr := refusedBeforeInput(stage, err, "the status plan"); rerr != nil {
		return NativeInspection{}, rerr
	}
	res := NativeInspection{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true}
	if err != nil || stage != AnswerVerified {
		res.Detail = s.why(err)
		return res, nil
	}
	st = s.redactStatus(st)
	res.Outcome, res.DoNotRetry, res.Status = OutcomeDone, false, &st
	res.IdentityMatchesRecord = st.NativeThreadID != "" && st.NativeThreadID == term.NativeThreadID
	return res, nil
}

// IdentifyForeground runs the closed status probe once on an idle Codex
// pane and reports the thread in its foreground: a diagnostic for a pane
// whose identity the records cannot prove (several threads on one shared
// daemon). It authorizes nothing and changes no record.
func (s *NativeCases) IdentifyForeground(ctx context.Context, terminalID string) (ForegroundProof, error) {
	_, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return ForegroundProof{}, err
	}
	defer unlock()
	if !term.Agent.ThreadProbe {
		return ForegroundProof{}, E(CodeManualRequired, "foreground identification is a Codex probe; Claude Code's session record proves its thread")
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := s.native.StatusCard(seq, term)
	if rerr := refusedBeforeInput(stage, err, "the status plan"); rerr != nil {
		return ForegroundProof{}, rerr
	}
	now := s.clock.Now().UTC()
	res := ForegroundProof{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, ProvenAt: now, ExpiresAt: now}
	if err != nil || stage != AnswerVerified || st.NativeThreadID == "" {
		res.Detail = s.why(err)
		return res, nil
	}
	res.Outcome, res.DoNotRetry, res.NativeThreadID = OutcomeDone, false, st.NativeThreadID
	res.ExpiresAt = now.Add(ForegroundProofTTL)
	if s.threads != nil {
		if ths, err := s.threads.Threads(ctx, term); err == nil {
			for _, th := range ths {
				res.RecordPresent = res.RecordPresent || th.NativeThreadID == st.NativeThreadID
			}
		}
	}
	return res, nil
}

// nativeActions are the native controls of an idle pane with an empty
// composer that no Turn holds, on its own profile (never a neighbour's),
// or the repair of a model control's residue (its menu open, or its bare
// command in the composer).
func (s *NativeCases) nativeActions(ctx context.Context, t Terminal, held bool) []Action {
	var out []Action
	if s.native != nil && !held && t.SendReady() && !t.Agent.Compatibility {
		resolved := t.NativeIdentity == IdentityResolved
		if resolved || t.Agent.ThreadProbe {
			out = append(out, act("new_thread", OnTerminal, t.ID, nil))
		}
		out = append(out, act("resume_thread", OnTerminal, t.ID, map[string]any{}, "native_thread_id"))
		if _, ok := s.native.(ModelControls); ok {
			out = append(out, act("model_options", OnTerminal, t.ID, nil),
				act("set_model", OnTerminal, t.ID, map[string]any{}, "model", "reasoning_effort"))
		}
		if _, ok := s.native.(PermissionControls); ok {
			out = append(out, act("permission_options", OnTerminal, t.ID, nil),
				act("set_permissions", OnTerminal, t.ID, map[string]any{}, "mode"))
		}
		if resolved {
			out = append(out, act("native_inspect", OnTerminal, t.ID, map[string]any{"inspection": InspectionStatus}))
		} else if t.Agent.ThreadProbe {
			out = append(out, act("identify_foreground", OnTerminal, t.ID, nil))
		}
	}
	if mr, ok := s.native.(ModelRepairer); ok && !held && !t.SendReady() && t.Agent.Profiled() && !t.Agent.Compatibility &&
		t.ScreenState != ScreenWorking && t.ScreenState != ScreenAwaitingApproval && mr.ModelResidue(ctx, t) {
		out = append(out, act("repair_model_control", OnTerminal, t.ID, nil))
	}
	return out
}

// noteNativeUncertain records an uncertain native control on the event
// stream (no webhook: no Turn or Watch is involved).
func (s *NativeCases) noteNativeUncertain(ctx context.Context, p Principal, terminalID, action string, cause error) {
	data := map[string]any{"terminal_id": terminalID, "action": action}
	if cause != nil {
		data["reason"] = s.redactText(cause.Error())
	}
	_ = s.store.InTx(ctx, func(tx Tx) error {
		_, err := s.emitLocked(ctx, tx, Event{Type: "terminal.native_uncertain", HostID: p.HostID, Conversation: p.Conversation, Subject: terminalID, Data: data}, false)
		return err
	})
}

// why is a redacted reason for an uncertain native control.
func (s *NativeCases) why(err error) string {
	if err == nil {
		return "the plan's end was not proven"
	}
	return s.redactText(err.Error())
}
