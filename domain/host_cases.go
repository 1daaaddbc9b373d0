package domain

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// HostCases is the hosts' use case: registering, rotating, deleting and
// authenticating controllers, their webhooks, the operator token and the
// fleet's nodes. It holds the basic ports and nothing of Turns or panes.
type HostCases struct {
	basics
	// fleet is this daemon's place in a fleet (UseFleet); zero on its own.
	fleet *fleetInfo

	revokedMu    sync.Mutex
	revoked      []func(hostID string)
	operatorHash string
}

// fleetInfo names this node and the nodes of its fleet.
type fleetInfo struct {
	// self is this node's name in the fleet ("" on its own).
	self string
	// nodes names the nodes of the fleet; nil for a daemon on its own.
	nodes func(ctx context.Context) ([]string, error)
}

// newHostCases is the hosts' use case on the basic ports.
func newHostCases(b basics) *HostCases { return &HostCases{basics: b, fleet: &fleetInfo{}} }

const settingOperatorTokenHash = "operator_token_hash"

// UseFleet makes the daemon the node self of a fleet whose node names
// nodes lists: a host's webhooks may then be pinned to one node, and must
// be when their URL is a loopback one.
func (s *HostCases) UseFleet(self string, nodes func(ctx context.Context) ([]string, error)) {
	*s.fleet = fleetInfo{self: self, nodes: nodes}
}

// UseOperatorToken makes token the operator token and records its hash.
func (s *HostCases) UseOperatorToken(ctx context.Context, token string) error {
	hash := HashToken(token)
	if err := s.store.InTx(ctx, func(tx Tx) error { return tx.PutSetting(ctx, settingOperatorTokenHash, hash) }); err != nil {
		return fmt.Errorf("record operator token: %w", err)
	}
	s.operatorHash = hash
	return nil
}

// NewOperatorToken returns a fresh operator token (not yet in use).
func (s *HostCases) NewOperatorToken() string { return s.newToken("op") }

func checkWebhookURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Invalid("webhook_url must be an absolute http or https URL",
			FieldError{Field: "webhook_url", Message: "must be an absolute http or https URL"})
	}
	if u.User != nil {
		return Invalid("webhook_url must not carry credentials",
			FieldError{Field: "webhook_url", Message: "must not carry user:password"})
	}
	if u.Fragment != "" {
		return Invalid("webhook_url must not have a fragment",
			FieldError{Field: "webhook_url", Message: "must not have a #fragment"})
	}
	return nil
}

// RegisterHost creates a host with a fresh token and webhook secret.
func (s *HostCases) RegisterHost(ctx context.Context, in NewHost) (HostCredentials, error) {
	if err := requireOperator(ctx); err != nil {
		return HostCredentials{}, err
	}
	in.Name = strings.TrimSpace(in.Name)
	if err := s.validate(in); err != nil {
		return HostCredentials{}, err
	}
	if strings.IndexFunc(in.Name, unicode.IsControl) >= 0 {
		return HostCredentials{}, Invalid("name must not contain control characters",
			FieldError{Field: "name", Message: "must not contain control characters"})
	}
	hook, err := checkHostWebhook(HostWebhook{URL: in.WebhookURL, Headers: in.WebhookHeaders, Events: in.WebhookEvents, DeliveryNode: in.DeliveryNode})
	if err != nil {
		return HostCredentials{}, err
	}
	if err := s.checkDelivery(ctx, hook); err != nil {
		return HostCredentials{}, err
	}
	now := s.clock.Now().UTC()
	h := Host{
		ID:              s.ids.New("host"),
		Name:            in.Name,
		WebhookURL:      hook.URL,
		WebhookHeaders:  hook.Headers,
		WebhookEvents:   hook.Events,
		DeliveryNode:    hook.DeliveryNode,
		Secret:          s.newSecret(),
		CreatedAt:       now,
		SecretRotatedAt: now,
		Revision:        1,
	}
	token := s.newToken("h")
	err = s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertHost(ctx, h, HashToken(token)); err != nil {
			return err
		}
		_, err := tx.AppendEvent(ctx, Event{Type: "host.created", Subject: h.ID, CreatedAt: now,
			Data: map[string]any{"host_id": h.ID, "name": h.Name, "webhook_url": h.WebhookURL,
				"webhook_header_names": h.HeaderNames(), "webhook_events": h.WebhookEvents, "delivery_node": h.DeliveryNode}})
		return err
	})
	if err != nil {
		return HostCredentials{}, fmt.Errorf("register host: %w", err)
	}
	return HostCredentials{Host: h, Token: token}, nil
}

// Hosts lists every host (operator only).
func (s *HostCases) Hosts(ctx context.Context) ([]Host, error) {
	if err := requireOperator(ctx); err != nil {
		return nil, err
	}
	return s.store.Hosts(ctx)
}

// SecretGrace is how long a rotated-out webhook secret still signs
// deliveries beside the new one (Standard Webhooks allows several
// signatures), so a receiver can switch secrets without refusing any.
const SecretGrace = 24 * time.Hour

// RotateHostSecret gives a host a new webhook secret and returns it.
func (s *HostCases) RotateHostSecret(ctx context.Context, hostID string) (Host, error) {
	if err := requireOperator(ctx); err != nil {
		return Host{}, err
	}
	var out Host
	err := s.store.InTx(ctx, func(tx Tx) error {
		h, err := tx.Host(ctx, hostID)
		if errors.Is(err, ErrNotFound) {
			return E(CodeHostNotFound, "no host "+hostID)
		}
		if err != nil {
			return err
		}
		now := s.clock.Now().UTC()
		h.Secret = s.newSecret()
		if err := tx.UpdateHostSecret(ctx, h.ID, h.Revision, h.Secret, now); err != nil {
			return err
		}
		h.Revision++
		h.SecretRotatedAt = now
		out = h
		_, err = tx.AppendEvent(ctx, Event{Type: "host.secret_rotated", Subject: h.ID, CreatedAt: now,
			Data: map[string]any{"host_id": h.ID}})
		return err
	})
	if err != nil {
		return Host{}, err
	}
	return out, nil
}

// OnHostRevoked calls f with a host's id after its token was rotated or
// the host deleted: whatever its old credential still holds open (event
// streams, MCP sessions) must end.
func (s *HostCases) OnHostRevoked(f func(hostID string)) {
	s.revokedMu.Lock()
	defer s.revokedMu.Unlock()
	s.revoked = append(s.revoked, f)
}

// HostRevokedElsewhere ends what a host's old credential holds open here
// after another node of the fleet rotated its token or deleted it.
func (s *HostCases) HostRevokedElsewhere(hostID string) { s.hostRevoked(hostID) }

func (s *HostCases) hostRevoked(hostID string) {
	s.revokedMu.Lock()
	fs := append([]func(string){}, s.revoked...)
	s.revokedMu.Unlock()
	for _, f := range fs {
		f(hostID)
	}
}

// RotateHostToken gives a host a new bearer token and returns it; the old
// one is refused from then on.
func (s *HostCases) RotateHostToken(ctx context.Context, hostID string) (string, error) {
	if err := requireOperator(ctx); err != nil {
		return "", err
	}
	token := s.newToken("h")
	err := s.store.InTx(ctx, func(tx Tx) error {
		h, err := tx.Host(ctx, hostID)
		if errors.Is(err, ErrNotFound) {
			return E(CodeHostNotFound, "no host "+hostID)
		}
		if err != nil {
			return err
		}
		if err := tx.UpdateHostToken(ctx, h.ID, h.Revision, HashToken(token)); err != nil {
			return err
		}
		if err := forgetPushOf(ctx, tx, h.ID); err != nil {
			return err
		}
		_, err = tx.AppendEvent(ctx, Event{Type: "host.token_rotated", Subject: h.ID, CreatedAt: s.clock.Now().UTC(),
			Data: map[string]any{"host_id": h.ID}})
		return err
	})
	if err != nil {
		return "", err
	}
	s.hostRevoked(hostID)
	return token, nil
}

// DeleteHost removes a host: its token is refused at once and no webhook
// is sent to it any more; its Turns and Watches keep running, and its
// records stay readable by the operator.
func (s *HostCases) DeleteHost(ctx context.Context, hostID string) error {
	if err := requireOperator(ctx); err != nil {
		return err
	}
	err := s.store.InTx(ctx, func(tx Tx) error {
		now := s.clock.Now().UTC()
		if err := tx.RemoveHost(ctx, hostID, now); errors.Is(err, ErrNotFound) {
			return E(CodeHostNotFound, "no host "+hostID)
		} else if err != nil {
			return err
		}
		if err := forgetPushOf(ctx, tx, hostID); err != nil {
			return err
		}
		_, err := tx.AppendEvent(ctx, Event{Type: "host.removed", Subject: hostID, CreatedAt: now,
			Data: map[string]any{"host_id": hostID}})
		return err
	})
	if err != nil {
		return err
	}
	s.hostRevoked(hostID)
	return nil
}

// PingHost queues a host.ping webhook to the host.
func (s *HostCases) PingHost(ctx context.Context, hostID string) (Notification, error) {
	if err := requireOperator(ctx); err != nil {
		return Notification{}, err
	}
	var n Notification
	err := s.store.InTx(ctx, func(tx Tx) error {
		h, err := tx.Host(ctx, hostID)
		if errors.Is(err, ErrNotFound) {
			return E(CodeHostNotFound, "no host "+hostID)
		}
		if err != nil {
			return err
		}
		n, err = s.emitLocked(ctx, tx, Event{
			Type:    "host.ping",
			HostID:  h.ID,
			Subject: h.ID,
			Data:    map[string]any{"host_id": h.ID, "message": "ping from akk"},
		}, true)
		return err
	})
	return n, err
}

// Authenticate resolves a bearer token to a principal.
// HostName is the name of a live host ("" when there is none).
func (s *HostCases) HostName(ctx context.Context, hostID string) string {
	h, err := s.store.Host(ctx, hostID)
	if err != nil {
		return ""
	}
	return h.Name
}

func (s *HostCases) Authenticate(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, E(CodeUnauthorized, "a bearer token is required")
	}
	hash := HashToken(token)
	if s.operatorHash != "" && constantTimeEqual(hash, s.operatorHash) {
		return Principal{Operator: true}, nil
	}
	h, err := s.store.HostByTokenHash(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		// Another node's operator token (a fleet shares its store).
		if known, err := s.store.OperatorTokenKnown(ctx, hash); err != nil {
			return Principal{}, fmt.Errorf("look up token: %w", err)
		} else if known {
			return Principal{Operator: true}, nil
		}
		return Principal{}, E(CodeUnauthorized, "the bearer token is not valid")
	}
	if err != nil {
		return Principal{}, fmt.Errorf("look up token: %w", err)
	}
	return Principal{HostID: h.ID}, nil
}

func constantTimeEqual(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	var v byte
	for i := 0; i < len(a); i++ {
		v |= a[i] ^ b[i]
	}
	return v == 0
}

// retryCallbackOf retries a notification about subject.
func (s *HostCases) retryCallbackOf(ctx context.Context, what, subject, notificationID string) (Notification, error) {
	ns, err := s.store.NotificationsAbout(ctx, subject)
	if err != nil {
		return Notification{}, err
	}
	var failed []string
	for _, n := range ns {
		if notificationID != "" && n.ID == notificationID {
			return s.RetryNotification(ctx, n.ID)
		}
		if n.State == NotificationFailed {
			failed = append(failed, n.ID)
		}
	}
	switch {
	case notificationID != "":
		return Notification{}, E(CodeNotificationNotFound, what+" has no notification "+notificationID)
	case len(failed) == 1:
		return s.RetryNotification(ctx, failed[0])
	case len(failed) > 1:
		return Notification{}, &Error{Code: CodeNotificationIDRequired, Message: fmt.Sprintf("%s has %d failed notifications (%s); name one with notification_id",
			what, len(failed), strings.Join(failed, ", ")), Fields: []FieldError{{Field: "notification_id", Message: "required when several notifications failed"}}}
	}
	return Notification{}, E(CodeNotificationNotFound, what+" has no failed notification")
}

// Notifications lists the outbox as p may see it.
func (s *HostCases) Notifications(ctx context.Context, f NotificationFilter) ([]Notification, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return nil, err
	}
	if !p.Operator {
		f.HostID = p.HostID
	}
	if f.Limit <= 0 || f.Limit > 500 {
		f.Limit = 100
	}
	return s.store.Notifications(ctx, f)
}

// RetryNotification schedules an immediate redelivery with the original id.
func (s *HostCases) RetryNotification(ctx context.Context, id string) (Notification, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return Notification{}, err
	}
	var out Notification
	err = s.store.InTx(ctx, func(tx Tx) error {
		n, err := tx.Notification(ctx, id)
		if errors.Is(err, ErrNotFound) || (err == nil && !p.CanSeeHost(n.HostID)) {
			return E(CodeNotificationNotFound, "no notification "+id)
		}
		if err != nil {
			return err
		}
		if n.State == NotificationDelivered {
			return E(CodeNotificationDelivered, "notification "+id+" was already delivered")
		}
		now := s.clock.Now().UTC()
		if err := tx.RescheduleNotification(ctx, id, now); err != nil {
			return err
		}
		n.State = NotificationPending
		n.NextAttemptAt = now
		out = n
		return nil
	})
	return out, err
}

// checkDelivery checks where a host's webhooks are delivered from. On a
// daemon on its own, there is no node to pin them to. In a fleet, a
// pinned node must be one, and a loopback URL must be pinned: any other
// node would post it, with its headers, to whatever listens on that port
// of its own machine.
func (s *HostCases) checkDelivery(ctx context.Context, w HostWebhook) error {
	if s.fleet.nodes == nil {
		if w.DeliveryNode != "" {
			return Invalid("delivery_node is for a fleet: this daemon runs on its own",
				FieldError{Field: "delivery_node", Message: "only in a fleet"})
		}
		return nil
	}
	if w.DeliveryNode == "" {
		if u, err := url.Parse(w.URL); err == nil && IsLoopbackHost(u.Hostname()) {
			return Invalid("a loopback webhook_url in a fleet needs delivery_node",
				FieldError{Field: "webhook_url", Message: "a loopback URL in a fleet would be posted by whichever node delivers, to its own machine: name the node on the machine that listens (delivery_node)"})
		}
		return nil
	}
	names, err := s.fleet.nodes(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(names, w.DeliveryNode) {
		return Invalid("delivery_node names no node of this fleet",
			FieldError{Field: "delivery_node", Message: "no node " + w.DeliveryNode + " in this fleet"})
	}
	return nil
}

// SetHostWebhook replaces a host's webhook URL, delivery headers and event
// subscription at once (operator only). Notifications already queued are
// delivered with what is in force when they are sent.
func (s *HostCases) SetHostWebhook(ctx context.Context, hostID string, in HostWebhook) (Host, error) {
	if err := requireOperator(ctx); err != nil {
		return Host{}, err
	}
	if len(in.URL) > 2048 {
		return Host{}, Invalid("webhook_url is too long", FieldError{Field: "webhook_url", Message: "at most 2048 characters"})
	}
	in, err := checkHostWebhook(in)
	if err != nil {
		return Host{}, err
	}
	if err := s.checkDelivery(ctx, in); err != nil {
		return Host{}, err
	}
	var out Host
	err = s.store.InTx(ctx, func(tx Tx) error {
		h, err := tx.Host(ctx, hostID)
		if errors.Is(err, ErrNotFound) {
			return E(CodeHostNotFound, "no host "+hostID)
		}
		if err != nil {
			return err
		}
		if err := tx.UpdateHostWebhook(ctx, h.ID, h.Revision, in); err != nil {
			return err
		}
		h.Revision++
		h.WebhookURL, h.WebhookHeaders, h.WebhookEvents, h.DeliveryNode = in.URL, in.Headers, in.Events, in.DeliveryNode
		out = h
		_, err = tx.AppendEvent(ctx, Event{Type: "host.webhook_changed", Subject: h.ID, CreatedAt: s.clock.Now().UTC(),
			Data: map[string]any{"host_id": h.ID, "webhook_url": h.WebhookURL, "webhook_header_names": h.HeaderNames(),
				"webhook_events": h.WebhookEvents, "delivery_node": h.DeliveryNode}})
		return err
	})
	if err != nil {
		return Host{}, err
	}
	return out, nil
}
