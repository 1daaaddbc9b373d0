package domain

import "context"

// EventCases reads the event log as a principal may see it: what the SSE
// stream and the MCP notifications follow. It needs only the store.
type EventCases struct{ basics }

// EventsAfter returns up to limit events after id that p may see.
func (s *EventCases) EventsAfter(ctx context.Context, p Principal, after int64, limit int) ([]Event, error) {
	return s.store.EventsAfter(ctx, after, FilterFor(p), limit)
}

// LastEventID returns the newest stored event id.
func (s *EventCases) LastEventID(ctx context.Context) (int64, error) { return s.store.LastEventID(ctx) }
