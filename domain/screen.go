package domain

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// PaneScreen is what a pane shows: its visible rows as plain text, and its
// size.
type PaneScreen struct {
	Rows    []string
	Columns int
	Lines   int
	// Styles are each row's styled runs, as the agent drew them (nil for a
	// row whose styles were not read).
	Styles [][]ScreenSpan
}

// ScreenSpan is a run of a row's runes [From, To) in one style: colours
// as "#rrggbb" ("" for the terminal's default) and attributes.
type ScreenSpan struct {
	From, To                              int
	FG, BG                                string
	Bold, Dim, Italic, Underline, Inverse bool
}

// ScreenReader reads a terminal's pane as it is now, sending it nothing.
// ErrTerminalGone when no live pane runs the terminal.
type ScreenReader interface {
	Screen(ctx context.Context, terminalID string) (PaneScreen, error)
}

// RowRedactor redacts a screen's rows together: a secret wrapped across
// two rows, or a private key block over many, goes too. A Redactor that is
// one is used so for screens.
type RowRedactor interface {
	RedactRows(rows []string) []string
}

// TerminalScreen is a terminal's screen as the agent shows it, redacted.
type TerminalScreen struct {
	TerminalID string
	Text       string
	Columns    int
	Lines      int
	ReadAt     time.Time
	// Styles are the agent's colours per row of Text, only for rows
	// redaction left as they were (a row it changed is plain: no colour
	// run could outline what it hid).
	Styles [][]ScreenSpan
}

// Screen reads a terminal's screen once, redacted. A host may not read a
// pane a Turn of another host holds: its screen is that Turn's.
func (s *Service) Screen(ctx context.Context, terminalID string) (TerminalScreen, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return TerminalScreen{}, err
	}
	if s.screens == nil || s.turns == nil {
		return TerminalScreen{}, E(CodeUnavailable, "screens are not configured")
	}
	if held, err := s.holdingTurn(ctx, terminalID); err == nil {
		if !p.CanSeeHost(held.HostID) {
			return TerminalScreen{}, E(CodeConflictActiveTurn, "a Turn of another controller holds this terminal; its screen is that controller's")
		}
	} else if !errors.Is(err, ErrNotFound) {
		return TerminalScreen{}, err
	}
	ps, err := s.screens.Screen(ctx, terminalID)
	if errors.Is(err, ErrTerminalGone) {
		return TerminalScreen{}, E(CodeTerminalNotFound, "no live pane runs terminal "+terminalID)
	}
	if err != nil {
		return TerminalScreen{}, err
	}
	rows := ps.Rows
	if rr, ok := s.turns.redact.(RowRedactor); ok {
		rows = rr.RedactRows(rows)
	} else {
		rows = append([]string(nil), rows...)
		for i, r := range rows {
			rows[i] = s.turns.redact.Redact(r)
		}
	}
	styles := make([][]ScreenSpan, len(rows))
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
		if i < len(ps.Styles) && rows[i] == strings.TrimRight(ps.Rows[i], " ") {
			styles[i] = clipSpans(ps.Styles[i], utf8.RuneCountInString(rows[i]))
		}
	}
	return TerminalScreen{TerminalID: terminalID, Text: strings.Join(rows, "\n"), Columns: ps.Columns, Lines: ps.Lines,
		ReadAt: s.clock.Now().UTC(), Styles: styles}, nil
}

// clipSpans keeps the runs within a row of n runes.
func clipSpans(spans []ScreenSpan, n int) []ScreenSpan {
	var out []ScreenSpan
	for _, sp := range spans {
		if sp.From >= n {
			break
		}
		sp.To = min(sp.To, n)
		out = append(out, sp)
	}
	return out
}
