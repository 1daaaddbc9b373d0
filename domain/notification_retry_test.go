package domain_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"akk/domain"
)

// A retry of a notification whose delivery is in flight neither hands it
// out a second time nor lets the first attempt's outcome be overwritten by
// a stale one.
func TestRetryOfAnInFlightNotification(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, "", &fakeTerm{term: idleTerminal()})
		op := domain.WithPrincipal(context.Background(), domain.Principal{Operator: true})
		hs, _ := w.store.Hosts(context.Background())
		n, err := w.svc.PingHost(op, hs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		now := w.now().UTC()
		claimed, err := w.store.ClaimDueNotifications(ctx, now.Add(time.Second), now.Add(time.Minute), 10, nil)
		if err != nil || len(claimed) != 1 || claimed[0].ID != n.ID {
			t.Fatalf("claim: %v %+v", err, claimed)
		}
		if _, err := w.svc.RetryNotification(op, n.ID); err != nil {
			t.Fatal(err)
		}
		if again, err := w.store.ClaimDueNotifications(ctx, now.Add(2*time.Second), now.Add(time.Minute), 10, nil); err != nil || len(again) != 0 {
			t.Fatalf("an in-flight notification was handed out again: %v %+v", err, again)
		}
		// A stale attempt (another lease) changes nothing; the claim's own does.
		stale := domain.Attempt{NotificationID: n.ID, At: now, State: domain.NotificationFailed, Error: "late", Lease: now.Add(-time.Hour)}
		if err := w.store.RecordAttempt(ctx, stale); err != nil {
			t.Fatal(err)
		}
		if cur, _ := w.store.Notification(ctx, n.ID); cur.State != domain.NotificationPending {
			t.Fatalf("a stale attempt set the state: %+v", cur)
		}
		ok := domain.Attempt{NotificationID: n.ID, At: now, StatusCode: 204, State: domain.NotificationDelivered, Lease: claimed[0].Lease}
		if err := w.store.RecordAttempt(ctx, ok); err != nil {
			t.Fatal(err)
		}
		if cur, _ := w.store.Notification(ctx, n.ID); cur.State != domain.NotificationDelivered || cur.Attempts != 1 {
			t.Fatalf("after the claim's own attempt: %+v", cur)
		}
		// Late failure of the first claim cannot regress a delivered row.
		if err := w.store.RecordAttempt(ctx, domain.Attempt{NotificationID: n.ID, At: now, State: domain.NotificationPending, NextAt: now, Lease: claimed[0].Lease}); err != nil {
			t.Fatal(err)
		}
		if cur, _ := w.store.Notification(ctx, n.ID); cur.State != domain.NotificationDelivered {
			t.Fatalf("a delivered row regressed: %+v", cur)
		}
	})
}

// Retention removes finished webhooks, their attempts and unreferenced
// events; pending ones and what they refer to stay.
func TestPruneKeepsWhatIsStillNeeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, "", &fakeTerm{term: idleTerminal()})
		op := domain.WithPrincipal(context.Background(), domain.Principal{Operator: true})
		hs, _ := w.store.Hosts(context.Background())
		ctx := context.Background()
		done, _ := w.svc.PingHost(op, hs[0].ID)
		pending, _ := w.svc.PingHost(op, hs[0].ID)
		now := w.now().UTC()
		claimed, _ := w.store.ClaimDueNotifications(ctx, now.Add(time.Second), now.Add(time.Minute), 10, nil)
		for _, d := range claimed {
			if d.ID == done.ID {
				w.store.RecordAttempt(ctx, domain.Attempt{NotificationID: d.ID, At: now, StatusCode: 204, State: domain.NotificationDelivered, Lease: d.Lease})
			}
		}
		p, err := w.store.Prune(ctx, w.now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if p.Notifications != 1 || p.Attempts != 1 || p.Events == 0 {
			t.Fatalf("pruned %+v", p)
		}
		if _, err := w.store.Notification(ctx, done.ID); err == nil {
			t.Fatal("a delivered notification survived")
		}
		if _, err := w.store.Notification(ctx, pending.ID); err != nil {
			t.Fatalf("a pending notification was pruned: %v", err)
		}
	})
}
