package discovery

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"akk/domain"
	"akk/terminaldrivers/proc"
	"akk/terminaldrivers/tmux"
)

// LookTTL is how long one process table and one server's pane list serve
// every monitor's look (LookPane): many panes watched at once cost one
// /proc scan and one list-panes per server per interval, not one per pane.
const LookTTL = 900 * time.Millisecond

// shared holds the last process table, boot id and pane lists.
type shared struct {
	mu      sync.Mutex
	table   *proc.Table
	tableAt time.Time
	bootID  string
	panes   map[string]sharedPanes // by server socket
	agents  map[string]candidate   // by socket and pane: the agent a look found there
	listing singleflight.Group     // one pane listing per server at a time
}

type sharedPanes struct {
	list []tmux.Pane
	at   time.Time
}

func (d *Discovery) sharedTable(now time.Time) (*proc.Table, string, error) {
	d.look.mu.Lock()
	defer d.look.mu.Unlock()
	if d.look.table != nil && now.Sub(d.look.tableAt) < LookTTL {
		return d.look.table, d.look.bootID, nil
	}
	table, err := d.cfg.Proc.Snapshot()
	if err != nil {
		return nil, "", err
	}
	if d.look.bootID == "" {
		if d.look.bootID, err = d.cfg.Proc.BootID(); err != nil {
			return nil, "", fmt.Errorf("read boot id: %w", err)
		}
	}
	d.look.table, d.look.tableAt = table, now
	return table, d.look.bootID, nil
}

func (d *Discovery) sharedPanes(ctx context.Context, socket string, now time.Time) ([]tmux.Pane, error) {
	d.look.mu.Lock()
	if p, ok := d.look.panes[socket]; ok && now.Sub(p.at) < LookTTL {
		d.look.mu.Unlock()
		return p.list, nil
	}
	d.look.mu.Unlock()
	// Looks that fall together (quiet ones do) list the server once.
	v, err, _ := d.look.listing.Do(socket, func() (any, error) {
		var list []tmux.Pane
		var err error
		if ctl := d.anyControl(socket); ctl != nil {
			list, err = ctl.ListPanes(ctx)
		}
		if list == nil {
			if list, err = (tmux.Server{Socket: socket, Runner: d.cfg.Tmux}).ListPanes(ctx); err != nil {
				return nil, err
			}
		}
		d.look.mu.Lock()
		if d.look.panes == nil {
			d.look.panes = map[string]sharedPanes{}
		}
		d.look.panes[socket] = sharedPanes{list: list, at: now}
		d.look.mu.Unlock()
		return list, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]tmux.Pane), nil
}

// LookPane is Pane for a monitor's periodic look: the process table and the
// server's pane list may be up to LookTTL old (shared with every other
// look), the screen is captured now (through the session's control client
// when one runs, see ScreenChanged; else with the server's other looks of
// the moment), the native identity and activity are those read when a look
// first found the agent incarnation (see lookAgent). Nothing that sends
// input may use it: input is always preceded by Pane, which reads
// everything afresh.
func (d *Discovery) LookPane(ctx context.Context, loc domain.PaneLocator) (t domain.Terminal, found bool, err error) {
	now := time.Now()
	panes, err := d.sharedPanes(ctx, loc.Socket, now)
	if err != nil {
		return domain.Terminal{}, false, err
	}
	return d.paneFrom(ctx, loc, panes, true, func() (*proc.Table, string, error) { return d.sharedTable(now) })
}

// lookAgent is findAgent for a look: the agent a look found in this pane
// before is taken again (its executable, arguments, folder, environment
// and native identity not read again) while the pane's first process is
// the same and the table holds the agent's same incarnation, still in the
// foreground of the pane's terminal; otherwise it is found in the table.
func (d *Discovery) lookAgent(table *proc.Table, p tmux.Pane) (candidate, bool) {
	key := p.Socket + "\x00" + p.ID
	d.look.mu.Lock()
	c, ok := d.look.agents[key]
	d.look.mu.Unlock()
	if ok && c.pane.PID == p.PID {
		s, found := table.Stat(c.process.Stat.PID)
		if found && s.StartTicks == c.process.Stat.StartTicks && s.TTY == c.process.Stat.TTY && s.Foreground() {
			c.pane, c.process.Stat = p, s
			return c, true
		}
	}
	c, ok = d.findAgent(table, p)
	if ok {
		// The incarnation's package version, and what its own files say
		// of it, read once: a monitor's look uses the screen and the
		// incarnation, not the native identity (its thread, read from
		// the agent's open files and record, is read afresh by Pane).
		if v, err := d.installedVersion(c.driver, c.process); err == nil {
			c.installed, c.haveInstalled = v, true
		}
		native := c.driver.Inspect(d.cfg.Proc, table, c.process, c.installed)
		c.native = &native
	}
	d.look.mu.Lock()
	if d.look.agents == nil {
		d.look.agents = map[string]candidate{}
	}
	if ok {
		d.look.agents[key] = c
	} else {
		delete(d.look.agents, key)
	}
	d.look.mu.Unlock()
	return c, ok
}
