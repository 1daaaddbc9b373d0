package handlers

import (
	"context"

	"akk/domain"
)

// hostOut is a host without its secrets: its delivery headers by name only.
func hostOut(h domain.Host) Host {
	events := h.WebhookEvents
	if events == nil {
		events = []string{}
	}
	return Host{HostId: h.ID, Name: h.Name, WebhookUrl: h.WebhookURL, WebhookHeaderNames: h.HeaderNames(),
		WebhookEvents: events, DeliveryNode: optString(h.DeliveryNode), CreatedAt: h.CreatedAt, SecretRotatedAt: h.SecretRotatedAt}
}

func webhookIn(url string, headers *WebhookHeaders, events *WebhookEvents, node *DeliveryNode) domain.HostWebhook {
	w := domain.HostWebhook{URL: url}
	if node != nil {
		w.DeliveryNode = *node
	}
	if headers != nil {
		w.Headers = *headers
	}
	if events != nil {
		w.Events = *events
	}
	return w
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
	hook := webhookIn(req.Body.WebhookUrl, req.Body.WebhookHeaders, req.Body.WebhookEvents, req.Body.DeliveryNode)
	c, err := s.Service.RegisterHost(ctx, domain.NewHost{Name: req.Body.Name, WebhookURL: hook.URL,
		WebhookHeaders: hook.Headers, WebhookEvents: hook.Events, DeliveryNode: hook.DeliveryNode})
	if err != nil {
		return nil, err
	}
	h := hostOut(c.Host)
	return CreateHost201JSONResponse{HostId: h.HostId, Name: h.Name, WebhookUrl: h.WebhookUrl,
		WebhookHeaderNames: h.WebhookHeaderNames, WebhookEvents: h.WebhookEvents, DeliveryNode: h.DeliveryNode, CreatedAt: h.CreatedAt,
		SecretRotatedAt: h.SecretRotatedAt, Token: c.Token, WebhookSecret: c.Host.Secret}, nil
}

// SetHostWebhook replaces a host's webhook URL, delivery headers and
// event subscription.
func (s *Server) SetHostWebhook(ctx context.Context, req SetHostWebhookRequestObject) (SetHostWebhookResponseObject, error) {
	if req.Body == nil {
		return nil, domain.E(domain.CodeInvalidRequest, "a JSON body is required")
	}
	h, err := s.Service.SetHostWebhook(ctx, req.HostId, webhookIn(req.Body.WebhookUrl, req.Body.WebhookHeaders, req.Body.WebhookEvents, req.Body.DeliveryNode))
	if err != nil {
		return nil, err
	}
	return SetHostWebhook200JSONResponse(hostOut(h)), nil
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

func policyOut(rules []domain.ApprovalRule) ApprovalPolicy {
	out := ApprovalPolicy{Rules: make([]ApprovalRule, len(rules))}
	for i, r := range rules {
		out.Rules[i] = ApprovalRule{Argv: r.Argv}
		if r.Agent != "" {
			a := ApprovalRuleAgent(r.Agent)
			out.Rules[i].Agent = &a
		}
		if r.Project != "" {
			p := r.Project
			out.Rules[i].Project = &p
		}
	}
	return out
}

// GetApprovalPolicy returns a host's exact-command auto-approval rules.
func (s *Server) GetApprovalPolicy(ctx context.Context, req GetApprovalPolicyRequestObject) (GetApprovalPolicyResponseObject, error) {
	rules, err := s.Service.ApprovalPolicy(ctx, req.HostId)
	if err != nil {
		return nil, err
	}
	return GetApprovalPolicy200JSONResponse(policyOut(rules)), nil
}

// SetApprovalPolicy replaces a host's exact-command auto-approval rules.
func (s *Server) SetApprovalPolicy(ctx context.Context, req SetApprovalPolicyRequestObject) (SetApprovalPolicyResponseObject, error) {
	if req.Body == nil {
		return nil, domain.E(domain.CodeInvalidRequest, "a JSON body is required")
	}
	rules := make([]domain.ApprovalRule, len(req.Body.Rules))
	for i, r := range req.Body.Rules {
		rules[i] = domain.ApprovalRule{Argv: r.Argv}
		if r.Agent != nil {
			rules[i].Agent = string(*r.Agent)
		}
		if r.Project != nil {
			rules[i].Project = *r.Project
		}
	}
	out, err := s.Service.SetApprovalPolicy(ctx, req.HostId, rules)
	if err != nil {
		return nil, err
	}
	return SetApprovalPolicy200JSONResponse(policyOut(out)), nil
}
