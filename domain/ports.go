package domain

import (
	"context"
	"time"

	"github.com/coder/quartz"
)

// Clock tells the time and runs every timer and ticker of the domain, so
// tests move a fake one (quartz.Mock) instead of sleeping; production
// passes quartz.NewReal().
type Clock = quartz.Clock

// IDs makes identifiers and secrets from a random source.
type IDs interface {
	// New returns prefix + "_" + an opaque random id.
	New(prefix string) string
	// Secret returns n random bytes.
	Secret(n int) []byte
}

// Validator checks tagged input structs (go-playground/validator in
// production) and reports each invalid field.
type Validator interface {
	Struct(v any) []FieldError
}

// Store is the persistence port. Reads run outside transactions; every change
// runs in InTx so state, events and outbox rows commit together.
type Store interface {
	InTx(ctx context.Context, fn func(tx Tx) error) error

	// CheckWritable proves a write transaction can begin now.
	CheckWritable(ctx context.Context) error
	Setting(ctx context.Context, key string) (string, error)
	HostByTokenHash(ctx context.Context, tokenHash string) (Host, error)
	Host(ctx context.Context, hostID string) (Host, error)
	Hosts(ctx context.Context) ([]Host, error)

	EventsAfter(ctx context.Context, after int64, filter EventFilter, limit int) ([]Event, error)
	LastEventID(ctx context.Context) (int64, error)

	Notification(ctx context.Context, id string) (Notification, error)
	Notifications(ctx context.Context, filter NotificationFilter) ([]Notification, error)
	// ClaimDueNotifications leases up to limit pending notifications whose
	// attempt is due, at most one per host and none of the hosts in busy
	// (their previous delivery is still in flight): each host's
	// notifications go one at a time, in order, and a hanging receiver
	// holds up only its own host.
	ClaimDueNotifications(ctx context.Context, now, leaseUntil time.Time, limit int, busy []string) ([]Delivery, error)
	// NextNotificationDue returns when the earliest pending notification is due.
	NextNotificationDue(ctx context.Context) (time.Time, bool, error)
	// Counts is what /metrics shows of the store.
	Counts(ctx context.Context) (StoreCounts, error)
	RecordAttempt(ctx context.Context, a Attempt) error

	Turn(ctx context.Context, id string) (Turn, error)
	Turns(ctx context.Context, f TurnFilter) ([]Turn, error)
	// TurnByMessageID finds an owner's Turn by idempotency key.
	TurnByMessageID(ctx context.Context, hostID, messageID string) (Turn, error)
	// RecentTurnsOf returns the newest per Turns (every owner's, newest
	// first) of each endpoint in eps that has any, in one read.
	RecentTurnsOf(ctx context.Context, eps []EndpointRef, per int) (map[EndpointRef][]Turn, error)
	// HoldingTurn returns the Turn that holds the endpoint, if any.
	HoldingTurn(ctx context.Context, ep EndpointRef) (Turn, error)
	Session(ctx context.Context, id string) (Session, error)
	// NotificationsAbout lists the outbox rows of the events about one record (a Turn or a Watch).
	NotificationsAbout(ctx context.Context, turnID string) ([]Notification, error)
	// TurnChanges lists the file changes stored for a Turn, in order.
	TurnChanges(ctx context.Context, turnID string) ([]TurnChange, error)
	Watch(ctx context.Context, id string) (Watch, error)
	ActiveWatches(ctx context.Context) ([]Watch, error)
	// OwnedActiveWatches returns the active Watches this daemon monitors
	// (in a fleet, those its node started).
	OwnedActiveWatches(ctx context.Context) ([]Watch, error)
	// OperatorTokenKnown reports whether hash is the operator token hash of
	// a node of this daemon's fleet (an operator token works on every node).
	OperatorTokenKnown(ctx context.Context, hash string) (bool, error)
	// WatchOfTurn returns the Watch a Send attached to its Turn.
	WatchOfTurn(ctx context.Context, turnID string) (Watch, error)
}

// Tx is one store transaction.
type Tx interface {
	PutSetting(ctx context.Context, key, value string) error
	InsertHost(ctx context.Context, h Host, tokenHash string) error
	Host(ctx context.Context, hostID string) (Host, error)
	// UpdateHostSecret swaps the secret if the host is still at revision rev.
	UpdateHostSecret(ctx context.Context, hostID string, rev int64, secret string, at time.Time) error
	// UpdateHostWebhook replaces a live host's webhook URL, delivery
	// headers and subscription (compare-and-swap).
	UpdateHostWebhook(ctx context.Context, id string, rev int64, w HostWebhook) error
	// UpdateHostToken replaces a live host's token hash (compare-and-swap).
	UpdateHostToken(ctx context.Context, id string, rev int64, tokenHash string) error
	// RemoveHost marks a live host removed and fails its pending
	// notifications; ErrNotFound when there is no such live host.
	RemoveHost(ctx context.Context, id string, at time.Time) error
	// AppendEvent stores e, assigning its id.
	AppendEvent(ctx context.Context, e Event) (Event, error)
	InsertNotification(ctx context.Context, n Notification, payload []byte) error
	Notification(ctx context.Context, id string) (Notification, error)
	RescheduleNotification(ctx context.Context, id string, at time.Time) error

	InsertSession(ctx context.Context, s Session) error
	Session(ctx context.Context, id string) (Session, error)
	// BindSession records the native thread of a session still at revision rev.
	BindSession(ctx context.Context, id string, rev int64, threadID string) error
	InsertTurn(ctx context.Context, t Turn) error
	Turn(ctx context.Context, id string) (Turn, error)
	// UpdateTurn writes t if the stored row is still at revision t.Revision,
	// and bumps the revision.
	UpdateTurn(ctx context.Context, t Turn) error
	DeleteTurn(ctx context.Context, id string) error
	// AddTurnChanges appends changes to a Turn's (numbered after those
	// stored; beyond MaxTurnChanges none is kept).
	AddTurnChanges(ctx context.Context, turnID string, changes []TurnChange) error

	InsertOffer(ctx context.Context, o Offer) error
	// LiveOffer returns the newest unconsumed, unexpired offer of this scope.
	LiveOffer(ctx context.Context, kind, terminalID, turnID, hostID, conversation string, now time.Time) (Offer, error)
	// OfferByPublicID returns the newest unconsumed offer of this scope that
	// showed publicID, expired or not (its display may be revalidated live).
	OfferByPublicID(ctx context.Context, kind, terminalID, turnID, hostID, conversation, publicID string) (Offer, error)
	// ConsumeOffer uses the offer and fences one occurrence (key, see
	// fenceKey) of the prompt base for good (ErrFingerprintConsumed when
	// that occurrence was answered before).
	ConsumeOffer(ctx context.Context, offerID, base, key string, now time.Time) error
	FingerprintConsumed(ctx context.Context, key string) (bool, error)
	// ProvenOccurrences counts the proven answers to the prompt base.
	ProvenOccurrences(ctx context.Context, base string) (int, error)
	// VerifyFence marks the answer fenced by key proven.
	VerifyFence(ctx context.Context, key string, now time.Time) error

	// ApprovalPolicy is the host's auto-approval rules (none: off).
	ApprovalPolicy(ctx context.Context, hostID string) ([]ApprovalRule, error)
	PutApprovalPolicy(ctx context.Context, hostID string, rules []ApprovalRule, now time.Time) error

	InsertWatch(ctx context.Context, w Watch) error
	// UpdateWatch writes w if the stored row is still at revision w.Revision.
	UpdateWatch(ctx context.Context, w Watch) error
	WatchOfTurn(ctx context.Context, turnID string) (Watch, error)
}
