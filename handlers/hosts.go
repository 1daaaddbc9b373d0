package handlers

import (
	"context"

	"akk/domain"
)

func hostOut(h domain.Host) Host {
	return Host{HostId: h.ID, Name: h.Name, WebhookUrl: h.WebhookURL, CreatedAt: h.CreatedAt, SecretRotatedAt: h.SecretRotatedAt}
}

// ListHosts lists hosts without secrets.
func (s *Server) ListHosts(ctx context.Context, _ ListHostsRequestObject) (ListHostsResponseObject, error) {
	hosts, err := s.Service.Hosts(ctx)
	if err != nil {
		return nil, err
	}
	out := ListHosts200JSONResponse{Hosts: make([]Host, len(hosts))}
	for i, h := range hosts {
		out.Hosts[i] = hostOut(h)
	}
	return out, nil
}

// CreateHost registers a host and shows its credentials once.
func (s *Server) CreateHost(ctx context.Context, req CreateHostRequestObject) (CreateHostResponseObject, error) {
	if req.Body == nil {
		return nil, domain.E(domain.CodeInvalidRequest, "a JSON body is required")
	}
	c, err := s.Service.RegisterHost(ctx, domain.NewHost{Name: req.Body.Name, WebhookURL: req.Body.WebhookUrl})
	if err != nil {
		return nil, err
	}
	h := hostOut(c.Host)
	return CreateHost201JSONResponse{HostId: h.HostId, Name: h.Name, WebhookUrl: h.WebhookUrl, CreatedAt: h.CreatedAt,
		SecretRotatedAt: h.SecretRotatedAt, Token: c.Token, WebhookSecret: c.Host.Secret}, nil
}

// RotateHostSecret replaces a host's webhook secret.
func (s *Server) RotateHostSecret(ctx context.Context, req RotateHostSecretRequestObject) (RotateHostSecretResponseObject, error) {
	h, err := s.Service.RotateHostSecret(ctx, req.HostId)
	if err != nil {
		return nil, err
	}
	return RotateHostSecret200JSONResponse{HostId: h.ID, WebhookSecret: h.Secret}, nil
}

// PingHost queues a host.ping webhook.
func (s *Server) PingHost(ctx context.Context, req PingHostRequestObject) (PingHostResponseObject, error) {
	n, err := s.Service.PingHost(ctx, req.HostId)
	if err != nil {
		return nil, err
	}
	return PingHost202JSONResponse(notificationOut(n)), nil
}

// RotateHostToken replaces a host's bearer token.
func (s *Server) RotateHostToken(ctx context.Context, req RotateHostTokenRequestObject) (RotateHostTokenResponseObject, error) {
	token, err := s.Service.RotateHostToken(ctx, req.HostId)
	if err != nil {
		return nil, err
	}
	return RotateHostToken200JSONResponse{HostId: req.HostId, Token: token}, nil
}

// DeleteHost removes a host.
func (s *Server) DeleteHost(ctx context.Context, req DeleteHostRequestObject) (DeleteHostResponseObject, error) {
	if err := s.Service.DeleteHost(ctx, req.HostId); err != nil {
		return nil, err
	}
	return DeleteHost204Response{}, nil
}
