package discovery

import (
	"context"
	"sync"
	"time"

	"akk/domain"
	"akk/terminaldrivers/tmux"
)

// Screens tells monitors when a pane's screen changed, from tmux itself: one
// read-only control client (tmux -C, ignoring size) per session that holds a
// monitored pane forwards every write to the session's panes, so a monitor
// looks at a pane when it was written to, not on a clock, and its looks
// capture through that client instead of a tmux process each. A client is
// started on the first monitor's request and ends when no monitor asked for
// it for controlIdle; one that cannot start is not retried for
// controlRetry (monitors then look on their clock, capturing as before).
type screens struct {
	mu      sync.Mutex
	clients map[controlKey]*controlEntry
}

type controlKey struct{ socket, session string }

type controlEntry struct {
	ctl      *tmux.Control // nil: the last dial failed
	failedAt time.Time
	usedAt   time.Time
	dialing  chan struct{} // closed when a dial in progress ends
}

const (
	controlIdle  = time.Minute
	controlRetry = 10 * time.Second
)

// control returns the live control client of a session, dialing it when
// needed; nil when it cannot be had now.
func (d *Discovery) control(ctx context.Context, socket, session string) *tmux.Control {
	if session == "" || d.cfg.NoControl {
		return nil
	}
	key := controlKey{socket, session}
	now := time.Now()
	d.screens.mu.Lock()
	if d.screens.clients == nil {
		d.screens.clients = map[controlKey]*controlEntry{}
	}
	d.reapControls(now)
	e := d.screens.clients[key]
	for e != nil && e.dialing != nil {
		wait := e.dialing
		d.screens.mu.Unlock()
		<-wait
		d.screens.mu.Lock()
		e = d.screens.clients[key]
	}
	if e != nil && e.ctl != nil {
		select {
		case <-e.ctl.Done():
			delete(d.screens.clients, key)
			e = nil
		default:
			e.usedAt = now
			d.screens.mu.Unlock()
			return e.ctl
		}
	}
	if e != nil && now.Sub(e.failedAt) < controlRetry {
		d.screens.mu.Unlock()
		return nil
	}
	e = &controlEntry{usedAt: now, dialing: make(chan struct{})}
	d.screens.clients[key] = e
	d.screens.mu.Unlock()

	ctl, err := tmux.DialControl(ctx, d.cfg.TmuxPath, socket, "="+session)
	d.screens.mu.Lock()
	if err != nil {
		e.failedAt = time.Now()
	} else {
		e.ctl = ctl
	}
	close(e.dialing)
	e.dialing = nil
	d.screens.mu.Unlock()
	return ctl
}

// reapControls closes clients no monitor asked for lately. Called with the
// lock held.
func (d *Discovery) reapControls(now time.Time) {
	for k, e := range d.screens.clients {
		if e.dialing == nil && e.ctl != nil && now.Sub(e.usedAt) > controlIdle {
			delete(d.screens.clients, k)
			go e.ctl.Close()
		}
	}
}

// CloseScreens ends every control client.
func (d *Discovery) CloseScreens() {
	d.screens.mu.Lock()
	all := d.screens.clients
	d.screens.clients = nil
	d.screens.mu.Unlock()
	for _, e := range all {
		if e.ctl != nil {
			e.ctl.Close()
		}
	}
}

// ScreenChanged returns a channel closed at the next write to the pane at
// loc (or a change of its session's windows, or the end of the client that
// reports them). ok is false when tmux cannot report it (the pane is not
// listed, no control client could start): the caller looks on its clock.
func (d *Discovery) ScreenChanged(ctx context.Context, loc domain.PaneLocator) (changed <-chan struct{}, stop func(), ok bool) {
	panes, err := d.sharedPanes(ctx, loc.Socket, time.Now())
	if err != nil {
		return nil, nil, false
	}
	for _, p := range panes {
		if p.ID == loc.PaneID {
			ctl := d.control(ctx, loc.Socket, p.SessionName)
			if ctl == nil {
				return nil, nil, false
			}
			ch, stop := ctl.Changed(loc.PaneID)
			return ch, stop, true
		}
	}
	return nil, nil, false
}

// anyControl is a running control client of the server, nil when none
// runs: it lists the server's panes without a tmux process.
func (d *Discovery) anyControl(socket string) *tmux.Control {
	d.screens.mu.Lock()
	defer d.screens.mu.Unlock()
	for k, e := range d.screens.clients {
		if k.socket == socket && e.ctl != nil {
			select {
			case <-e.ctl.Done():
			default:
				return e.ctl
			}
		}
	}
	return nil
}

// lookCapture captures a pane for a look: through its session's control
// client when one runs, else with a tmux process.
func (d *Discovery) lookCapture(ctx context.Context, p tmux.Pane) (tmux.Snapshot, error) {
	d.screens.mu.Lock()
	e := d.screens.clients[controlKey{p.Socket, p.SessionName}]
	var ctl *tmux.Control
	if e != nil && e.ctl != nil {
		ctl = e.ctl
	}
	d.screens.mu.Unlock()
	if ctl != nil {
		if snap, err := ctl.Capture(ctx, p.ID); err == nil {
			return snap, nil
		}
	}
	return tmux.Server{Socket: p.Socket, Runner: d.cfg.Tmux}.Capture(ctx, p.ID)
}
