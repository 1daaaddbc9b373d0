package handlers

import (
	"context"
	"net/http"
	"os"
	"strings"
	"time"

	"akk/domain"
)

// Fleet is the daemons that share this daemon's store (PostgreSQL); nil
// for a daemon on its own.
type Fleet interface {
	// Verify authenticates a call another node of the fleet forwarded (it
	// carries the AKK-Node header) and returns the principal it carries.
	Verify(r *http.Request) (domain.Principal, error)
	// Serve carries r out where it belongs: on the node that owns what it
	// names, or, for the list of conversations, on every node. It returns
	// false when r is this node's alone (then next serves it).
	Serve(w http.ResponseWriter, r *http.Request, p domain.Principal, next http.Handler) bool
	// Nodes lists the fleet's nodes.
	Nodes(ctx context.Context) ([]FleetNode, error)
	// RemoveNode removes a node that no longer heartbeats.
	RemoveNode(ctx context.Context, name string) error
}

// FleetNode is one node as GET /v1/nodes shows it.
type FleetNode struct {
	Name, AdvertiseURL, Version string
	Live                        bool
	LastSeen                    time.Time
}

// forwardedKey marks a request another node forwarded: it is served here.
type forwardedKey struct{}

// routeInFleet hands a request to the fleet, unless another node already
// forwarded it here.
func (s *Server) routeInFleet(next http.Handler) http.Handler {
	if s.Fleet == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := domain.PrincipalFrom(r.Context())
		if !ok && r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, actionsPrefix) && r.Header.Get("AKK-Node") == "" {
			// A one-tap action (its token the only credential) goes to the
			// node that owns its Turn; one another node sent here is not
			// sent on again.
			ok = true
		}
		if !ok || r.Context().Value(forwardedKey{}) != nil || !s.Fleet.Serve(w, r, p, next) {
			next.ServeHTTP(w, r)
		}
	})
}

// ListNodes lists the fleet's nodes; a daemon on its own lists itself.
func (s *Server) ListNodes(ctx context.Context, _ ListNodesRequestObject) (ListNodesResponseObject, error) {
	if err := domain.RequireOperator(ctx); err != nil {
		return nil, err
	}
	var nodes []FleetNode
	if s.Fleet != nil {
		var err error
		if nodes, err = s.Fleet.Nodes(ctx); err != nil {
			return nil, err
		}
	} else {
		name, _ := os.Hostname()
		nodes = []FleetNode{{Name: name, Version: s.Version, Live: true, LastSeen: time.Now()}}
	}
	out := ListNodes200JSONResponse{Nodes: make([]Node, len(nodes))}
	for i, n := range nodes {
		state := NodeStateLive
		if !n.Live {
			state = NodeStateUnreachable
		}
		out.Nodes[i] = Node{Name: n.Name, AdvertiseUrl: n.AdvertiseURL, Version: n.Version, State: state, LastSeen: n.LastSeen.UTC()}
	}
	return out, nil
}

// RemoveNode removes a stopped node from the fleet. A daemon on its own
// is its only node, and live.
func (s *Server) RemoveNode(ctx context.Context, req RemoveNodeRequestObject) (RemoveNodeResponseObject, error) {
	if err := domain.RequireOperator(ctx); err != nil {
		return nil, err
	}
	if s.Fleet == nil {
		if name, _ := os.Hostname(); req.Name == name {
			return nil, domain.E(domain.CodeNodeLive, "this daemon is the node "+name+", and it runs")
		}
		return nil, domain.E(domain.CodeNodeNotFound, "no node "+req.Name+": this daemon runs on its own")
	}
	if err := s.Fleet.RemoveNode(ctx, req.Name); err != nil {
		return nil, err
	}
	return RemoveNode204Response{}, nil
}
