package handlers

import (
	"context"
	"time"

	"akk/domain"
)

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func notificationOut(n domain.Notification) Notification {
	out := Notification{
		NotificationId: n.ID, EventId: n.EventID, HostId: n.HostID, Type: n.Type,
		State: NotificationState(n.State), Attempts: n.Attempts, CreatedAt: n.CreatedAt,
		LastAttemptAt: optTime(n.LastAttemptAt), DeliveredAt: optTime(n.DeliveredAt),
	}
	if n.State == domain.NotificationPending {
		out.NextAttemptAt = optTime(n.NextAttemptAt)
	}
	if n.LastStatusCode != 0 {
		out.LastStatusCode = ptr(n.LastStatusCode)
	}
	if n.LastError != "" {
		out.LastError = ptr(n.LastError)
	}
	return out
}

// ListNotifications shows the webhook outbox.
func (s *Server) ListNotifications(ctx context.Context, req ListNotificationsRequestObject) (ListNotificationsResponseObject, error) {
	f := domain.NotificationFilter{}
	if req.Params.State != nil {
		f.State = domain.NotificationState(*req.Params.State)
	}
	if req.Params.Limit != nil {
		f.Limit = *req.Params.Limit
	}
	ns, err := s.Service.Notifications(ctx, f)
	if err != nil {
		return nil, err
	}
	out := ListNotifications200JSONResponse{Notifications: make([]Notification, len(ns))}
	for i, n := range ns {
		out.Notifications[i] = notificationOut(n)
	}
	return out, nil
}

// RetryNotification queues an immediate redelivery.
func (s *Server) RetryNotification(ctx context.Context, req RetryNotificationRequestObject) (RetryNotificationResponseObject, error) {
	n, err := s.Service.RetryNotification(ctx, req.NotificationId)
	if err != nil {
		return nil, err
	}
	return RetryNotification202JSONResponse(notificationOut(n)), nil
}
