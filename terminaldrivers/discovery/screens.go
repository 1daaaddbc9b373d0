package discovery

import (
	"context"
	"slices"
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
// started on the first monitor's request, or by a listing of its server
// (listPanes: lists and their captures then go through it too), and ends
// when nothing has used it and no monitor has waited on it for controlIdle: an attached client costs the tmux server
// work at every write to any of its panes, even paused ones, so monitors
// whose records say nothing can be asked (quiet, see agentpane's observer)
// leave it. One that cannot start is not retried for controlRetry
// (monitors then look on their clock, capturing as before). Looks without
// a client are captured together (captureQueue).
type screens struct {
	mu      sync.Mutex
	clients map[controlKey]*controlEntry
	queues  map[string]*captureQueue // by server socket
}

type controlKey struct{ socket, session string }

type controlEntry struct {
	ctl      *tmux.Control // nil: the last dial failed
	failedAt time.Time
	usedAt   time.Time
	dialing  chan struct{} // closed when a dial in progress ends
	reap     *time.Timer   // ends the client once idle (reapControl)
}

const (
	controlIdle  = 15 * time.Second
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
			e.reap.Stop()
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
		e.reap = time.AfterFunc(controlIdle, func() { d.reapControl(key, e) })
	}
	close(e.dialing)
	e.dialing = nil
	d.screens.mu.Unlock()
	return ctl
}

// reapControl ends a session's client once no monitor waits on it and
// none asked for it for controlIdle; otherwise it checks again later.
func (d *Discovery) reapControl(key controlKey, e *controlEntry) {
	d.screens.mu.Lock()
	if d.screens.clients[key] != e {
		d.screens.mu.Unlock()
		return
	}
	if idle := time.Since(e.usedAt); idle < controlIdle || e.ctl.Waited() {
		if idle >= controlIdle {
			idle = 0
		}
		e.reap.Reset(controlIdle - idle)
		d.screens.mu.Unlock()
		return
	}
	delete(d.screens.clients, key)
	d.screens.mu.Unlock()
	e.ctl.Close()
}

// CloseScreens ends every control client.
func (d *Discovery) CloseScreens() {
	d.screens.mu.Lock()
	all := d.screens.clients
	d.screens.clients = nil
	d.screens.mu.Unlock()
	for _, e := range all {
		if e.ctl != nil {
			e.reap.Stop()
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
// runs: it lists the server's panes without a tmux process. Using it
// keeps it from being reaped for controlIdle.
func (d *Discovery) anyControl(socket string) *tmux.Control {
	d.screens.mu.Lock()
	defer d.screens.mu.Unlock()
	for k, e := range d.screens.clients {
		if k.socket == socket && e.ctl != nil {
			select {
			case <-e.ctl.Done():
			default:
				e.usedAt = time.Now()
				return e.ctl
			}
		}
	}
	return nil
}

// CapturePane takes a pane's snapshot through a control client of its
// server when one runs, else with a tmux process. Sends and answers read
// the screen every few tens of milliseconds while they wait for it to
// settle; through the client a read costs no process (about 9 ms of CPU
// each, and the kernel's work of starting it).
func (d *Discovery) CapturePane(ctx context.Context, socket, paneID string) (tmux.Snapshot, error) {
	if ctl := d.anyControl(socket); ctl != nil {
		if snap, err := ctl.Capture(ctx, paneID); err == nil {
			return snap, nil
		}
	}
	return tmux.Server{Socket: socket, Runner: d.cfg.Tmux}.Capture(ctx, paneID)
}

// lookCapture captures a pane for a look: through its session's control
// client when one runs, else with the server's other looks of the moment
// (captureQueue).
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
	return d.queuedCapture(ctx, p)
}

// captureQueue captures a server's panes for looks without a control
// client with one tmux process per batch (tmux.CaptureAll): a look finding
// none running is captured at once; looks coming while one runs wait for
// it and are captured together next. Quiet looks, which fall together,
// then cost a few tmux processes per server, not one each.
type captureQueue struct {
	running bool
	next    *captureBatch // gathering while a batch runs
}

type captureBatch struct {
	ids  []string
	got  map[string]tmux.Snapshot // set before done is closed
	done chan struct{}
}

// captureBatchTimeout bounds one batch's tmux process.
const captureBatchTimeout = 10 * time.Second

func (d *Discovery) queuedCapture(ctx context.Context, p tmux.Pane) (tmux.Snapshot, error) {
	d.screens.mu.Lock()
	if d.screens.queues == nil {
		d.screens.queues = map[string]*captureQueue{}
	}
	q := d.screens.queues[p.Socket]
	if q == nil {
		q = &captureQueue{}
		d.screens.queues[p.Socket] = q
	}
	var b *captureBatch
	if !q.running {
		q.running = true
		b = &captureBatch{ids: []string{p.ID}, done: make(chan struct{})}
		go d.drainCaptures(p.Socket, q, b)
	} else {
		if q.next == nil {
			q.next = &captureBatch{done: make(chan struct{})}
		}
		b = q.next
		if !slices.Contains(b.ids, p.ID) {
			b.ids = append(b.ids, p.ID)
		}
	}
	d.screens.mu.Unlock()
	select {
	case <-b.done:
	case <-ctx.Done():
		return tmux.Snapshot{}, ctx.Err()
	}
	if snap, ok := b.got[p.ID]; ok {
		return snap, nil
	}
	// Left out of the answer (the pane closed meanwhile, the process
	// failed): captured alone, for its own error.
	return tmux.Server{Socket: p.Socket, Runner: d.cfg.Tmux}.Capture(ctx, p.ID)
}

// drainCaptures runs b, then every batch gathered meanwhile, until none
// waits.
func (d *Discovery) drainCaptures(socket string, q *captureQueue, b *captureBatch) {
	for b != nil {
		ctx, cancel := context.WithTimeout(context.Background(), captureBatchTimeout)
		b.got = tmux.Server{Socket: socket, Runner: d.cfg.Tmux}.CaptureAll(ctx, b.ids)
		cancel()
		close(b.done)
		d.screens.mu.Lock()
		b, q.next = q.next, nil
		if b == nil {
			q.running = false
			delete(d.screens.queues, socket) // a server gone leaves nothing
		}
		d.screens.mu.Unlock()
	}
}
