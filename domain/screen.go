package domain

import (
	"context"
	"time"
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
