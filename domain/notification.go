package domain

import (
	"math/rand/v2"
	"time"
)

// NotificationState is where a webhook delivery stands.
type NotificationState string

const (
	NotificationPending   NotificationState = "pending"
	NotificationDelivered NotificationState = "delivered"
	NotificationFailed    NotificationState = "failed"
)

// Notification is one webhook in the outbox. Its ID is the `webhook-id`
// header, stable across retries, so receivers can deduplicate.
type Notification struct {
	ID             string
	EventID        int64
	HostID         string
	Type           string
	State          NotificationState
	Attempts       int
	CreatedAt      time.Time
	NextAttemptAt  time.Time
	LastAttemptAt  time.Time
	LastStatusCode int
	LastError      string
	DeliveredAt    time.Time
}

// Delivery is a claimed notification with what is needed to send it.
type Delivery struct {
	Notification
	Payload    []byte
	WebhookURL string
	Secret     string
	// Headers are the host's own delivery headers (values private).
	Headers map[string]string
	// PreviousSecret also signs until PreviousSecretUntil (a rotation's
	// grace period); "" when none.
	PreviousSecret      string
	PreviousSecretUntil time.Time
	// Lease is the lease this delivery was claimed under: its attempt is
	// recorded only while the row still carries it.
	Lease time.Time
}

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	NotificationID string
	At             time.Time
	StatusCode     int
	Error          string
	Duration       time.Duration
	// Next state: delivered, pending (with NextAt) or failed.
	State  NotificationState
	NextAt time.Time
	// Lease is the delivery's lease (Delivery.Lease).
	Lease time.Time
}

// NotificationFilter selects notifications.
type NotificationFilter struct {
	HostID string // empty: all (operator)
	State  NotificationState
	Limit  int
}

// RetryPolicy decides when a failed delivery is tried again.
type RetryPolicy struct {
	// Schedule is the wait after the 1st, 2nd, ... failed attempt. After the
	// last entry the notification is failed; an operator may retry it.
	Schedule []time.Duration
	// Jitter is the fraction (0..1) by which each wait is spread randomly.
	Jitter float64
}

// DefaultRetryPolicy follows the Standard Webhooks recommendation.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		Schedule: []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute,
			2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour},
		Jitter: 0.1,
	}
}

// maxRetryAfter bounds a receiver's Retry-After.
const maxRetryAfter = 24 * time.Hour

// After returns the next attempt time after the given failed attempt number
// (1-based), honouring a receiver's Retry-After, or false when it gives up.
func (p RetryPolicy) After(now time.Time, attempt int, retryAfter time.Duration) (time.Time, bool) {
	if attempt < 1 || attempt > len(p.Schedule) {
		return time.Time{}, false
	}
	wait := p.Schedule[attempt-1]
	if p.Jitter > 0 {
		spread := float64(wait) * p.Jitter
		wait += time.Duration((rand.Float64()*2 - 1) * spread)
	}
	if retryAfter > wait {
		wait = min(retryAfter, maxRetryAfter)
	}
	return now.Add(wait), true
}
