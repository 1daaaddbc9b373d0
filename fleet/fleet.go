// Package fleet makes the daemons that share one PostgreSQL store one
// service: each is a node that heartbeats in the store, lists only its own
// panes and carries out what it owns; a call that names what another node
// owns is forwarded to that node, signed with a key the store carries, and
// the list of conversations is every live node's.
package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"time"

	"akk/domain"
	"akk/handlers"
	"akk/persistence"
)

// Heartbeat is how often a node records that it lives; Snapshot how often
// it records the conversations it sees (shown while it is unreachable,
// and how the other nodes learn which node owns a conversation).
const (
	Heartbeat = 2 * time.Second
	Snapshot  = 5 * time.Second
)

// Store is what the fleet needs of the store.
type Store interface {
	// Heartbeat records the node as seen and returns when, by the
	// database's clock.
	Heartbeat(ctx context.Context, n persistence.Node) (time.Time, error)
	Nodes(ctx context.Context) ([]persistence.Node, error)
	// RemoveNode removes the named node if it has not heartbeat since
	// before (by the database's clock), and reports whether it did.
	RemoveNode(ctx context.Context, name string, before time.Time) (bool, error)
	OwnerOf(ctx context.Context, table, id string) (string, bool, error)
}

// Config is one node.
type Config struct {
	Store        Store
	Name         string
	AdvertiseURL string
	// AdvertiseSet: AdvertiseURL was given, not derived from the listen
	// address (a loopback one is then meant: a fleet on one machine).
	AdvertiseSet bool
	Version      string
	// OperatorTokenHash is this node's operator token's hash: the other
	// nodes accept that token too.
	OperatorTokenHash string
	// Key signs and verifies calls between nodes (the store's fleet key).
	Key    []byte
	Client *http.Client
	// Changed, when set, is a cheap fingerprint of what the node's rows
	// depend on (its panes as tmux lists them, the last event): the node
	// lists its rows for its record only when it changed.
	Changed func(ctx context.Context) (string, error)
	// ForwardWait bounds a forwarded call: the caller answers within it
	// (503, with do_not_retry when the call may have reached the owner),
	// and an owner carries out no call that reaches it later than half of
	// it after it was signed (its caller gives up on it meanwhile).
	// ForwardWait when 0.
	ForwardWait time.Duration
	Log         *slog.Logger
	Now         func() time.Time
}

// Node is this daemon as a node of its fleet.
type Node struct {
	Config
	// Local is the daemon's own HTTP handler (set once it is built): the
	// node lists its own conversations through it for its snapshot.
	Local http.Handler

	started time.Time

	mu sync.Mutex
	// offset is the database's clock less this machine's, as the last
	// heartbeat measured it: liveness, and the time a call between nodes
	// is signed at, are on the database's clock, which every node shares.
	offset time.Duration
	nodes  []persistence.Node   // as last read
	nonces map[string]time.Time // the signed calls carried out, until they expire
	readAt time.Time
	owners map[string]string // public id → node, from the lists this node merged
}

var _ handlers.Fleet = (*Node)(nil)

// New returns the node; Run heartbeats it.
func New(c Config) *Node {
	if c.Client == nil {
		c.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ForwardWait == 0 {
		c.ForwardWait = ForwardWait
	}
	return &Node{Config: c, started: c.Now(), owners: map[string]string{}, nonces: map[string]time.Time{}}
}

// Join records the node once, so that it is a node of the fleet before it
// serves (its forwarded calls are verified against the node list).
//
// It refuses an advertise URL another live node advertises (the calls
// meant for one would reach the other), and a loopback one derived from
// the listen address once the fleet has other nodes (they may run on
// other machines, where it names themselves).
func (n *Node) Join(ctx context.Context) error {
	nodes, err := n.Store.Nodes(ctx)
	if err != nil {
		return err
	}
	var others []string
	for _, x := range nodes {
		if x.Name == n.Name {
			continue
		}
		others = append(others, x.Name)
		if n.live(x) && strings.TrimRight(x.AdvertiseURL, "/") == strings.TrimRight(n.AdvertiseURL, "/") {
			return fmt.Errorf("the node %s advertises %s already: give each node the URL the others reach it at (--advertise-url)", x.Name, n.AdvertiseURL)
		}
	}
	if u, err := url.Parse(n.AdvertiseURL); err == nil && !n.AdvertiseSet && len(others) > 0 && domain.IsLoopbackHost(u.Hostname()) {
		return fmt.Errorf("this node joins a fleet with %s, but its advertise URL, derived from --listen, is %s: a loopback address, which on another machine names that machine. Set --advertise-url to the URL the other nodes reach this one at (a loopback one, said explicitly, for a fleet on one machine)",
			strings.Join(others, ", "), n.AdvertiseURL)
	}
	return n.beat(ctx, n.row(nil, nil))
}

// beat records a heartbeat and measures the database's clock against
// this machine's from it (its middle: the round trip's halves are taken
// as equal).
func (n *Node) beat(ctx context.Context, row persistence.Node) error {
	before := n.Now()
	at, err := n.Store.Heartbeat(ctx, row)
	if err != nil {
		return err
	}
	after := n.Now()
	n.mu.Lock()
	n.offset = at.Sub(before.Add(after.Sub(before) / 2))
	n.mu.Unlock()
	return nil
}

// dbNow is the time now by the database's clock, as far as the last
// heartbeat measured it.
func (n *Node) dbNow() time.Time {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.dbNowLocked()
}

func (n *Node) dbNowLocked() time.Time { return n.Now().Add(n.offset) }

func (n *Node) row(endpoints []string, conversations json.RawMessage) persistence.Node {
	return persistence.Node{Name: n.Name, AdvertiseURL: n.AdvertiseURL, Version: n.Version, StartedAt: n.started,
		LastSeen: n.Now(), OperatorTokenHash: n.OperatorTokenHash, Endpoints: endpoints, Conversations: conversations}
}

// Run heartbeats every Heartbeat and records the node's conversations
// when they may have changed (Changed), at most every Snapshot and at
// least every SnapshotMaxAge, until ctx ends. A store out of reach is
// tried again at the next beat (the other nodes see this one unreachable
// meanwhile).
func (n *Node) Run(ctx context.Context) {
	beat := time.NewTicker(Heartbeat)
	defer beat.Stop()
	var lastSnap time.Time
	var lastFP string
	for {
		var eps []string
		var convs json.RawMessage
		fp := ""
		if n.Changed != nil {
			if f, err := n.Changed(ctx); err == nil {
				fp = f
			} else {
				fp = "error " + err.Error() // unknown: look
			}
		}
		took := false
		if n.Local != nil && snapshotDue(n.Now(), lastSnap, fp, lastFP, n.Changed != nil) {
			if rows, err := n.ownRows(ctx); err != nil {
				n.Log.Debug("fleet snapshot", "err", err)
			} else {
				convs, _ = json.Marshal(rows)
				eps = endpointsOf(rows)
				took = true
			}
		}
		if err := n.beat(ctx, n.row(eps, convs)); err != nil && ctx.Err() == nil {
			n.Log.Warn("fleet heartbeat", "err", err)
		} else if took {
			lastSnap, lastFP = n.Now(), fp // recorded: not before
		}
		select {
		case <-ctx.Done():
			return
		case <-beat.C:
		}
	}
}

// SnapshotMaxAge is the longest a node's recorded rows go unrefreshed
// while nothing it watches changed (a screen's state may change unseen).
const SnapshotMaxAge = time.Minute

// snapshotDue reports whether a node records its rows now: never twice
// within Snapshot; then when what they depend on changed (fp differs from
// the last recorded one's), or when they are SnapshotMaxAge old. Without
// a change signal, every Snapshot.
func snapshotDue(now, last time.Time, fp, lastFP string, signal bool) bool {
	age := now.Sub(last)
	if age < Snapshot {
		return false
	}
	return !signal || fp != lastFP || age >= SnapshotMaxAge
}

// ownRows lists this node's own conversations as the operator sees them.
func (n *Node) ownRows(ctx context.Context) ([]map[string]any, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://localhost/v1/conversations", nil)
	if err != nil {
		return nil, err
	}
	n.sign(req, n.Name, domain.Principal{Operator: true}, nil)
	rec := httptest.NewRecorder()
	n.Local.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("own list: %d %s", rec.Code, rec.Body.String())
	}
	var list conversationList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
		return nil, err
	}
	return list.Conversations, nil
}

// Nodes implements handlers.Fleet.
func (n *Node) Nodes(ctx context.Context) ([]handlers.FleetNode, error) {
	nodes, err := n.readNodes(ctx, true)
	if err != nil {
		return nil, err
	}
	out := make([]handlers.FleetNode, len(nodes))
	for i, x := range nodes {
		out[i] = handlers.FleetNode{Name: x.Name, AdvertiseURL: x.AdvertiseURL, Version: x.Version,
			Live: n.live(x), LastSeen: x.LastSeen}
	}
	return out, nil
}

// live reports whether x heartbeat within persistence.NodeTimeout, by
// the database's clock (the heartbeats are recorded on it). For
// NodeTimeout after the database server started again, no node had the
// chance to heartbeat: a node that was live when it went down still is.
func (n *Node) live(x persistence.Node) bool {
	now := n.dbNow()
	if x.Name == n.Name || now.Sub(x.LastSeen) < persistence.NodeTimeout {
		return true
	}
	if x.ServerStarted.IsZero() || now.Sub(x.ServerStarted) >= persistence.NodeTimeout || !x.LastSeen.Before(x.ServerStarted) {
		return false
	}
	// The last heartbeat any node made before the server went down.
	n.mu.Lock()
	nodes := n.nodes
	n.mu.Unlock()
	var down time.Time
	for _, y := range nodes {
		if y.LastSeen.Before(x.ServerStarted) && y.LastSeen.After(down) {
			down = y.LastSeen
		}
	}
	return !down.IsZero() && down.Sub(x.LastSeen) < persistence.NodeTimeout
}

// readNodes returns the node list, read again when older than a second
// (or when fresh is set).
func (n *Node) readNodes(ctx context.Context, fresh bool) ([]persistence.Node, error) {
	n.mu.Lock()
	if !fresh && n.nodes != nil && n.Now().Sub(n.readAt) < time.Second {
		defer n.mu.Unlock()
		return n.nodes, nil
	}
	n.mu.Unlock()
	nodes, err := n.Store.Nodes(ctx)
	if err != nil {
		return nil, err
	}
	n.mu.Lock()
	n.nodes, n.readAt = nodes, n.Now()
	n.mu.Unlock()
	return nodes, nil
}

// node returns the named node as last read.
func (n *Node) node(ctx context.Context, name string) (persistence.Node, bool, error) {
	nodes, err := n.readNodes(ctx, false)
	if err != nil {
		return persistence.Node{}, false, err
	}
	for _, x := range nodes {
		if x.Name == name {
			return x, true, nil
		}
	}
	return persistence.Node{}, false, nil
}

// RemoveNode implements handlers.Fleet: a node that no longer heartbeats
// leaves the fleet (its row, its last known rows, its operator token).
func (n *Node) RemoveNode(ctx context.Context, name string) error {
	if name == n.Name {
		return domain.E(domain.CodeNodeLive, "this is the node "+name+", and it runs; stop it, then remove it through another node")
	}
	nodes, err := n.readNodes(ctx, true)
	if err != nil {
		return err
	}
	for _, x := range nodes {
		if x.Name != name {
			continue
		}
		if n.live(x) {
			return domain.E(domain.CodeNodeLive, "the node "+name+" heartbeats: stop it first")
		}
		removed, err := n.Store.RemoveNode(ctx, name, n.dbNow().Add(-persistence.NodeTimeout))
		if err != nil {
			return err
		}
		if !removed {
			return domain.E(domain.CodeNodeLive, "the node "+name+" heartbeat again meanwhile: stop it first")
		}
		n.mu.Lock()
		n.nodes = nil
		for id, owner := range n.owners {
			if owner == name {
				delete(n.owners, id)
			}
		}
		n.mu.Unlock()
		n.Log.Info("node removed from the fleet", "node", name)
		return nil
	}
	return domain.E(domain.CodeNodeNotFound, "no node "+name+" in this fleet")
}
