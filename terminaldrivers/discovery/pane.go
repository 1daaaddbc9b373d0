package discovery

import (
	"context"
	"fmt"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/proc"
	"akk/terminaldrivers/tmux"
)

// Pane discovers the terminal in one pane now, as Discover would list it:
// the pane's server is listed, the process table read, the screen captured
// (the list and the screen through a control client of the server when one
// runs: it answers from the server's state of that moment, as a process does).
// found is false when the server has no such pane or the pane runs no
// agent. An error means the server could not be asked.
func (d *Discovery) Pane(ctx context.Context, loc domain.PaneLocator) (t domain.Terminal, found bool, err error) {
	panes, err := d.listPanes(ctx, loc.Socket)
	if err != nil {
		return domain.Terminal{}, false, err
	}
	return d.paneFrom(ctx, loc, panes, false, func() (*proc.Table, string, error) {
		table, err := d.cfg.Proc.Snapshot()
		if err != nil {
			return nil, "", err
		}
		bootID, err := d.cfg.Proc.BootID()
		if err != nil {
			return nil, "", fmt.Errorf("read boot id: %w", err)
		}
		return table, bootID, nil
	})
}

// paneFrom is the terminal in the pane loc of the server's panes, with the
// process table tables gives. A look (LookPane) reuses the agent it found
// in the pane before (lookAgent) and captures through the session's control
// client when one runs.
func (d *Discovery) paneFrom(ctx context.Context, loc domain.PaneLocator, panes []tmux.Pane, look bool, tables func() (*proc.Table, string, error)) (domain.Terminal, bool, error) {
	var pane *tmux.Pane
	for i := range panes {
		if panes[i].ID == loc.PaneID {
			pane = &panes[i]
		}
	}
	if pane == nil || pane.Dead {
		return domain.Terminal{}, false, nil
	}
	table, bootID, err := tables()
	if err != nil {
		return domain.Terminal{}, false, err
	}
	if !look {
		c, ok := d.findAgent(table, *pane)
		if !ok {
			return domain.Terminal{}, false, nil
		}
		return d.terminal(ctx, table, bootID, c, nil), true, nil
	}
	c, ok := d.lookAgent(table, *pane)
	if !ok {
		return domain.Terminal{}, false, nil
	}
	return d.terminal(ctx, table, bootID, c, d.lookCapture), true, nil
}

// Proc is the /proc the Discovery reads.
func (d *Discovery) Proc() proc.FS { return d.cfg.Proc }

// Tmux is the tmux runner the Discovery uses.
func (d *Discovery) Tmux() tmux.Runner { return d.cfg.Tmux }

// Profile returns the profile that reads one agent version, as Discover
// uses it: its own, or an unknown version's nearest lower neighbour's.
func (d *Discovery) Profile(kind domain.AgentKind, version string) (agent.Profile, bool) {
	p, _, ok := d.registry.Resolve(kind, version)
	return p, ok
}
