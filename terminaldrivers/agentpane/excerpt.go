package agentpane

import (
	"context"

	"akk/domain"
	"akk/terminaldrivers/screen"
)

var _ domain.ScreenExcerpter = (*Adapter)(nil)

// Excerpt implements domain.ScreenExcerpter: the bottom rows of t's pane,
// trailing blank rows dropped, each row redacted. It sends no input.
func (x *Adapter) Excerpt(ctx context.Context, t domain.Terminal, rows int) (string, error) {
	c, err := x.capture(ctx, t)
	if err != nil {
		return "", err
	}
	return screen.Excerpt(c.Slice(0, len(c.Lines)), rows), nil
}

var _ domain.DialogReader = (*Adapter)(nil)

// DialogQuestion implements domain.DialogReader: what the start-up dialog
// in t's pane asks, read from its screen, redacted. It sends no input.
func (x *Adapter) DialogQuestion(ctx context.Context, t domain.Terminal) (string, error) {
	c, err := x.capture(ctx, t)
	if err != nil {
		return "", err
	}
	return screen.DialogQuestion(c.Text()), nil
}
