package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"akk/domain"
)

func (t *tx) AppendEvent(ctx context.Context, e domain.Event) (domain.Event, error) {
	data, err := json.Marshal(e.Data)
	if err != nil {
		return e, fmt.Errorf("encode event data: %w", err)
	}
	if err := t.st.needHost("insert event", e.HostID); err != nil {
		return e, err
	}
	t.st.lastEvent++
	e.ID, e.Data = t.st.lastEvent, json.RawMessage(data)
	stored := e
	stored.CreatedAt = utc(e.CreatedAt)
	t.st.events = append(t.st.events, stored)
	t.change.LastEventID = e.ID
	return e, nil
}

// event returns the stored event id.
func (st *state) event(id int64) (domain.Event, bool) {
	i, ok := slices.BinarySearchFunc(st.events, id, func(e domain.Event, id int64) int { return cmp.Compare(e.ID, id) })
	if !ok {
		return domain.Event{}, false
	}
	return st.events[i], true
}

// EventsAfter returns up to limit events with id > after that f lets through.
func (s *Store) EventsAfter(ctx context.Context, after int64, f domain.EventFilter, limit int) ([]domain.Event, error) {
	if limit <= 0 {
		limit = 500
	}
	var out []domain.Event
	for _, e := range s.committed().events {
		if len(out) == limit {
			break
		}
		// An event of no host is the operator's alone.
		if e.ID <= after || (!f.All && (e.HostID == "" || e.HostID != f.HostID)) || (f.Subject != "" && e.Subject != f.Subject) {
			continue
		}
		e.Data = slices.Clone(e.Data.(json.RawMessage))
		out = append(out, e)
	}
	return out, nil
}

// LastEventID returns the newest event id, 0 when there is none.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	evs := s.committed().events
	if len(evs) == 0 {
		return 0, nil
	}
	return evs[len(evs)-1].ID, nil
}
