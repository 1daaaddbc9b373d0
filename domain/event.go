package domain

import (
	"time"
)

// Event is one durable domain event. Its ID is monotonic: the SSE `id:` and
// the `since=` cursor.
type Event struct {
	ID int64
	// Type is the public type name, shared by SSE and webhooks (turn.completed, host.ping, ...).
	Type string
	// HostID owns the event; empty means only the operator sees it.
	HostID       string
	Conversation string
	// Subject is the record the event is about (turn_id, watch_id, host_id).
	Subject   string
	Data      any // a public projection; stored as JSON, read back as json.RawMessage
	CreatedAt time.Time
}

// EventFilter selects the events one principal may see.
type EventFilter struct {
	All     bool   // the operator
	HostID  string // a host: only its own
	Subject string // only events about this record, when set
}

// FilterFor returns the event filter of p.
func FilterFor(p Principal) EventFilter {
	if p.Operator {
		return EventFilter{All: true}
	}
	return EventFilter{HostID: p.HostID}
}

// Envelope is the JSON body of an SSE event and, without the id, of a webhook.
type Envelope struct {
	ID        int64     `json:"id,omitempty"`
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// EnvelopeOf returns the public envelope of e.
func EnvelopeOf(e Event) Envelope {
	return Envelope{ID: e.ID, Type: e.Type, Timestamp: e.CreatedAt.UTC(), Data: e.Data}
}
