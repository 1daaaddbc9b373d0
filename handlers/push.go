package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"akk/domain"
)

// uiSessionRef is what the store keeps of a dashboard session: a hash of
// its cookie, never the cookie.
func uiSessionRef(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	if id == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("push:" + id))
	return hex.EncodeToString(sum[:16])
}

// GetPushKey gives the public VAPID key.
func (s *Server) GetPushKey(ctx context.Context, _ GetPushKeyRequestObject) (GetPushKeyResponseObject, error) {
	k, err := s.Service.PushKey(ctx)
	if err != nil {
		return nil, err
	}
	return GetPushKey200JSONResponse{PublicKey: k}, nil
}

// ListPushSubscriptions lists the caller's subscriptions.
func (s *Server) ListPushSubscriptions(ctx context.Context, _ ListPushSubscriptionsRequestObject) (ListPushSubscriptionsResponseObject, error) {
	subs, err := s.Service.PushSubscriptionsOf(ctx)
	if err != nil {
		return nil, err
	}
	out := ListPushSubscriptions200JSONResponse{Subscriptions: []PushSubscriptionView{}}
	for _, x := range subs {
		out.Subscriptions = append(out.Subscriptions, pushView(x))
	}
	return out, nil
}

// CreatePushSubscription keeps a browser's subscription for the caller.
func (s *Server) CreatePushSubscription(ctx context.Context, req CreatePushSubscriptionRequestObject) (CreatePushSubscriptionResponseObject, error) {
	b := req.Body
	in := domain.NewPushSubscription{Endpoint: b.Endpoint, P256dh: b.Keys.P256dh, Auth: b.Keys.Auth}
	if b.HideDetails != nil {
		in.HideDetails = *b.HideDetails
	}
	sub, err := s.Service.Subscribe(ctx, in, uiSessionRef(ctx))
	if err != nil {
		return nil, err
	}
	return CreatePushSubscription201JSONResponse(pushView(sub)), nil
}

// DeletePushSubscription removes one of the caller's subscriptions.
func (s *Server) DeletePushSubscription(ctx context.Context, req DeletePushSubscriptionRequestObject) (DeletePushSubscriptionResponseObject, error) {
	if err := s.Service.Unsubscribe(ctx, req.Params.Endpoint); err != nil {
		return nil, err
	}
	return DeletePushSubscription204Response{}, nil
}

func pushView(x domain.PushSubscription) PushSubscriptionView {
	return PushSubscriptionView{Endpoint: x.Endpoint, HideDetails: x.HideDetails, CreatedAt: x.CreatedAt}
}

// UseAction answers a prompt with a one-tap action's token (no other
// credential).
func (s *Server) UseAction(ctx context.Context, req UseActionRequestObject) (UseActionResponseObject, error) {
	r, err := s.Service.UseAction(ctx, req.Token)
	if err != nil {
		return nil, err
	}
	return UseAction200JSONResponse(actionOut(r)), nil
}
