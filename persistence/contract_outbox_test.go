package persistence_test

import (
	"context"
	"testing"
	"time"

	"akk/domain"
	"akk/persistence/storetest"
)

// A webhook rescheduled while its delivery is in flight keeps the lease:
// it is claimed again only once the lease ends, and is due then.
func TestRescheduleKeepsTheLease(t *testing.T) {
	eachStoreOnCallersClock(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		addHosts(t, s, "host_a")
		ping(t, s, "ntf_1", "host_a", "", at0)
		lease := at0.Add(time.Minute)
		if got, err := s.ClaimDueNotifications(ctx, at0, lease, 10, nil); err != nil || len(got) != 1 || !got[0].Lease.Equal(lease) {
			t.Fatalf("claimed %+v, %v", got, err)
		}
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			return tx.RescheduleNotification(ctx, "ntf_1", at0.Add(10*time.Second))
		})
		if got, err := s.ClaimDueNotifications(ctx, at0.Add(20*time.Second), at0.Add(2*time.Minute), 10, nil); err != nil || len(got) != 0 {
			t.Fatalf("claimed in the lease %+v, %v", got, err)
		}
		if due, ok, err := s.NextNotificationDue(ctx); err != nil || !ok || !due.Equal(lease) {
			t.Fatalf("due %v %v %v, want the lease's end", due, ok, err)
		}
		if got, err := s.ClaimDueNotifications(ctx, lease, lease.Add(time.Minute), 10, nil); err != nil || len(got) != 1 {
			t.Fatalf("claimed after the lease %+v, %v", got, err)
		}
	})
}

// An attempt is stored with the next state only while the row carries its
// lease: a claim made after the lease ended owns the row.
func TestAttemptOfAnEndedLease(t *testing.T) {
	eachStoreOnCallersClock(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		addHosts(t, s, "host_a")
		ping(t, s, "ntf_1", "host_a", "host_a", at0)
		first, _ := s.ClaimDueNotifications(ctx, at0, at0.Add(time.Minute), 10, nil)
		later := at0.Add(2 * time.Minute)
		second, err := s.ClaimDueNotifications(ctx, later, later.Add(time.Minute), 10, nil)
		if len(first) != 1 || len(second) != 1 || err != nil {
			t.Fatalf("claims %+v, %+v, %v", first, second, err)
		}
		if err := s.RecordAttempt(ctx, domain.Attempt{NotificationID: "ntf_1", At: later, StatusCode: 200,
			State: domain.NotificationDelivered, Lease: first[0].Lease}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Notification(ctx, "ntf_1"); err != nil || n.State != domain.NotificationPending || n.Attempts != 0 {
			t.Fatalf("the first claim's outcome was stored %+v, %v", n, err)
		}
		retry := later.Add(time.Hour)
		if err := s.RecordAttempt(ctx, domain.Attempt{NotificationID: "ntf_1", At: later, StatusCode: 503, Error: "unavailable",
			State: domain.NotificationPending, NextAt: retry, Lease: second[0].Lease}); err != nil {
			t.Fatal(err)
		}
		n, err := s.Notification(ctx, "ntf_1")
		if err != nil || n.State != domain.NotificationPending || n.Attempts != 1 || n.LastStatusCode != 503 || n.LastError != "unavailable" ||
			!n.NextAttemptAt.Equal(retry) || !n.LastAttemptAt.Equal(later) || !n.DeliveredAt.IsZero() {
			t.Fatalf("a retry %+v, %v", n, err)
		}
		if due, ok, err := s.NextNotificationDue(ctx); err != nil || !ok || !due.Equal(retry) {
			t.Fatalf("due %v %v %v", due, ok, err)
		}
		if got, err := s.ClaimDueNotifications(ctx, later, later.Add(time.Minute), 10, nil); err != nil || len(got) != 0 {
			t.Fatalf("claimed before its retry %+v, %v", got, err)
		}
	})
}

// Webhooks are listed newest first, by host and state, up to a limit; a
// record's webhooks in the order they were made. A host pinned to a fleet
// node is not delivered by a daemon on its own.
func TestWebhooksListed(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		addHosts(t, s, "host_a", "host_b")
		ping(t, s, "ntf_1", "host_a", "turn_1", at0)
		ping(t, s, "ntf_2", "host_b", "turn_2", at0.Add(time.Second))
		ping(t, s, "ntf_3", "host_a", "turn_1", at0.Add(2*time.Second))
		ids := func(ns []domain.Notification, err error) string {
			if err != nil {
				t.Fatal(err)
			}
			out := ""
			for _, n := range ns {
				out += n.ID[4:]
			}
			return out
		}
		for _, c := range []struct {
			f    domain.NotificationFilter
			want string
		}{
			{domain.NotificationFilter{Limit: 10}, "321"}, {domain.NotificationFilter{HostID: "host_a", Limit: 10}, "31"},
			{domain.NotificationFilter{Limit: 1}, "3"}, {domain.NotificationFilter{State: domain.NotificationFailed, Limit: 10}, ""},
		} {
			if got := ids(s.Notifications(ctx, c.f)); got != c.want {
				t.Errorf("%+v: %q, want %q", c.f, got, c.want)
			}
		}
		if got := ids(s.NotificationsAbout(ctx, "turn_1")); got != "13" {
			t.Errorf("about turn_1: %q", got)
		}
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			return tx.UpdateHostWebhook(ctx, "host_b", 1, domain.HostWebhook{URL: "http://127.0.0.1:1/b", DeliveryNode: "node-b"})
		})
		if got, err := s.ClaimDueNotifications(ctx, at0.Add(time.Minute), at0.Add(2*time.Minute), 10, nil); err != nil || len(got) != 1 || got[0].ID != "ntf_1" {
			t.Fatalf("claimed %+v, %v", got, err)
		}
		if c, err := s.Counts(ctx); err != nil || c.Notifications[domain.NotificationPending] != 3 || len(c.Notifications) != 1 {
			t.Fatalf("counts %+v, %v", c, err)
		}
	})
}
