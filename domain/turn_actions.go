package domain

import (
	"context"
	"errors"
)

// ownedTurn loads a Turn the caller may act on; others get turn_not_found.
func (s *TurnCases) ownedTurn(ctx context.Context, id string) (Turn, Principal, error) {
	return s.ownedTurnIn(ctx, s.turns, id)
}

// Turn returns one Turn's status.
func (s *TurnCases) Turn(ctx context.Context, id string) (TurnStatus, error) {
	t, _, err := s.ownedTurn(ctx, id)
	if err != nil {
		return TurnStatus{}, err
	}
	ns, err := s.store.NotificationsAbout(ctx, id)
	if err != nil {
		return TurnStatus{}, err
	}
	av, err := s.ac.TurnApproval(ctx, t)
	if err != nil {
		return TurnStatus{}, err
	}
	st := TurnStatus{Turn: t, Notifications: ns, Approval: av,
		Progress: s.Progress(t), WaitingSince: s.waitingSince(ctx, t)}
	if w, err := s.store.WatchOfTurn(ctx, t.ID); err == nil {
		st.WatchID = w.ID
	}
	if t.State == TurnAwaitingInteraction {
		if in, err := s.ic.TurnInteraction(ctx, t.ID); err == nil {
			st.Interaction = &in
		}
	}
	if ex, ok := s.turns.term.(ScreenExcerpter); ok && t.State.HoldsTerminal() {
		if term, err := s.turns.term.Observe(ctx, t.TerminalID); err == nil {
			st.Screen, _ = ex.Excerpt(ctx, term, ExcerptRows)
		}
	}
	return st, nil
}

// Turns lists the caller's Turns.
func (s *TurnCases) Turns(ctx context.Context, state TurnState, limit int) ([]Turn, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	return s.store.Turns(ctx, TurnFilter{HostID: p.HostID, All: p.Operator, State: state, Limit: limit})
}

// TurnEventsAfter returns one Turn's events after id, for its SSE stream.
func (s *TurnCases) TurnEventsAfter(ctx context.Context, p Principal, turnID string, after int64, limit int) ([]Event, error) {
	f := FilterFor(p)
	f.Subject = turnID
	return s.store.EventsAfter(ctx, after, f, limit)
}

// CheckTurnVisible fails unless the caller may see the Turn.
func (s *TurnCases) CheckTurnVisible(ctx context.Context, id string) error {
	_, _, err := s.ownedTurn(ctx, id)
	return err
}

// conflictAttempts bounds how often an action is run again when the
// monitor changed its Turn between the action's read and its write.
const conflictAttempts = 5

// onConflictRetry runs action again while it fails with a revision
// conflict. Every action writes its Turn before any key (a conflict means
// no input was sent), so running it again from a fresh read is safe.
func onConflictRetry[T any](action func() (T, error)) (T, error) {
	var out T
	var err error
	for range conflictAttempts {
		if out, err = action(); !errors.Is(err, ErrRevisionConflict) {
			return out, err
		}
	}
	return out, &Error{Code: CodeTurnStateConflict, Message: "the turn kept changing while this action ran; read its status and try again", Err: err}
}

// Cancel presses the interrupt key once for an active Turn. The monitor
// reports cancelled once the agent's record proves the interrupt.
func (s *TurnCases) Cancel(ctx context.Context, id string) (ActionResult, error) {
	return onConflictRetry(func() (ActionResult, error) { return s.cancelOnce(ctx, id) })
}

func (s *TurnCases) cancelOnce(ctx context.Context, id string) (ActionResult, error) {
	t, _, err := s.ownedTurn(ctx, id)
	if err != nil {
		return ActionResult{}, err
	}
	tr := s.turns
	unlock := tr.lockTerminal(t.TerminalID)
	defer unlock()
	if t, err = s.store.Turn(ctx, id); err != nil {
		return ActionResult{}, err
	}
	switch t.State {
	case TurnWorking, TurnAwaitingApproval, TurnAwaitingInteraction:
	case TurnDispatching:
		if t.SubmitStage != SubmitEntered {
			return ActionResult{}, stateConflict(t, "cancel")
		}
	default:
		return ActionResult{}, stateConflict(t, "cancel")
	}
	if t.CancelRequested {
		return ActionResult{Turn: t, Outcome: OutcomeDone}, nil // pressed once already; never twice
	}
	return s.interruptTurn(ctx, t)
}

// interruptTurn interrupts t's running turn through its endpoint, once:
// the request is stored before the input, so a restart never repeats it.
func (s *TurnCases) interruptTurn(ctx context.Context, t Turn) (ActionResult, error) {
	ep := s.endpointOf(t.Endpoint)
	target, err := ep.Interruptible(ctx, t)
	if err != nil {
		var de *Error
		if errors.As(err, &de) && de.Code == CodeTerminalNotIdle {
			return ActionResult{Outcome: OutcomeRejectedBeforeInput}, err
		}
		return ActionResult{}, err
	}
	t.CancelRequested = true
	if t, err = s.transition(ctx, t, "turn.cancel_requested", false); err != nil {
		return ActionResult{}, err
	}
	Failpoint("cancel.requested")
	seq, done := s.keySequence(ctx)
	err = ep.Interrupt(seq, t, target)
	done()
	if err != nil {
		return ActionResult{Turn: t, Outcome: OutcomeUncertain, DoNotRetry: true}, nil
	}
	Failpoint("cancel.sent")
	return ActionResult{Turn: t, Outcome: OutcomeDone}, nil
}

// Close releases management of a Turn without any terminal input.
func (s *TurnCases) Close(ctx context.Context, id, reason string) (ActionResult, error) {
	return onConflictRetry(func() (ActionResult, error) { return s.closeOnce(ctx, id, reason) })
}

func (s *TurnCases) closeOnce(ctx context.Context, id, reason string) (ActionResult, error) {
	t, _, err := s.ownedTurn(ctx, id)
	if err != nil {
		return ActionResult{}, err
	}
	if len(reason) > 500 {
		return ActionResult{}, Invalid("reason is longer than 500 characters", FieldError{Field: "reason", Message: "at most 500 characters"})
	}
	unlock := s.turns.lockTerminal(t.TerminalID)
	defer unlock()
	if t, err = s.store.Turn(ctx, id); err != nil {
		return ActionResult{}, err
	}
	if t.State == TurnClosed {
		return ActionResult{Turn: t, Outcome: OutcomeDone}, nil
	}
	s.turns.stopMonitor(t.ID)
	prev := t.State
	t.State = TurnClosed
	if reason != "" {
		t.FailureReason = "closed: " + reason
	} else if !prev.Final() {
		t.FailureReason = "closed while " + string(prev)
	}
	if t, err = s.transition(ctx, t, "turn.closed", false); err != nil {
		return ActionResult{}, err
	}
	return ActionResult{Turn: t, Outcome: OutcomeDone}, nil
}

// Renew restarts monitoring of a stalled Turn whose terminal is still the
// same live agent. No input.
func (s *TurnCases) Renew(ctx context.Context, id string) (ActionResult, error) {
	return onConflictRetry(func() (ActionResult, error) { return s.renewOnce(ctx, id) })
}

func (s *TurnCases) renewOnce(ctx context.Context, id string) (ActionResult, error) {
	t, _, err := s.ownedTurn(ctx, id)
	if err != nil {
		return ActionResult{}, err
	}
	unlock := s.turns.lockTerminal(t.TerminalID)
	defer unlock()
	if t, err = s.store.Turn(ctx, id); err != nil {
		return ActionResult{}, err
	}
	if t.State != TurnStalled {
		return ActionResult{}, stateConflict(t, "renew")
	}
	if s.clock.Now().After(t.HardDeadline()) {
		return ActionResult{}, E(CodeTurnStateConflict, "the turn's hard deadline has passed; close it")
	}
	if err := s.endpointOf(t.Endpoint).Followable(ctx, t); err != nil {
		return ActionResult{}, err
	}
	return s.mons.resume(ctx, t, "turn.renewed")
}

// Recover reconciles a Turn with the agent's durable record from its
// original mark: a stalled or uncertain Turn that in fact was accepted or
// finished takes the state the record proves. No input.
func (s *TurnCases) Recover(ctx context.Context, id string) (ActionResult, error) {
	return onConflictRetry(func() (ActionResult, error) { return s.recoverOnce(ctx, id) })
}

func (s *TurnCases) recoverOnce(ctx context.Context, id string) (ActionResult, error) {
	t, _, err := s.ownedTurn(ctx, id)
	if err != nil {
		return ActionResult{}, err
	}
	tr := s.turns
	unlock := tr.lockTerminal(t.TerminalID)
	defer unlock()
	if t, err = s.store.Turn(ctx, id); err != nil {
		return ActionResult{}, err
	}
	if t.State.Final() {
		return ActionResult{Turn: t, Outcome: OutcomeDone}, nil
	}
	ep := s.endpointOf(t.Endpoint)
	p, ok, err := ep.ReadRecord(ctx, t.TerminalID, t.Mark, t.Request)
	switch {
	case err != nil:
		return ActionResult{}, err
	case ok:
		return s.reconcile(ctx, t, p)
	case t.State != TurnStalled:
		return ActionResult{Turn: t, Outcome: OutcomeDone}, nil // followed, or proven uncertain: nothing to reconcile
	}
	// An endpoint with no record to read (a daemon's thread) says itself
	// how the turn stands: following it again yields its end at once if it
	// ended meanwhile.
	if err := ep.Followable(ctx, t); err != nil {
		return ActionResult{}, err
	}
	return s.mons.resume(ctx, t, "turn.recovered")
}

// reconcile moves t to the state its agent's record p proves.
func (s *TurnCases) reconcile(ctx context.Context, t Turn, p TurnProgress) (ActionResult, error) {
	now := s.clock.Now()
	next, typ, webhook := s.applyProgress(t, p, now)
	if typ == "" && p.Accepted && (t.State == TurnStalled || t.State == TurnDeliveryUncertain) {
		next.State, typ, webhook = TurnWorking, "turn.accepted", t.AcceptedAt.IsZero()
		next.EndedAt, next.FailureReason = zeroTime, ""
		next.LastActivityAt = now.UTC()
	}
	if typ == "" {
		return ActionResult{Turn: t, Outcome: OutcomeDone}, nil // the record proves nothing new
	}
	next.Mark = p.Mark
	t, err := s.transition(ctx, next, typ, webhook)
	if err != nil {
		return ActionResult{}, err
	}
	if t.State.Monitored() {
		s.mons.startMonitor(t.ID)
	}
	return ActionResult{Turn: t, Outcome: OutcomeDone}, nil
}

// Respond answers a Turn that waits for the host, inside the same Turn,
// with the same checks as Send.
func (s *TurnCases) Respond(ctx context.Context, id, request string) (SendResult, error) {
	return onConflictRetry(func() (SendResult, error) { return s.respondOnce(ctx, id, request) })
}

func (s *TurnCases) respondOnce(ctx context.Context, id, request string) (SendResult, error) {
	t, _, err := s.ownedTurn(ctx, id)
	if err != nil {
		return SendResult{}, err
	}
	tr := s.turns
	request = normalizeRequest(request)
	if err := tr.checkRequest(request); err != nil {
		return SendResult{}, err
	}
	unlock := tr.lockTerminal(t.TerminalID)
	defer unlock()
	if t, err = s.store.Turn(ctx, id); err != nil {
		return SendResult{}, err
	}
	if t.State != TurnWaitingForHost {
		return SendResult{}, stateConflict(t, "respond")
	}
	e := s.endpointOf(t.Endpoint)
	target, err := e.SendTarget(ctx, t.Endpoint.ID)
	var de *Error
	if errors.As(err, &de) && de.Code == CodeTerminalNotFound {
		return SendResult{}, E(CodeTerminalNotFound, "the turn's pane is gone or its agent restarted")
	}
	if err != nil {
		return SendResult{}, err
	}
	if err := sendReady(target.Term); err != nil {
		return SendResult{}, err
	}
	mark, err := e.PrepareSubmit(ctx, target, BackendTurnOptions{})
	if err != nil {
		return SendResult{}, err
	}
	// Reserve durably before input.
	s.turns.stopMonitor(t.ID)
	t.State, t.Request, t.Mark, t.SubmitStage = TurnDispatching, request, mark, SubmitNothing
	t.CancelRequested, t.FailureReason, t.AcceptedAt = false, "", zeroTime
	if t, err = s.transition(ctx, t, "", false); err != nil {
		s.mons.startMonitor(t.ID) // refused before input: the Turn stays followed
		return SendResult{}, err
	}
	seq, done := s.keySequence(ctx)
	_, stage, subErr := e.Submit(seq, t, target, request, BackendTurnOptions{})
	done()
	if stage == SubmitEntered {
		Failpoint("respond.entered")
	}
	return s.afterSubmit(ctx, t, stage, subErr, true)
}

// RetryTurnCallback redelivers a Turn's failed notification with its
// original webhook-id: the one named, or the only failed one (with several,
// the caller names one; AKK never picks).
func (s *TurnCases) RetryTurnCallback(ctx context.Context, turnID, notificationID string) (Notification, error) {
	if _, _, err := s.ownedTurn(ctx, turnID); err != nil {
		return Notification{}, err
	}
	return s.hosts.retryCallbackOf(ctx, "turn "+turnID, turnID, notificationID)
}

// waitingEvents are the events by which a Turn begins to wait on a person,
// by the state it then waits in.
var waitingEvents = map[TurnState]string{
	TurnAwaitingApproval:    "turn.approval_required",
	TurnAwaitingInteraction: "turn.interaction_required",
	TurnWaitingForHost:      "turn.waiting_for_host",
}
