package handlers

import (
	"context"

	"akk/domain"
)

func watchOut(w domain.Watch) Watch {
	return Watch{WatchId: w.ID, TerminalId: w.TerminalID, Conversation: w.Conversation, State: WatchState(w.State),
		WatchMode: WatchWatchMode(w.Mode), Confidence: WatchConfidence(w.Confidence()),
		FinalMessage: optString(w.FinalMessage), LatestText: optString(w.LatestText), Reason: optString(w.Reason),
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt, EndedAt: optTime(w.EndedAt), TurnId: optString(w.TurnID)}
}

// CreateWatch starts a Watch.
func (s *Server) CreateWatch(ctx context.Context, req CreateWatchRequestObject) (CreateWatchResponseObject, error) {
	in := domain.NewWatchInput{TerminalID: req.Body.TerminalId}
	if req.Body.HardTimeoutMinutes != nil {
		in.HardTimeoutMinutes = *req.Body.HardTimeoutMinutes
	}
	if req.Body.Identify != nil {
		in.Identify = *req.Body.Identify
	}
	w, err := s.Service.StartWatch(ctx, in)
	if err != nil {
		return nil, err
	}
	return CreateWatch201JSONResponse(watchOut(w)), nil
}

// GetWatch returns a Watch.
func (s *Server) GetWatch(ctx context.Context, req GetWatchRequestObject) (GetWatchResponseObject, error) {
	w, err := s.Service.GetWatch(ctx, req.WatchId)
	if err != nil {
		return nil, err
	}
	return GetWatch200JSONResponse(watchOut(w)), nil
}

// DeleteWatch unwatches.
func (s *Server) DeleteWatch(ctx context.Context, req DeleteWatchRequestObject) (DeleteWatchResponseObject, error) {
	w, err := s.Service.Unwatch(ctx, req.WatchId)
	if err != nil {
		return nil, err
	}
	return DeleteWatch200JSONResponse(watchOut(w)), nil
}

// RenewWatch restarts a timed-out Watch.
func (s *Server) RenewWatch(ctx context.Context, req RenewWatchRequestObject) (RenewWatchResponseObject, error) {
	w, err := s.Service.RenewWatch(ctx, req.WatchId)
	if err != nil {
		return nil, err
	}
	return RenewWatch200JSONResponse(watchOut(w)), nil
}

// RecoverWatch reconciles a Watch with the record.
func (s *Server) RecoverWatch(ctx context.Context, req RecoverWatchRequestObject) (RecoverWatchResponseObject, error) {
	w, err := s.Service.RecoverWatch(ctx, req.WatchId)
	if err != nil {
		return nil, err
	}
	return RecoverWatch200JSONResponse(watchOut(w)), nil
}

// RetryWatchCallback redelivers a Watch's failed webhook.
func (s *Server) RetryWatchCallback(ctx context.Context, req RetryWatchCallbackRequestObject) (RetryWatchCallbackResponseObject, error) {
	id := ""
	if req.Body != nil && req.Body.NotificationId != nil {
		id = *req.Body.NotificationId
	}
	n, err := s.Service.RetryWatchCallback(ctx, req.WatchId, id)
	if err != nil {
		return nil, err
	}
	return RetryWatchCallback202JSONResponse(notificationOut(n)), nil
}
