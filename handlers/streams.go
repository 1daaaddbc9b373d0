package handlers

import (
	"context"
	"fmt"
	"sync"

	"akk/domain"
)

// The event streams open now, by who opened them: one principal may hold
// only so many (a host must not hold every connection the daemon has).

const (
	// MaxStreamsPerHost bounds the open event streams of one host.
	MaxStreamsPerHost = 16
	// MaxStreamsOperator bounds the operator's open event streams.
	MaxStreamsOperator = 64
)

// openStream is one open event stream; end is closed to end it.
type openStream struct {
	principal string // principalKey of its principal
	ui        string // the dashboard session it was opened with, if any
	end       chan struct{}
	once      sync.Once
}

func (o *openStream) stop() { o.once.Do(func() { close(o.end) }) }

type openStreams struct {
	mu sync.Mutex
	m  map[*openStream]struct{}
}

// open counts a new stream of ctx's principal, or refuses it at the cap.
func (s *openStreams) open(ctx context.Context) (*openStream, error) {
	p, ok := domain.PrincipalFrom(ctx)
	if !ok {
		return nil, domain.E(domain.CodeUnauthorized, "a bearer token is required")
	}
	ui, _ := ctx.Value(sessionKey{}).(string)
	o := &openStream{principal: principalKey(p), ui: ui, end: make(chan struct{})}
	max := MaxStreamsPerHost
	if p.Operator {
		max = MaxStreamsOperator
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for x := range s.m {
		if x.principal == o.principal {
			n++
		}
	}
	if n >= max {
		return nil, domain.E(domain.CodeStreamLimit,
			fmt.Sprintf("this controller has %d open event streams, the most it may have; close one", max))
	}
	if s.m == nil {
		s.m = map[*openStream]struct{}{}
	}
	s.m[o] = struct{}{}
	return o, nil
}

// end ends every open stream that match picks.
func (s *openStreams) end(match func(*openStream) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for o := range s.m {
		if match(o) {
			o.stop()
			delete(s.m, o)
		}
	}
}

// revokeHost ends what a host's old credential holds open: its event
// streams (by token or dashboard cookie) and its MCP sessions.
func (s *Server) revokeHost(hostID string) {
	key := principalKey(domain.Principal{HostID: hostID})
	s.streams.end(func(o *openStream) bool { return o.principal == key })
	s.mcp.endPrincipal(key)
}

// close forgets a stream that ended.
func (s *openStreams) close(o *openStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, o)
}
