package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"akk/domain"
)

// StreamEvents opens the SSE stream: replay from the store after the
// client's cursor, then live events, with a heartbeat comment.
func (s *Server) StreamEvents(ctx context.Context, req StreamEventsRequestObject) (StreamEventsResponseObject, error) {
	p, ok := domain.PrincipalFrom(ctx)
	if !ok {
		return nil, domain.E(domain.CodeUnauthorized, "a bearer token is required")
	}
	cursor, err := sseCursor(req.Params.LastEventID, req.Params.Since)
	if err != nil {
		return nil, err
	}
	open, err := s.streams.open(ctx)
	if err != nil {
		return nil, err
	}
	return &sseStream{ctx: ctx, s: s, open: open, cursor: cursor, read: func(after int64, limit int) ([]domain.Event, error) {
		return s.Service.EventsAfter(ctx, p, after, limit)
	}}, nil
}

// sseCursor is the id to replay after: Last-Event-ID wins over since; -1
// when neither is given.
func sseCursor(lastEventID *string, since *int64) (int64, error) {
	if lastEventID != nil && *lastEventID != "" {
		n, err := strconv.ParseInt(*lastEventID, 10, 64)
		if err != nil || n < 0 {
			return 0, domain.Invalid("Last-Event-ID must be a non-negative event id",
				domain.FieldError{Field: "Last-Event-ID", Message: "must be a non-negative integer"})
		}
		return n, nil
	}
	if since != nil {
		return *since, nil
	}
	return -1, nil
}

type sseStream struct {
	ctx    context.Context
	s      *Server
	open   *openStream
	cursor int64 // -1: start from now
	read   func(after int64, limit int) ([]domain.Event, error)
}

const sseBatch = 500

func (st *sseStream) VisitStreamEventsResponse(w http.ResponseWriter) error { return st.serve(w) }

func (st *sseStream) VisitStreamTurnEventsResponse(w http.ResponseWriter) error { return st.serve(w) }

func (st *sseStream) serve(w http.ResponseWriter) error {
	defer st.s.streams.close(st.open)
	rc := http.NewResponseController(w)
	// Subscribe before reading the cursor so nothing stored in between is missed.
	wake, cancel := st.s.Hub.Subscribe()
	defer cancel()
	if st.cursor < 0 {
		last, err := st.s.Service.LastEventID(st.ctx)
		if err != nil {
			return err
		}
		st.cursor = last
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 3000\n\n"); err != nil {
		return nil
	}
	rc.Flush()
	beat := time.NewTicker(st.s.Heartbeat)
	defer beat.Stop()
	for {
		for {
			evs, err := st.read(st.cursor, sseBatch)
			if err != nil {
				return nil // the client sees the stream end and reconnects with Last-Event-ID
			}
			for _, e := range evs {
				body, err := json.Marshal(domain.EnvelopeOf(e))
				if err != nil {
					return nil
				}
				if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.ID, e.Type, body); err != nil {
					return nil
				}
				st.cursor = e.ID
			}
			if len(evs) < sseBatch {
				break
			}
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
		select {
		case <-st.ctx.Done():
			return nil
		case <-st.open.end: // its credential was revoked
			return nil
		case <-wake:
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return nil
			}
		}
	}
}
