package turnio

import (
	"context"

	"akk/domain"
	"akk/terminaldrivers/screen"
	"akk/terminaldrivers/tmux"
)

var _ domain.ScreenExcerpter = (*TurnTerminal)(nil)

// Excerpt implements domain.ScreenExcerpter: the bottom rows of t's pane,
// trailing blank rows dropped, each row redacted. It sends no input.
func (x *TurnTerminal) Excerpt(ctx context.Context, t domain.Terminal, rows int) (string, error) {
	srv := tmux.Server{Socket: t.Pane.Socket, Runner: x.tmux}
	snap, err := srv.Capture(ctx, t.Pane.PaneID)
	if err != nil {
		return "", err
	}
	c := screen.Parse(snap.ANSI)
	return screen.Excerpt(c.Slice(0, len(c.Lines)), rows), nil
}
