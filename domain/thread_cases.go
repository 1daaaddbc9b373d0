package domain

import (
	"context"
	"log/slog"
	"slices"
	"strings"
)

// ThreadCases are the threads of the thread transports wired in: their
// rows, Sends, Turns and Watches, followed through each daemon's own
// events. They hold only their ports.
type ThreadCases struct {
	basics
	turns       *turns    // the endpoints' locks (UsePanes)
	terminals   Terminals // the panes whose daemons list threads (UseTerminals)
	threadKinds map[EndpointKind]*threadTransport
	endpoints   *endpointRegistry
	ledger      *turnLedger
	sends       *sendCore
	monitors    *Monitors
	watches     *WatchCases
	list        *ListCases
	ic          *InteractionCases
	ac          *ApprovalCases
}

// threadTransport is a thread transport wired in.
type threadTransport struct {
	ThreadKind
	calls ThreadTransport
}

// threadKindsSorted are the thread transports wired in, by kind.
func (s *ThreadCases) threadKindsSorted() []*threadTransport {
	out := make([]*threadTransport, 0, len(s.threadKinds))
	for kind := range s.threadKinds {
		if tt, ok := s.threadsOf(kind); ok {
			out = append(out, tt)
		}
	}
	slices.SortFunc(out, func(a, b *threadTransport) int { return strings.Compare(string(a.Endpoint), string(b.Endpoint)) })
	return out
}

// threadsOf is the thread transport of ref's kind, when one is wired in.
func (s *ThreadCases) threadsOf(kind EndpointKind) (*threadTransport, bool) {
	tt, ok := s.threadKinds[kind]
	return tt, ok && tt.calls != nil && s.endpoints.has(kind)
}

// backendThreads lists the backend threads of the daemons of ts.
func (s *ThreadCases) backendThreads(ctx context.Context, ts []Terminal) []BackendThread {
	var out []BackendThread
	for _, tt := range s.threadKindsSorted() {
		out = append(out, s.threadsIn(ctx, tt, ts)...)
	}
	return out
}

// threadsIn lists the threads of one thread transport.
func (s *ThreadCases) threadsIn(ctx context.Context, tt *threadTransport, ts []Terminal) []BackendThread {
	ths, err := tt.calls.Threads(ctx, ts)
	if err != nil {
		slog.Warn("thread transport: list threads", "kind", tt.Endpoint, "err", err)
	}
	for i := range ths {
		ths[i].Kind = tt.Endpoint
	}
	return ths
}
