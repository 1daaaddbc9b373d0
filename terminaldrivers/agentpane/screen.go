package agentpane

import (
	"context"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/tmux"
)

// Screen implements domain.ScreenReader: the pane's visible rows as plain
// text (no escapes) and its size, once the pane is proven to still run the
// terminal's agent. Nothing is sent to the pane.
func (x *Adapter) Screen(ctx context.Context, terminalID string) (domain.PaneScreen, error) {
	t, err := x.Observe(ctx, terminalID)
	if err != nil {
		return domain.PaneScreen{}, err
	}
	text, err := tmux.Server{Socket: t.Pane.Socket, Runner: x.tmux}.CapturePlain(ctx, t.Pane.PaneID)
	if err != nil {
		if serverGone(t.Pane.Socket, err) {
			return domain.PaneScreen{}, domain.ErrTerminalGone
		}
		return domain.PaneScreen{}, err
	}
	rows := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	return domain.PaneScreen{Rows: rows, Columns: t.Width, Lines: t.Height}, nil
}
