package domain

import (
	"context"
	"sync"
	"time"
)

// TurnConfig tunes Turns; zero fields take the defaults.
type TurnConfig struct {
	MaxRequestRunes   int           // longest request, in code points
	DefaultInactivity time.Duration // a Turn with no activity this long is stalled
	DefaultHard       time.Duration // observation ends this long after the send
	AcceptWindow      time.Duration // how long acceptance may take after Enter
	// The fields from PollInterval on tune how a pane is watched: the
	// pane adapter's observer (PaneObservers) reads them all; a terminal
	// port without one is looked at every ScreenInterval and read every
	// PollInterval.
	PollInterval   time.Duration // how often the durable record is read
	ScreenInterval time.Duration // how often the screen is looked at
	// ScreenGap is the least time between two looks at a screen tmux
	// reports changing: while output flows, a monitor
	// looks at most this often, and a prompt drawn reaches it within it.
	ScreenGap time.Duration
	// ScreenConfirm is how soon a monitor looks again at a screen that one
	// look read as a new prompt, to believe it:
	// the first look, taken as a write arrives, may catch a redraw half
	// done, which the agent finishes within the same frame's writes, a few
	// milliseconds.
	ScreenConfirm time.Duration
	// ScreenQuiet is how often a monitor looks at a screen that tmux
	// reports unchanged: a safety net for what the pane's writes do not
	// show (its process ending without a word).
	ScreenQuiet time.Duration
	// RecordSafety is how often the record is read anyway while a write
	// watch (inotify) on it is armed: the watch wakes the monitor at once,
	// so this is only a safety net (a file the watch cannot see).
	RecordSafety time.Duration
	// QuietLook is how often a monitor looks at a screen, and reads its
	// record, while the record says nothing that needs an answer can be
	// drawn (quiet): a safety net for what the record does
	// not foretell (the agent exiting, an offer it shows on its own).
	// Quiet looks fall on the multiples of QuietLook.
	QuietLook time.Duration
}

// WithDefaults is c with the defaults in its zero fields.
func (c TurnConfig) WithDefaults() TurnConfig {
	c.defaults()
	return c
}

// Defaulted is c with every unset field at its default.
func (c TurnConfig) Defaulted() TurnConfig {
	c.defaults()
	return c
}

func (c *TurnConfig) defaults() {
	if c.MaxRequestRunes == 0 {
		c.MaxRequestRunes = 4000
	}
	if c.DefaultInactivity == 0 {
		c.DefaultInactivity = 60 * time.Minute
	}
	if c.DefaultHard == 0 {
		c.DefaultHard = 720 * time.Minute
	}
	if c.AcceptWindow == 0 {
		c.AcceptWindow = 60 * time.Second
	}
	if c.PollInterval == 0 {
		c.PollInterval = 50 * time.Millisecond
	}
	if c.ScreenInterval == 0 {
		c.ScreenInterval = time.Second
	}
	if c.ScreenGap == 0 {
		c.ScreenGap = 200 * time.Millisecond
	}
	if c.ScreenConfirm == 0 {
		c.ScreenConfirm = 50 * time.Millisecond
	}
	if c.ScreenQuiet == 0 {
		c.ScreenQuiet = max(c.ScreenInterval, 5*time.Second)
	}
	if c.QuietLook == 0 {
		c.QuietLook = max(c.ScreenQuiet, 15*time.Second)
	}
	if c.RecordSafety == 0 {
		c.RecordSafety = max(c.PollInterval, 2*c.ScreenInterval)
	}
}

// turns is the Turn machinery of a Service.
type turns struct {
	term   PaneTransport
	redact Redactor
	cfg    TurnConfig

	lockMu sync.Mutex
	locks  map[string]*terminalLock // per terminal, while held or awaited

	// readErr: the monitor's last read of a Turn's record failed.
	readErrMu sync.Mutex
	readErr   map[string]bool

	monMu    sync.Mutex
	monCtx   context.Context
	monitors map[string]*monitorHandle // per turn
	monWG    sync.WaitGroup
}

// redactText hides secrets in screen-derived text (nothing when no
// redactor is wired in).
func (tr *turns) redactText(x string) string {
	if tr == nil || tr.redact == nil {
		return x
	}
	return tr.redact.Redact(x)
}

// setReadErr records whether the last read of a Turn's record failed.
func (tr *turns) setReadErr(id string, failed bool) {
	tr.readErrMu.Lock()
	defer tr.readErrMu.Unlock()
	if failed {
		tr.readErr[id] = true
	} else {
		delete(tr.readErr, id)
	}
}

func (tr *turns) readFailed(id string) bool {
	tr.readErrMu.Lock()
	defer tr.readErrMu.Unlock()
	return tr.readErr[id]
}

// lockTerminal takes the terminal lock. Lock order: terminal lock, then a
// store transaction; never the other way round.
func (tr *turns) lockTerminal(id string) func() {
	tr.lockMu.Lock()
	l, ok := tr.locks[id]
	if !ok {
		l = &terminalLock{}
		tr.locks[id] = l
	}
	l.refs++
	tr.lockMu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		tr.lockMu.Lock()
		if l.refs--; l.refs == 0 {
			delete(tr.locks, id) // the map holds only locks in use
		}
		tr.lockMu.Unlock()
	}
}

// terminalLock is one terminal's lock and how many callers hold or await it.
type terminalLock struct {
	mu   sync.Mutex
	refs int // guarded by turns.lockMu
}

// startMonitorFunc runs run(ctx, id) as the one monitor of a Turn or Watch.
func (tr *turns) startMonitorFunc(turnID string, run func(context.Context, string)) {
	tr.monMu.Lock()
	defer tr.monMu.Unlock()
	if tr.monCtx == nil || tr.monCtx.Err() != nil {
		return
	}
	if h, running := tr.monitors[turnID]; running && h.ctx.Err() == nil {
		return
	}
	ctx, cancel := context.WithCancel(tr.monCtx)
	h := &monitorHandle{ctx: ctx, cancel: cancel, nudge: make(chan struct{}, 1)}
	ctx = context.WithValue(ctx, nudgeKey{}, h.nudge)
	tr.monitors[turnID] = h
	tr.monWG.Add(1)
	go func() {
		defer tr.monWG.Done()
		defer func() {
			tr.monMu.Lock()
			if tr.monitors[turnID] == h {
				delete(tr.monitors, turnID)
			}
			tr.monMu.Unlock()
			cancel()
		}()
		run(ctx, turnID)
	}()
}

// monitorHandle is one running monitor.
type monitorHandle struct {
	ctx    context.Context
	cancel context.CancelFunc
	nudge  chan struct{} // the record changed: reload it and look at the screen now
}

type nudgeKey struct{}

// nudges returns the nudge channel of the monitor running with ctx.
func nudges(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(nudgeKey{}).(chan struct{})
	return ch
}

func (tr *turns) stopMonitor(turnID string) {
	tr.monMu.Lock()
	h := tr.monitors[turnID]
	tr.monMu.Unlock()
	if h != nil {
		h.cancel()
	}
}

// monitoring reports whether this daemon's monitor runs the Turn.
func (tr *turns) monitoring(turnID string) bool {
	tr.monMu.Lock()
	defer tr.monMu.Unlock()
	h, ok := tr.monitors[turnID]
	return ok && h.ctx.Err() == nil
}
