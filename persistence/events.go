package persistence

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"akk/domain"
)

func (t *tx) AppendEvent(ctx context.Context, e domain.Event) (domain.Event, error) {
	data, err := json.Marshal(e.Data)
	if err != nil {
		return e, fmt.Errorf("encode event data: %w", err)
	}
	var host any
	if e.HostID != "" {
		host = e.HostID
	}
	err = t.tx.QueryRowContext(ctx, `INSERT INTO events(type, host_id, conversation, subject, data, created_at)
		VALUES (?, ?, ?, ?, ?, ?) RETURNING event_id`, e.Type, host, e.Conversation, e.Subject, string(data), ts(e.CreatedAt)).Scan(&e.ID)
	if err != nil {
		return e, fmt.Errorf("insert event: %w", err)
	}
	e.Data = json.RawMessage(data)
	t.change.LastEventID = e.ID
	return e, nil
}

// EventsAfter returns up to limit events with id > after that f lets through.
func (s *Store) EventsAfter(ctx context.Context, after int64, f domain.EventFilter, limit int) ([]domain.Event, error) {
	if limit <= 0 {
		limit = 500
	}
	q := `SELECT event_id, type, COALESCE(host_id, ''), conversation, subject, data, created_at FROM events WHERE event_id > ?`
	args := []any{after}
	if !f.All {
		q += ` AND host_id = ?`
		args = append(args, f.HostID)
	}
	if f.Subject != "" {
		q += ` AND subject = ?`
		args = append(args, f.Subject)
	}
	q += ` ORDER BY event_id LIMIT ?`
	args = append(args, limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer rows.Close()
	var out []domain.Event
	for rows.Next() {
		var e domain.Event
		var data string
		var created sql.NullString
		if err := rows.Scan(&e.ID, &e.Type, &e.HostID, &e.Conversation, &e.Subject, &data, &created); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		e.Data = json.RawMessage(data)
		e.CreatedAt = parseTS(created)
		out = append(out, e)
	}
	return out, rows.Err()
}

// LastEventID returns the newest event id, 0 when there is none.
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT max(event_id) FROM events`).Scan(&id)
	return id.Int64, err
}
