package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"akk/domain"
)

// outboxRow is a notification with what only the store sees of it.
type outboxRow struct {
	domain.Notification
	payload []byte
	subject string    // the subject of its event
	lease   time.Time // zero: not leased
	seq     int64
}

func (t *tx) InsertNotification(ctx context.Context, n domain.Notification, payload []byte) error {
	if err := fresh("insert notification", t.st.outbox, n.ID); err != nil {
		return err
	}
	e, ok := t.st.event(n.EventID)
	if !ok {
		return fmt.Errorf("insert notification: event %d: %w", n.EventID, errMissing)
	}
	if err := t.st.needHost("insert notification", n.HostID); err != nil || n.HostID == "" {
		return cmp.Or(err, fmt.Errorf("insert notification: no host: %w", errMissing))
	}
	row := domain.Notification{ID: n.ID, EventID: n.EventID, HostID: n.HostID, Type: n.Type, State: n.State,
		CreatedAt: utc(n.CreatedAt), NextAttemptAt: utc(n.NextAttemptAt)}
	t.st.outbox[n.ID] = outboxRow{Notification: row, payload: slices.Clone(payload), subject: e.Subject, seq: t.st.next()}
	t.change.Notifications = true
	return nil
}

func (st *state) notification(id string) (domain.Notification, error) {
	r, ok := st.outbox[id]
	if !ok {
		return domain.Notification{}, domain.ErrNotFound
	}
	return r.Notification, nil
}

func (t *tx) Notification(ctx context.Context, id string) (domain.Notification, error) {
	return t.st.notification(id)
}

// Notification returns one notification.
func (s *Store) Notification(ctx context.Context, id string) (domain.Notification, error) {
	return s.committed().notification(id)
}

// RescheduleNotification makes a row pending again, due at; a delivery in
// flight keeps its lease, so the row is not handed out twice.
func (t *tx) RescheduleNotification(ctx context.Context, id string, at time.Time) error {
	if r, ok := t.st.outbox[id]; ok {
		r.State, r.NextAttemptAt = domain.NotificationPending, utc(at)
		if !r.lease.After(at) {
			r.lease = time.Time{}
		}
		t.st.outbox[id] = r
	}
	t.change.Notifications = true
	return nil
}

// rows returns the outbox rows keep lets through, ordered by less.
func (st *state) rows(keep func(outboxRow) bool, less func(a, b outboxRow) int) []outboxRow {
	var out []outboxRow
	for _, r := range st.outbox {
		if keep(r) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, less)
	return out
}

func public(rows []outboxRow) []domain.Notification {
	out := make([]domain.Notification, len(rows))
	for i, r := range rows {
		out[i] = r.Notification
	}
	return out
}

// Notifications lists notifications, newest first.
func (s *Store) Notifications(ctx context.Context, f domain.NotificationFilter) ([]domain.Notification, error) {
	rows := s.committed().rows(func(r outboxRow) bool {
		return (f.HostID == "" || r.HostID == f.HostID) && (f.State == "" || r.State == f.State)
	}, func(a, b outboxRow) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	if f.Limit >= 0 && len(rows) > f.Limit {
		rows = rows[:f.Limit]
	}
	return public(rows), nil
}

// NotificationsAbout lists the outbox rows of the events about one record.
func (s *Store) NotificationsAbout(ctx context.Context, subject string) ([]domain.Notification, error) {
	rows := s.committed().rows(func(r outboxRow) bool { return r.subject == subject }, byCreation)
	return public(rows), nil
}

func byCreation(a, b outboxRow) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.seq, b.seq))
}

// waitsBehind reports, of each pending row, whether an earlier pending
// row of its host has the same subject: the callbacks of one Turn go in
// order.
func (st *state) waitsBehind() func(outboxRow) bool {
	type key struct{ host, subject string }
	first := map[key]int64{}
	for _, r := range st.outbox {
		k := key{r.HostID, r.subject}
		if f, ok := first[k]; r.State == domain.NotificationPending && (!ok || r.EventID < f) {
			first[k] = r.EventID
		}
	}
	return func(r outboxRow) bool { return r.subject != "" && first[key{r.HostID, r.subject}] < r.EventID }
}

// dueHeads returns the earliest due row of each host that is not busy,
// has no delivery in flight and is not pinned to a fleet node, earliest
// first.
func (st *state) dueHeads(now time.Time, busy []string) []outboxRow {
	inFlight := map[string]bool{}
	for _, r := range st.outbox {
		if r.State == domain.NotificationPending && r.lease.After(now) {
			inFlight[r.HostID] = true
		}
	}
	behind := st.waitsBehind()
	heads := map[string]outboxRow{}
	for _, r := range st.outbox {
		if r.State != domain.NotificationPending || r.NextAttemptAt.After(now) || st.hosts[r.HostID].DeliveryNode != "" ||
			inFlight[r.HostID] || slices.Contains(busy, r.HostID) || behind(r) {
			continue
		}
		if h, ok := heads[r.HostID]; !ok || byDue(r, h) < 0 {
			heads[r.HostID] = r
		}
	}
	return slices.SortedFunc(maps.Values(heads), byDue)
}

func byDue(a, b outboxRow) int {
	return cmp.Or(a.NextAttemptAt.Compare(b.NextAttemptAt), cmp.Compare(a.EventID, b.EventID))
}

// ClaimDueNotifications leases up to limit due rows, one per host.
func (s *Store) ClaimDueNotifications(ctx context.Context, now, leaseUntil time.Time, limit int, busy []string) ([]domain.Delivery, error) {
	var out []domain.Delivery
	err := s.update(ctx, func(t *tx) error {
		heads := t.st.dueHeads(now, busy)
		if limit >= 0 && len(heads) > limit {
			heads = heads[:limit]
		}
		for _, r := range heads {
			r.lease = utc(leaseUntil)
			t.st.outbox[r.ID] = r
			h := t.st.hosts[r.HostID]
			out = append(out, domain.Delivery{Notification: r.Notification, Payload: slices.Clone(r.payload),
				WebhookURL: h.WebhookURL, Secret: h.Secret, Headers: headersOf(h.WebhookHeaders),
				PreviousSecret: h.prevSecret, PreviousSecretUntil: h.prevUntil, Lease: leaseUntil})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	return out, nil
}

// NextNotificationDue returns when the earliest pending row may go: its
// next attempt, or the end of its lease when later.
func (s *Store) NextNotificationDue(ctx context.Context) (time.Time, bool, error) {
	st := s.committed()
	behind := st.waitsBehind()
	var next time.Time
	for _, r := range st.outbox {
		if r.State != domain.NotificationPending || behind(r) {
			continue
		}
		at := r.NextAttemptAt
		if r.lease.After(at) {
			at = r.lease
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, !next.IsZero(), nil
}

// RecordAttempt stores one attempt and, while the row still carries the
// attempt's lease (a later claim's outcome wins), its next state.
func (s *Store) RecordAttempt(ctx context.Context, a domain.Attempt) error {
	return s.update(ctx, func(t *tx) error {
		r, ok := t.st.outbox[a.NotificationID]
		if !ok {
			return fmt.Errorf("record attempt: %w", errMissing)
		}
		t.st.attempts[a.NotificationID]++
		if r.lease.IsZero() || !r.lease.Equal(a.Lease) || r.State == domain.NotificationDelivered {
			return nil // the attempt is history; the row's state is not ours to set
		}
		next := a.NextAt
		if next.IsZero() {
			next = a.At
		}
		r.State, r.Attempts, r.LastAttemptAt = a.State, r.Attempts+1, utc(a.At)
		r.LastStatusCode, r.LastError, r.NextAttemptAt, r.lease = a.StatusCode, a.Error, utc(next), time.Time{}
		if a.State == domain.NotificationDelivered {
			r.DeliveredAt = utc(a.At)
		}
		t.st.outbox[r.ID] = r
		t.change.Notifications = a.State == domain.NotificationPending
		return nil
	})
}

// Counts is Turns by state, the earliest last change of a Turn waiting on
// a person, and outbox rows by state.
func (s *Store) Counts(ctx context.Context) (domain.StoreCounts, error) {
	st := s.committed()
	c := domain.StoreCounts{Turns: map[domain.TurnState]int{}, Notifications: map[domain.NotificationState]int{}}
	for _, t := range st.turns {
		c.Turns[t.State]++
		waiting := t.State == domain.TurnAwaitingApproval || t.State == domain.TurnAwaitingInteraction
		if waiting && (c.OldestWaiting.IsZero() || t.UpdatedAt.Before(c.OldestWaiting)) {
			c.OldestWaiting = t.UpdatedAt
		}
	}
	for _, r := range st.outbox {
		c.Notifications[r.State]++
	}
	return c, nil
}
