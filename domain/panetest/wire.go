package panetest

import (
	"akk/domain"
	"akk/endpoints"
)

// Use wires p in as svc's pane transport and its panes' endpoint, as the
// daemon wires its pane adapter.
func Use(svc *domain.Service, p domain.PaneTransport, redact domain.Redactor, cfg domain.TurnConfig) {
	svc.UsePanes(p, redact, cfg)
	svc.UseEndpoint(domain.EndpointPane, endpoints.NewPane(p, cfg, svc.Clock()))
}
