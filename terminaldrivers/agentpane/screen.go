package agentpane

import (
	"context"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/screen"
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
	return domain.PaneScreen{Rows: rows, Columns: t.Width, Lines: t.Height, Styles: x.styles(ctx, t, rows)}, nil
}

// styles reads the pane again with its escapes for the agent's colours: a
// row's runs are kept only when that read shows the row as the plain read
// did (the screen may have changed between the two).
func (x *Adapter) styles(ctx context.Context, t domain.Terminal, rows []string) [][]domain.ScreenSpan {
	snap, err := tmux.Server{Socket: t.Pane.Socket, Runner: x.tmux}.Capture(ctx, t.Pane.PaneID)
	if err != nil {
		return nil
	}
	styled := screen.Styled(snap.ANSI)
	out := make([][]domain.ScreenSpan, len(rows))
	for i, r := range rows {
		if i >= len(styled) || strings.TrimRight(styled[i].Text, " ") != strings.TrimRight(r, " ") {
			continue
		}
		for _, sp := range styled[i].Spans {
			out[i] = append(out[i], domain.ScreenSpan{From: sp.From, To: sp.To, FG: sp.FG, BG: sp.BG, Bold: sp.Bold, Dim: sp.Dim,
				Italic: sp.Italic, Underline: sp.Underline, Inverse: sp.Inverse})
		}
	}
	return out
}
