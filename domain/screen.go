package domain

import (
	"context"
	"errors"
	"strings"
	"time"
)

// PaneScreen is what a pane shows: its visible rows as plain text, and its
// size.
type PaneScreen struct {
	Rows    []string
	Columns int
	Lines   int
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
}

// UseScreens wires the screen reader in.
func (s *Service) UseScreens(r ScreenReader) { s.screens = r }

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
	for i, r := range rows {
		rows[i] = strings.TrimRight(r, " ")
	}
	return TerminalScreen{TerminalID: terminalID, Text: strings.Join(rows, "\n"), Columns: ps.Columns, Lines: ps.Lines, ReadAt: s.clock.Now().UTC()}, nil
}
