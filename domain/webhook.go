package domain

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
)

// WebhookEventTypes are the event types AKK delivers as webhooks; a host
// may subscribe to some of them (none named: all). host.ping is always
// delivered: it is the operator's test.
var WebhookEventTypes = []string{
	"host.ping",
	"turn.accepted", "turn.approval_required", "turn.approval_auto_approved", "turn.interaction_required",
	"turn.waiting_for_host", "turn.completed", "turn.failed", "turn.cancelled", "turn.stalled",
	"turn.delivery_uncertain", "turn.response_uncertain", "turn.interaction_uncertain",
	"watch.approval_observed", "watch.completed", "watch.failed", "watch.timed_out", "watch.invalidated",
}

// Limits of a host's own delivery headers.
const (
	MaxWebhookHeaders     = 8
	maxWebhookHeaderName  = 64
	maxWebhookHeaderValue = 1024
)

// reservedWebhookHeaders are set by AKK itself or belong to the connection:
// a host may not set them (compared in lower case).
var reservedWebhookHeaders = map[string]bool{
	"webhook-id": true, "webhook-timestamp": true, "webhook-signature": true, "idempotency-key": true,
	"content-type": true, "content-length": true, "host": true, "user-agent": true,
	"connection": true, "keep-alive": true, "te": true, "trailer": true, "transfer-encoding": true, "upgrade": true,
}

// HostWebhook is where and how a host's webhooks are delivered.
type HostWebhook struct {
	URL string
	// Headers are added to every delivery (a hook's own token, say). Their
	// values are never shown, logged or stored in an error.
	Headers map[string]string
	// Events is the host's subscription; empty: every type.
	Events []string
	// DeliveryNode is, in a fleet, the one node that delivers the host's
	// webhooks ('': any live node).
	DeliveryNode string
}

// Subscribed reports whether the host wants webhooks of type typ.
func (h Host) Subscribed(typ string) bool {
	return len(h.WebhookEvents) == 0 || typ == "host.ping" || slices.Contains(h.WebhookEvents, typ)
}

// HeaderNames are the names of the host's delivery headers, sorted.
func (h Host) HeaderNames() []string {
	out := make([]string, 0, len(h.WebhookHeaders))
	for k := range h.WebhookHeaders {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// isTokenChar reports whether c may appear in an HTTP field name (RFC 9110 tchar).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func badHeader(msg string) error {
	return Invalid("webhook_headers: "+msg, FieldError{Field: "webhook_headers", Message: msg})
}

// checkWebhookHeaders validates a host's delivery headers. No message
// quotes a value.
func checkWebhookHeaders(hs map[string]string) error {
	if len(hs) > MaxWebhookHeaders {
		return badHeader(fmt.Sprintf("at most %d headers", MaxWebhookHeaders))
	}
	seen := map[string]bool{}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range hs {
			if !yield(k) {
				return
			}
		}
	}) {
		if name == "" || len(name) > maxWebhookHeaderName {
			return badHeader(fmt.Sprintf("a header name must have 1 to %d characters", maxWebhookHeaderName))
		}
		for i := 0; i < len(name); i++ {
			if !isTokenChar(name[i]) {
				return badHeader("a header name may hold only letters, digits and !#$%&'*+-.^_`|~")
			}
		}
		lower := strings.ToLower(name)
		if reservedWebhookHeaders[lower] || strings.HasPrefix(lower, "proxy-") {
			return badHeader(name + " is set by AKK or the connection and cannot be given")
		}
		if seen[lower] {
			return badHeader(name + " is given twice")
		}
		seen[lower] = true
		v := hs[name]
		if len(v) > maxWebhookHeaderValue {
			return badHeader(fmt.Sprintf("the value of %s is longer than %d characters", name, maxWebhookHeaderValue))
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				return badHeader("the value of " + name + " may hold only printable ASCII (no control characters, no line breaks)")
			}
		}
		if v == "" || v[0] == ' ' || v[len(v)-1] == ' ' {
			return badHeader("the value of " + name + " must not be empty or start or end with a space")
		}
	}
	return nil
}

// checkWebhookEvents validates a subscription and returns it without
// repeats, in the order given.
func checkWebhookEvents(evs []string) ([]string, error) {
	out := []string{}
	for i, e := range evs {
		if !slices.Contains(WebhookEventTypes, e) {
			field := fmt.Sprintf("webhook_events[%d]", i)
			return nil, Invalid(field+" is not a webhook event type",
				FieldError{Field: field, Message: "not a webhook event type; one of " + strings.Join(WebhookEventTypes, ", ")})
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, nil
}

// checkHostWebhook validates a webhook and returns it normalised.
func checkHostWebhook(w HostWebhook) (HostWebhook, error) {
	if err := checkWebhookURL(w.URL); err != nil {
		return w, err
	}
	if err := checkWebhookHeaders(w.Headers); err != nil {
		return w, err
	}
	evs, err := checkWebhookEvents(w.Events)
	if err != nil {
		return w, err
	}
	w.Events = evs
	if w.Headers == nil {
		w.Headers = map[string]string{}
	}
	return w, nil
}

// IsLoopbackHost reports whether a URL's host is localhost or a loopback
// address.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
