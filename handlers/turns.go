package handlers

import (
	"context"
	"time"

	"akk/domain"
)

func sendResultOut(r domain.SendResult) SendResult {
	return SendResult{TurnId: r.Turn.ID, SessionId: r.Turn.SessionID, TerminalId: r.Turn.TerminalID,
		State: TurnState(r.Turn.State), Outcome: Outcome(r.Outcome), DoNotRetry: r.DoNotRetry,
		WatchId: optString(r.Watch.ID), DeliveryPath: DeliveryPath(r.Turn.DeliveryPath.OrManaged()),
		Warnings: append([]string{}, r.Warnings...), ForegroundThreadId: optString(r.ForegroundThreadID)}
}

func progressOut(p domain.ProgressView, lastActivity time.Time) TurnProgress {
	out := TurnProgress{State: TurnProgressState(p.State), LatestText: p.Commentary, Actions: []ProgressAction{},
		Truncated: p.Truncated, NativeTurnId: optString(p.NativeTurnID), ReadAt: p.ReadAt,
		LatestItemAt: optTime(p.LatestItemAt), LastActivityAt: optTime(lastActivity)}
	for _, a := range p.Actions {
		out.Actions = append(out.Actions, ProgressAction{Type: a.Type, Status: ProgressActionStatus(a.Status)})
	}
	return out
}

func actionOut(r domain.ActionResult) TurnActionResult {
	return TurnActionResult{TurnId: r.Turn.ID, State: TurnState(r.Turn.State), Outcome: Outcome(r.Outcome), DoNotRetry: r.DoNotRetry}
}

func turnOut(t domain.Turn, p domain.ProgressView, ns []domain.Notification) TurnStatus {
	out := TurnStatus{
		DeliveryPath: DeliveryPath(t.DeliveryPath.OrManaged()),
		TurnId:       t.ID, State: TurnState(t.State), SessionId: t.SessionID, TerminalId: t.TerminalID,
		Conversation: t.Conversation, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		AcceptedAt: optTime(t.AcceptedAt), EndedAt: optTime(t.EndedAt),
		Deadlines:  TurnDeadlines{HardDeadlineAt: t.HardDeadline()},
		Progress:   progressOut(p, t.LastActivityAt),
		DoNotRetry: t.State == domain.TurnDeliveryUncertain || t.State == domain.TurnResponseUncertain,
		Callbacks:  TurnCallbacks{Notifications: []Notification{}},
	}
	if t.State.Active() {
		at := t.InactivityDeadline()
		out.Deadlines.InactivityAt = &at
	}
	if t.FinalMessage != "" || t.FailureReason != "" {
		out.Result = &TurnResult{FinalMessage: optString(t.FinalMessage), Reason: optString(t.FailureReason)}
	}
	for _, n := range ns {
		switch n.State {
		case domain.NotificationPending:
			out.Callbacks.Pending++
		case domain.NotificationDelivered:
			out.Callbacks.Delivered++
		case domain.NotificationFailed:
			out.Callbacks.Failed++
		}
		out.Callbacks.Notifications = append(out.Callbacks.Notifications, notificationOut(n))
	}
	return out
}

// SendTurn dispatches a request as a new Turn.
func (s *Server) SendTurn(ctx context.Context, req SendTurnRequestObject) (SendTurnResponseObject, error) {
	b := req.Body
	in := domain.SendInput{Request: b.Request}
	if b.TerminalId != nil {
		in.TerminalID = *b.TerminalId
	}
	if b.SessionId != nil {
		in.SessionID = *b.SessionId
	}
	if b.ConversationId != nil {
		in.ConversationID = *b.ConversationId
	}
	if req.Params.IdempotencyKey != nil {
		in.MessageID = *req.Params.IdempotencyKey
	}
	if b.MessageId != nil {
		in.MessageID = *b.MessageId
	}
	if b.InactivityMinutes != nil {
		in.InactivityMinutes = *b.InactivityMinutes
	}
	if b.HardTimeoutMinutes != nil {
		in.HardTimeoutMinutes = *b.HardTimeoutMinutes
	}
	if b.Identify != nil {
		in.Identify = *b.Identify
	}
	if b.Model != nil {
		in.Model = *b.Model
	}
	if b.ReasoningEffort != nil {
		in.ReasoningEffort = *b.ReasoningEffort
	}
	r, err := s.Service.Send(ctx, in)
	if err != nil {
		return nil, err
	}
	if r.Existing {
		return SendTurn200JSONResponse(sendResultOut(r)), nil
	}
	return SendTurn202JSONResponse(sendResultOut(r)), nil
}

// ListTurns lists the caller's Turns.
func (s *Server) ListTurns(ctx context.Context, req ListTurnsRequestObject) (ListTurnsResponseObject, error) {
	var state domain.TurnState
	if req.Params.State != nil {
		state = domain.TurnState(*req.Params.State)
	}
	limit := 0
	if req.Params.Limit != nil {
		limit = *req.Params.Limit
	}
	ts, err := s.Service.Turns(ctx, state, limit)
	if err != nil {
		return nil, err
	}
	out := ListTurns200JSONResponse{Turns: make([]TurnStatus, len(ts))}
	for i, t := range ts {
		out.Turns[i] = turnOut(t, s.Service.Progress(t), nil)
	}
	return out, nil
}

// GetTurn returns a Turn's status.
func (s *Server) GetTurn(ctx context.Context, req GetTurnRequestObject) (GetTurnResponseObject, error) {
	st, err := s.Service.Turn(ctx, req.TurnId)
	if err != nil {
		return nil, err
	}
	out := turnOut(st.Turn, st.Progress, st.Notifications)
	out.WaitingSince = optTime(st.WaitingSince)
	out.Approval = approvalOut(st.Approval)
	out.Screen = optString(st.Screen)
	out.WatchId = optString(st.WatchID)
	if st.Interaction != nil {
		in, err := interactionOut(*st.Interaction)
		if err != nil {
			return nil, err
		}
		out.InteractionState = &in
	}
	return GetTurn200JSONResponse(out), nil
}

// GetTurnChanges lists the files a Turn's agent changed, from its record.
func (s *Server) GetTurnChanges(ctx context.Context, req GetTurnChangesRequestObject) (GetTurnChangesResponseObject, error) {
	tc, err := s.Service.TurnChanges(ctx, req.TurnId)
	if err != nil {
		return nil, err
	}
	out := TurnChanges{TurnId: tc.TurnID, Changes: make([]FileChange, 0, len(tc.Changes)), LimitReached: tc.LimitReached}
	for _, c := range tc.Changes {
		at := c.At
		if at.Year() <= 1 {
			at = time.Time{}
		}
		out.Changes = append(out.Changes, FileChange{Seq: c.Seq, Path: c.Path, Operation: FileChangeOperation(c.Op), Diff: c.Diff,
			Truncated: c.Truncated, RecordedAt: optTime(at)})
	}
	return GetTurnChanges200JSONResponse(out), nil
}

// StreamTurnEvents streams one Turn's events, from its first by default.
func (s *Server) StreamTurnEvents(ctx context.Context, req StreamTurnEventsRequestObject) (StreamTurnEventsResponseObject, error) {
	if err := s.Service.CheckTurnVisible(ctx, req.TurnId); err != nil {
		return nil, err
	}
	p, _ := domain.PrincipalFrom(ctx)
	cursor, err := sseCursor(req.Params.LastEventID, req.Params.Since)
	if err != nil {
		return nil, err
	}
	if cursor < 0 {
		cursor = 0
	}
	turnID := req.TurnId
	open, err := s.streams.open(ctx)
	if err != nil {
		return nil, err
	}
	return &sseStream{ctx: ctx, s: s, open: open, cursor: cursor, read: func(after int64, limit int) ([]domain.Event, error) {
		return s.Service.TurnEventsAfter(ctx, p, turnID, after, limit)
	}}, nil
}

// RespondTurn answers a Turn waiting for the host.
func (s *Server) RespondTurn(ctx context.Context, req RespondTurnRequestObject) (RespondTurnResponseObject, error) {
	r, err := s.Service.Respond(ctx, req.TurnId, req.Body.Request)
	if err != nil {
		return nil, err
	}
	return RespondTurn202JSONResponse(sendResultOut(r)), nil
}

// CancelTurn interrupts a Turn once.
func (s *Server) CancelTurn(ctx context.Context, req CancelTurnRequestObject) (CancelTurnResponseObject, error) {
	r, err := s.Service.Cancel(ctx, req.TurnId)
	if err != nil {
		return nil, err
	}
	return CancelTurn200JSONResponse(actionOut(r)), nil
}

// CloseTurn releases a Turn without input.
func (s *Server) CloseTurn(ctx context.Context, req CloseTurnRequestObject) (CloseTurnResponseObject, error) {
	reason := ""
	if req.Body != nil && req.Body.Reason != nil {
		reason = *req.Body.Reason
	}
	r, err := s.Service.Close(ctx, req.TurnId, reason)
	if err != nil {
		return nil, err
	}
	return CloseTurn200JSONResponse(actionOut(r)), nil
}

// RenewTurn restarts monitoring of a stalled Turn.
func (s *Server) RenewTurn(ctx context.Context, req RenewTurnRequestObject) (RenewTurnResponseObject, error) {
	r, err := s.Service.Renew(ctx, req.TurnId)
	if err != nil {
		return nil, err
	}
	return RenewTurn200JSONResponse(actionOut(r)), nil
}

// RecoverTurn reconciles a Turn with the agent's record.
func (s *Server) RecoverTurn(ctx context.Context, req RecoverTurnRequestObject) (RecoverTurnResponseObject, error) {
	r, err := s.Service.Recover(ctx, req.TurnId)
	if err != nil {
		return nil, err
	}
	return RecoverTurn200JSONResponse(actionOut(r)), nil
}

// RetryTurnCallback redelivers a Turn's failed webhook.
func (s *Server) RetryTurnCallback(ctx context.Context, req RetryTurnCallbackRequestObject) (RetryTurnCallbackResponseObject, error) {
	id := ""
	if req.Body != nil && req.Body.NotificationId != nil {
		id = *req.Body.NotificationId
	}
	n, err := s.Service.RetryTurnCallback(ctx, req.TurnId, id)
	if err != nil {
		return nil, err
	}
	return RetryTurnCallback202JSONResponse(notificationOut(n)), nil
}
