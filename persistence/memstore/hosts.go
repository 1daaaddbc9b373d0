package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"akk/domain"
)

// hostRow is a host with what only the store sees of it.
type hostRow struct {
	domain.Host
	tokenHash  string
	prevSecret string
	prevUntil  time.Time
	removed    bool // a removed host stays for what refers to it
}

// public is the host as a read returns it: headers and subscription never
// nil, as the SQL store decodes them.
func (r hostRow) public() domain.Host {
	h := r.Host
	h.WebhookHeaders = headersOf(h.WebhookHeaders)
	h.WebhookEvents = append([]string{}, h.WebhookEvents...)
	return h
}

func headersOf(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}

func (st *state) host(id string) (domain.Host, error) {
	r, ok := st.hosts[id]
	if !ok || r.removed {
		return domain.Host{}, domain.ErrNotFound
	}
	return r.public(), nil
}

// needHost fails unless id is "" or a host's (removed or not).
func (st *state) needHost(what, id string) error {
	if _, ok := st.hosts[id]; id != "" && !ok {
		return fmt.Errorf("%s: host %s: %w", what, id, errMissing)
	}
	return nil
}

// tokenTaken reports whether a host other than id has tokenHash.
func (st *state) tokenTaken(tokenHash, id string) bool {
	for _, r := range st.hosts {
		if r.tokenHash == tokenHash && r.ID != id {
			return true
		}
	}
	return false
}

// Host returns a live host.
func (s *Store) Host(ctx context.Context, id string) (domain.Host, error) {
	return s.committed().host(id)
}

func (t *tx) Host(ctx context.Context, id string) (domain.Host, error) { return t.st.host(id) }

// HostByTokenHash returns the live host whose token hashes to hash.
func (s *Store) HostByTokenHash(ctx context.Context, hash string) (domain.Host, error) {
	for _, r := range s.committed().hosts {
		if r.tokenHash == hash && !r.removed {
			return r.public(), nil
		}
	}
	return domain.Host{}, domain.ErrNotFound
}

// Hosts returns every live host, oldest first.
func (s *Store) Hosts(ctx context.Context) ([]domain.Host, error) {
	out := []domain.Host{}
	for _, r := range s.committed().hosts {
		if !r.removed {
			out = append(out, r.public())
		}
	}
	slices.SortFunc(out, func(a, b domain.Host) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Setting returns a stored setting, or "" when unset.
func (s *Store) Setting(ctx context.Context, key string) (string, error) {
	return s.committed().settings[key], nil
}

func (t *tx) PutSetting(ctx context.Context, key, value string) error {
	t.st.settings[key] = value
	return nil
}

func (t *tx) PutSettingOnce(ctx context.Context, key, value string) error {
	if _, ok := t.st.settings[key]; !ok {
		t.st.settings[key] = value
	}
	return nil
}

func (t *tx) InsertHost(ctx context.Context, h domain.Host, tokenHash string) error {
	if err := fresh("insert host", t.st.hosts, h.ID); err != nil || t.st.tokenTaken(tokenHash, "") {
		return cmp.Or(err, fmt.Errorf("insert host: token: %w", errExists))
	}
	h.WebhookHeaders, h.WebhookEvents = headersOf(h.WebhookHeaders), append([]string{}, h.WebhookEvents...)
	h.CreatedAt, h.SecretRotatedAt = utc(h.CreatedAt), utc(h.SecretRotatedAt)
	t.st.hosts[h.ID] = hostRow{Host: h, tokenHash: tokenHash}
	return nil
}

// UpdateHostSecret swaps the secret of a host at revision rev, removed or
// not, keeping the previous one for domain.SecretGrace.
func (t *tx) UpdateHostSecret(ctx context.Context, id string, rev int64, secret string, at time.Time) error {
	r, err := atRevision(t.st.hosts, id, rev, hostRevision)
	if err != nil {
		return err
	}
	r.prevSecret, r.prevUntil = r.Secret, utc(at.Add(domain.SecretGrace))
	r.Secret, r.SecretRotatedAt = secret, utc(at)
	r.Revision++
	t.st.hosts[id] = r
	return nil
}

func hostRevision(r hostRow) int64 { return r.Revision }

// liveAt returns the live host id at revision rev.
func (t *tx) liveAt(id string, rev int64) (hostRow, error) {
	r, err := atRevision(t.st.hosts, id, rev, hostRevision)
	if err != nil || r.removed {
		return r, domain.ErrRevisionConflict
	}
	return r, nil
}

func (t *tx) UpdateHostWebhook(ctx context.Context, id string, rev int64, w domain.HostWebhook) error {
	r, err := t.liveAt(id, rev)
	if err != nil {
		return err
	}
	r.WebhookURL, r.WebhookHeaders, r.WebhookEvents = w.URL, headersOf(w.Headers), append([]string{}, w.Events...)
	r.DeliveryNode = w.DeliveryNode
	r.Revision++
	t.st.hosts[id] = r
	return nil
}

func (t *tx) UpdateHostToken(ctx context.Context, id string, rev int64, tokenHash string) error {
	r, err := t.liveAt(id, rev)
	if err != nil {
		return err
	}
	if t.st.tokenTaken(tokenHash, id) {
		return fmt.Errorf("update host token: %w", errExists)
	}
	r.tokenHash = tokenHash
	r.Revision++
	t.st.hosts[id] = r
	t.change.Revoked = append(t.change.Revoked, id)
	return nil
}

// RemoveHost marks a host removed: its token hash is replaced by one no
// token has, and its pending notifications end failed.
func (t *tx) RemoveHost(ctx context.Context, id string, at time.Time) error {
	r, ok := t.st.hosts[id]
	if !ok || r.removed {
		return domain.ErrNotFound
	}
	r.removed, r.tokenHash = true, "removed:"+id
	r.Revision++
	t.st.hosts[id] = r
	for nid, n := range t.st.outbox {
		if n.HostID == id && n.State == domain.NotificationPending {
			n.State, n.LastError, n.lease = domain.NotificationFailed, "the host was removed", time.Time{}
			t.st.outbox[nid] = n
		}
	}
	t.change.Notifications = true
	t.change.Revoked = append(t.change.Revoked, id)
	return nil
}

// ApprovalPolicy returns the host's auto-approval rules (none when it has
// no policy).
func (t *tx) ApprovalPolicy(ctx context.Context, hostID string) ([]domain.ApprovalRule, error) {
	raw, ok := t.st.policies[hostID]
	if !ok {
		return nil, nil
	}
	var rules []domain.ApprovalRule
	if err := json.Unmarshal(raw, &rules); err != nil {
		return nil, fmt.Errorf("approval policy of %s: %w", hostID, err)
	}
	return rules, nil
}

// PutApprovalPolicy replaces the host's rules; none removes the policy.
func (t *tx) PutApprovalPolicy(ctx context.Context, hostID string, rules []domain.ApprovalRule, now time.Time) error {
	if len(rules) == 0 {
		delete(t.st.policies, hostID)
		return nil
	}
	raw, err := json.Marshal(rules)
	if err != nil {
		return err
	}
	t.st.policies[hostID] = raw
	return nil
}
