package persistence_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"akk/domain"
	"akk/persistence/storetest"
)

// Hosts are listed oldest first and found by token hash; a token hash is
// one host's; webhook, token and secret change by compare-and-swap, the
// previous secret signing through its grace; a removed host is gone, its
// pending webhooks failed.
func TestHostsContract(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		addHosts(t, s, "host_b", "host_a")
		if hs, err := s.Hosts(ctx); err != nil || len(hs) != 2 || hs[0].ID != "host_b" || hs[0].WebhookHeaders == nil || hs[0].WebhookEvents == nil {
			t.Fatalf("hosts %+v, %v", hs, err)
		}
		if h, err := s.HostByTokenHash(ctx, "hash-host_a"); err != nil || h.ID != "host_a" {
			t.Fatalf("by token %+v, %v", h, err)
		}
		taken := domain.Host{ID: "host_c", CreatedAt: at0, SecretRotatedAt: at0, Revision: 1}
		if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.InsertHost(ctx, taken, "hash-host_a") }); err == nil {
			t.Fatal("a second host with one token hash")
		}
		hook := domain.HostWebhook{URL: "http://127.0.0.1:2/a", Headers: map[string]string{"X-Token": "t"}, Events: []string{"turn.completed"}}
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.UpdateHostWebhook(ctx, "host_a", 1, hook) })
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.UpdateHostToken(ctx, "host_a", 2, "hash-new") })
		for _, stale := range []func(tx domain.Tx) error{
			func(tx domain.Tx) error { return tx.UpdateHostWebhook(ctx, "host_a", 2, hook) },
			func(tx domain.Tx) error { return tx.UpdateHostToken(ctx, "host_a", 2, "hash-other") },
			func(tx domain.Tx) error { return tx.UpdateHostSecret(ctx, "host_a", 1, "whsec_new", at0) },
		} {
			if err := s.InTx(ctx, stale); !errors.Is(err, domain.ErrRevisionConflict) {
				t.Fatalf("a stale change: %v", err)
			}
		}
		if _, err := s.HostByTokenHash(ctx, "hash-host_a"); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("the old token: %v", err)
		}
		h, err := s.HostByTokenHash(ctx, "hash-new")
		if err != nil || h.Revision != 3 || h.WebhookURL != hook.URL || h.WebhookHeaders["X-Token"] != "t" || !slices.Equal(h.WebhookEvents, hook.Events) {
			t.Fatalf("changed host %+v, %v", h, err)
		}
		rotated := at0.Add(time.Hour)
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			return tx.UpdateHostSecret(ctx, "host_a", 3, "whsec_new", rotated)
		})
		write(t, s, func(ctx context.Context, tx domain.Tx) error {
			if h, err := tx.Host(ctx, "host_a"); err != nil || h.Secret != "whsec_new" || !h.SecretRotatedAt.Equal(rotated) || h.Revision != 4 {
				t.Errorf("rotated %+v, %v", h, err)
			}
			return nil
		})
		ping(t, s, "ntf_1", "host_a", "host_a", rotated)
		got, err := s.ClaimDueNotifications(ctx, rotated, rotated.Add(time.Minute), 10, nil)
		if err != nil || len(got) != 1 || got[0].Secret != "whsec_new" || got[0].PreviousSecret != "whsec_host_a" ||
			!got[0].PreviousSecretUntil.Equal(rotated.Add(domain.SecretGrace)) || got[0].Headers["X-Token"] != "t" || got[0].WebhookURL != hook.URL {
			t.Fatalf("a delivery after the rotation %+v, %v", got, err)
		}
		ping(t, s, "ntf_2", "host_a", "host_a", rotated)
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.RemoveHost(ctx, "host_a", rotated) })
		if err := s.InTx(ctx, func(tx domain.Tx) error { return tx.RemoveHost(ctx, "host_a", rotated) }); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("removed twice: %v", err)
		}
		_, errHost := s.Host(ctx, "host_a")
		_, errToken := s.HostByTokenHash(ctx, "hash-new")
		hs, _ := s.Hosts(ctx)
		if !errors.Is(errHost, domain.ErrNotFound) || !errors.Is(errToken, domain.ErrNotFound) || len(hs) != 1 {
			t.Fatalf("a removed host: %v, %v, %d hosts", errHost, errToken, len(hs))
		}
		for _, nid := range []string{"ntf_1", "ntf_2"} {
			if n, err := s.Notification(ctx, nid); err != nil || n.State != domain.NotificationFailed || n.LastError != "the host was removed" {
				t.Fatalf("a removed host's webhook %+v, %v", n, err)
			}
		}
	})
}

// ping stores a host.ping event about subject for host and its webhook,
// due at, and returns the event's id.
func ping(t *testing.T, s storetest.Store, id, host, subject string, at time.Time) int64 {
	t.Helper()
	var eventID int64
	write(t, s, func(ctx context.Context, tx domain.Tx) error {
		e, err := tx.AppendEvent(ctx, domain.Event{Type: "host.ping", HostID: host, Subject: subject, Data: map[string]any{"id": id}, CreatedAt: at})
		if err != nil {
			return err
		}
		eventID = e.ID
		return tx.InsertNotification(ctx, domain.Notification{ID: id, EventID: e.ID, HostID: host, Type: e.Type,
			State: domain.NotificationPending, CreatedAt: at, NextAttemptAt: at}, []byte(`{"id":"`+id+`"}`))
	})
	return eventID
}

// Settings are replaced, or written once; a host's approval policy is
// replaced, and removed by none.
func TestSettingsAndPolicies(t *testing.T) {
	eachStore(t, func(t *testing.T, s storetest.Store) {
		ctx := context.Background()
		addHosts(t, s, "host_a")
		if v, err := s.Setting(ctx, "k"); err != nil || v != "" {
			t.Fatalf("unset %q, %v", v, err)
		}
		for _, v := range []string{"1", "2"} {
			write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.PutSetting(ctx, "k", v) })
		}
		if v, err := s.Setting(ctx, "k"); err != nil || v != "2" {
			t.Fatalf("replaced %q, %v", v, err)
		}
		rules := []domain.ApprovalRule{{Agent: "claude", Argv: []string{"go", "test"}}}
		policy := func() []domain.ApprovalRule {
			var got []domain.ApprovalRule
			write(t, s, func(ctx context.Context, tx domain.Tx) (err error) {
				got, err = tx.ApprovalPolicy(ctx, "host_a")
				return
			})
			return got
		}
		if got := policy(); got != nil {
			t.Fatalf("no policy %+v", got)
		}
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.PutApprovalPolicy(ctx, "host_a", rules, at0) })
		if got := policy(); len(got) != 1 || got[0].Agent != "claude" || !slices.Equal(got[0].Argv, rules[0].Argv) {
			t.Fatalf("policy %+v", got)
		}
		write(t, s, func(ctx context.Context, tx domain.Tx) error { return tx.PutApprovalPolicy(ctx, "host_a", nil, at0) })
		if got := policy(); got != nil {
			t.Fatalf("a removed policy %+v", got)
		}
	})
}
