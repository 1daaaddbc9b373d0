package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"time"

	"akk/domain"
)

// GetTerminalScreen reads a pane's screen once, redacted.
func (s *Server) GetTerminalScreen(ctx context.Context, req GetTerminalScreenRequestObject) (GetTerminalScreenResponseObject, error) {
	r, err := s.Service.Screen(ctx, req.TerminalId)
	if err != nil {
		return nil, err
	}
	return GetTerminalScreen200JSONResponse(screenOut(r)), nil
}

// screenOut is a screen as the contract shows it.
func screenOut(r domain.TerminalScreen) TerminalScreen {
	out := TerminalScreen{TerminalId: r.TerminalID, Text: r.Text, Columns: r.Columns, Lines: r.Lines, ReadAt: r.ReadAt}
	if len(r.Styles) == 0 {
		return out
	}
	flag := func(b bool) *bool {
		if !b {
			return nil
		}
		return &b
	}
	styles := make([][]ScreenSpan, len(r.Styles))
	for i, row := range r.Styles {
		styles[i] = make([]ScreenSpan, 0, len(row))
		for _, sp := range row {
			styles[i] = append(styles[i], ScreenSpan{From: sp.From, To: sp.To, Fg: optString(sp.FG), Bg: optString(sp.BG), Bold: flag(sp.Bold),
				Dim: flag(sp.Dim), Italic: flag(sp.Italic), Underline: flag(sp.Underline), Inverse: flag(sp.Inverse)})
		}
	}
	out.Styles = &styles
	return out
}

// ScreenEvery is how often a followed screen is looked at: four times a
// second at most.
var ScreenEvery = 250 * time.Millisecond

// StreamTerminalScreen follows a pane's screen while the stream is open:
// a terminal.screen event at once, then one at each change. The first read
// is made before the stream opens, so its refusals are the route's.
func (s *Server) StreamTerminalScreen(ctx context.Context, req StreamTerminalScreenRequestObject) (StreamTerminalScreenResponseObject, error) {
	first, err := s.Service.Screen(ctx, req.TerminalId)
	if err != nil {
		return nil, err
	}
	open, err := s.streams.open(ctx)
	if err != nil {
		return nil, err
	}
	return &screenStream{ctx: ctx, s: s, open: open, id: req.TerminalId, first: first}, nil
}

type screenStream struct {
	ctx   context.Context
	s     *Server
	open  *openStream
	id    string
	first domain.TerminalScreen
}

func (st *screenStream) VisitStreamTerminalScreenResponse(w http.ResponseWriter) error {
	defer st.s.streams.close(st.open)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(r domain.TerminalScreen) bool {
		body, err := json.Marshal(map[string]any{"type": "terminal.screen", "timestamp": r.ReadAt,
			"data": screenOut(r)})
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "event: terminal.screen\ndata: %s\n\n", body); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if _, err := fmt.Fprint(w, "retry: 3000\n\n"); err != nil || !send(st.first) {
		return nil
	}
	last := st.first
	look := time.NewTicker(ScreenEvery)
	defer look.Stop()
	beat := time.NewTicker(st.s.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-st.ctx.Done():
			return nil
		case <-st.open.end:
			return nil
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return nil
			}
		case <-look.C:
			r, err := st.s.Service.Screen(st.ctx, st.id)
			if err != nil {
				return nil // the pane went, or another host's Turn took it
			}
			if r.Text == last.Text && r.Columns == last.Columns && r.Lines == last.Lines && reflect.DeepEqual(r.Styles, last.Styles) {
				continue
			}
			last = r
			if !send(r) {
				return nil
			}
		}
	}
}
