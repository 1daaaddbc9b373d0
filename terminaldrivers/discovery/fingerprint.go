package discovery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Fingerprint is a cheap summary of the panes every tmux server lists
// (through the control clients a listing keeps): it changes when a pane
// opens or closes, or its process, command, title or size changes. A
// fleet node records its rows for the others only when it (or the store's
// last event) changed, rather than listing every agent every few seconds.
func (d *Discovery) Fingerprint(ctx context.Context) (string, error) {
	panes, servers, err := d.panes(ctx)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, p := range panes {
		fmt.Fprintf(h, "%s\x1f%s\x1f%d\x1f%s\x1f%s\x1f%dx%d\x1f%v\n", p.Socket, p.ID, p.PID, p.CurrentCommand, p.Title, p.Width, p.Height, p.Dead)
	}
	for _, s := range servers {
		fmt.Fprintf(h, "%s\x1f%s\n", s.Socket, s.Problem)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
