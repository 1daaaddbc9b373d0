package agentpane

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/coder/quartz"

	"akk/domain"
)

// paneSource is what an observer reads of a pane. The Adapter is one.
type paneSource interface {
	// Look is Observe for a monitor's periodic look, allowed to share
	// what it reads about processes and panes with other looks for a
	// moment (the screen is still read now). Nothing that sends input
	// uses it.
	Look(ctx context.Context, terminalID string) (domain.Terminal, error)
	// ScreenChanged wakes the caller (by closing the channel, once) at the
	// next write to the terminal's screen, so monitors look at a screen
	// when it changed rather than on a clock. Armed before a look, it
	// misses no write after it. ok is false when the change cannot be
	// reported; stop releases it.
	ScreenChanged(ctx context.Context, terminalID string) (changed <-chan struct{}, stop func(), ok bool)
	// Changed wakes the caller (by closing the channel, once) as soon as
	// the record behind mark is written, so monitors need not wait for
	// their next poll. stop releases it. Polling stays the fallback.
	Changed(mark domain.DurableMark) (changed <-chan struct{}, stop func(), err error)
	// Progress reads the agent's record after mark (domain.TurnTerminal's).
	Progress(ctx context.Context, t domain.Terminal, mark domain.DurableMark, request string) (domain.TurnProgress, error)
}

// PaneObserver implements domain.PaneObservers: the observer of the
// monitor that follows f.
func (x *Adapter) PaneObserver(f domain.PaneFollow, clock domain.Clock, cfg domain.TurnConfig) domain.PaneObserver {
	return newObserver(x, f, clock, cfg)
}

// observer makes a pane's monitor's observations (a Turn's or a Watch's):
// it looks at the pane when a look is due (scr) and reads the agent's
// record when a read is due (reads), and says what they show; between
// rounds it waits on its slow tick, the record's next write (armed before
// each round's reads), tmux's report of the screen's next change, and
// nudges.
type observer struct {
	src         paneSource
	cfg         domain.TurnConfig
	f           domain.PaneFollow
	tick        *quartz.Ticker
	written     <-chan struct{}
	stopWritten func()
	scr         screenWatch
	reads       recordReads
	// screen is the screen last believed, last the last look; looked:
	// this round looked.
	screen domain.Terminal
	last   time.Time
	looked bool
	// mark is where the next read starts; actions, the record's latest
	// actions as last read; moved, they changed in this round's read.
	mark    domain.DurableMark
	actions []domain.ProgressAction
	moved   bool
	// What the last read said: nothing that needs an answer can be drawn
	// now (TurnProgress.RecordQuiet); a tool call is open; the agent
	// waits for the person.
	recordQuiet, recordOpen, recordWaiting bool
}

func newObserver(src paneSource, f domain.PaneFollow, clock domain.Clock, cfg domain.TurnConfig) *observer {
	return &observer{src: src, cfg: cfg, f: f, mark: f.Mark, tick: clock.NewTicker(cfg.PollInterval, f.Kind, "poll"), stopWritten: func() {}}
}

// Look looks at the pane when a look is due. The record's write watch and
// the screen's change watch are armed before it, so no write after its
// capture is missed.
func (o *observer) Look(ctx context.Context, now time.Time) (domain.Observation, error) {
	o.moved, o.looked = false, false
	if o.f.Record {
		o.armRecord()
	}
	seen := domain.ScreenObservation(o.screen)
	if !o.scr.lookNow(ctx, o.src, o.cfg, o.f.TerminalID, o.screen.ID != "", o.last, now) {
		return seen, nil
	}
	o.last, o.looked, seen.Looked = now, true, true
	obs, err := o.src.Look(ctx, o.f.TerminalID)
	switch {
	case errors.Is(err, domain.ErrTerminalGone):
		seen.Lost = domain.EndpointClosed
		return seen, nil
	case err != nil:
		return seen, err
	case !o.scr.confirm(o.screen, obs):
		seen.Looked = false // believed when the next look shows the same
		return seen, nil
	}
	o.screen = obs
	seen = domain.ScreenObservation(obs)
	seen.Looked = true
	return seen, nil
}

// Read reads the record when a read is due (see recordReads), from where
// the last read ended.
func (o *observer) Read(ctx context.Context, now time.Time, request string, last bool) (*domain.TurnProgress, bool, error) {
	if !o.f.Record || o.screen.ID == "" || !last && !o.reads.due(o.cfg, o.written != nil, o.looked, now) {
		return nil, false, nil
	}
	p, err := o.src.Progress(ctx, o.screen, o.mark, request)
	if err != nil {
		return nil, false, err
	}
	if last {
		return &p, false, nil
	}
	o.moved = !slices.Equal(p.Actions, o.actions)
	o.mark, o.actions = p.Mark, p.Actions
	o.recordQuiet, o.recordOpen, o.recordWaiting = p.RecordQuiet(), p.ToolOpen(), p.Waiting
	return &p, o.moved, nil
}

func (o *observer) Screen() domain.Terminal          { return o.screen }
func (o *observer) Mark() domain.DurableMark         { return o.mark }
func (o *observer) ReadFrom(mark domain.DurableMark) { o.mark = mark }
func (o *observer) LookNow()                         { o.last = time.Time{} }

// armRecord arms the record's write watch from the mark unless it is
// armed (or the record cannot be watched).
func (o *observer) armRecord() {
	if o.written == nil {
		if ch, stop, err := o.src.Changed(o.mark); err == nil {
			o.written, o.stopWritten = ch, stop
		}
	}
}

// ConfirmPrompt: see screenWatch.confirmPrompt.
func (o *observer) ConfirmPrompt(fp string) bool { return o.scr.confirmPrompt(fp) }

// Foretold folds in what the round learned: when a prompt is expected
// (the record's tool calls, the agent waiting, a prompt shown), and
// whether the screen goes unwatched (quiet: the record's write watch
// armed, the record and the monitor letting it, and no prompt shown or
// expected).
func (o *observer) Foretold(now time.Time, f domain.Foretelling) {
	asks := f.Asks || o.screen.ShowsAsk()
	o.scr.foretold(now, o.recordOpen, o.moved, o.recordWaiting, asks)
	quiet := f.Quiet && o.recordQuiet && o.screen.ID != "" && !asks
	o.scr.setQuiet(o.written != nil && quiet && !o.scr.expect)
}

// Close releases the watches and the ticker.
func (o *observer) Close() {
	o.scr.release()
	o.stopWritten()
	o.tick.Stop()
}

// Wait sleeps until the next round is due, the record is written, the
// screen changes or the monitor is nudged. With the record's write watch
// armed, a write wakes the monitor at once: the record is read on that,
// or on the slow safety tick.
func (o *observer) Wait(ctx context.Context, nudge <-chan struct{}, now time.Time) (nudged, ok bool) {
	o.tick.Reset(o.scr.wait(o.cfg, o.written != nil, o.screen.ID != "", o.last, now))
	select {
	case <-ctx.Done():
		return false, false
	case <-o.tick.C:
	case <-o.written:
		o.stopWritten()
		o.written, o.stopWritten = nil, func() {}
		o.reads.woke = true
	case <-o.scr.ch:
		o.scr.fired()
	case <-nudge:
		o.reads.woke = true
		return true, true
	}
	return false, true
}

// screenWatch is a monitor's wait for its terminal's next screen change.
type screenWatch struct {
	ch    <-chan struct{}
	stop  func()
	dirty bool // changed since the last look
	// pending and pendingFP are a changed state and prompt fingerprint one
	// look read, to be believed when the next look reads them again.
	pending    domain.ScreenState
	pendingFP  string
	confirming bool // the next look is to confirm one of them
	// quiet: the agent's record says nothing that needs an answer can be
	// drawn now (no tool call waits): no change reports are asked for (the
	// terminal driver may then stop forwarding the pane's writes) and the
	// screen is looked at, and the record read, every QuietLook. urgent:
	// the record has just left quiet, so the next look is due at once.
	quiet, urgent bool
	// expect: a prompt is expected and none is believed on screen yet (see
	// foretold): a write is looked at at once, not ScreenGap after the
	// last look (the prompt being drawn), and without writes the screen is
	// looked at every ScreenGap (a dialog drawn partly while the pane was
	// not forwarded may end in writes too small to wake the monitor).
	// openSince: when the monitor last saw the record's actions change, or
	// a tool call open. drawing: the last look was taken at a write while
	// a prompt was expected, so the next is due ScreenConfirm after it, not
	// ScreenGap: a prompt may end its drawing with writes too small to be
	// reported.
	expect, drawing bool
	openSince       time.Time
}

// ScreenExpect is how long after the record's actions change (a tool call
// starts or ends) a monitor expects a prompt: Codex draws it 0.3-0.85 s
// after recording the call.
const ScreenExpect = 2 * time.Second

// foretold folds in what the record says of asks: open, a tool call is
// open; changed, the record's latest actions changed since its last read
// (a tool call started or ended: Codex's async question ends its call as
// it asks); waiting, the agent says it waits for the person; asks, a
// prompt is believed on screen. A prompt is expected while the agent
// waits, or in the first ScreenExpect after the actions changed or a tool
// call was first seen open, until one is believed.
func (w *screenWatch) foretold(now time.Time, open, changed, waiting, asks bool) {
	if changed || open && w.openSince.IsZero() {
		w.openSince = now
	}
	w.expect = !asks && (waiting || !w.openSince.IsZero() && now.Sub(w.openSince) < ScreenExpect)
}

// setQuiet sets whether the record says the screen need not be watched
// closely (see quiet). Leaving quiet makes the next look due at once.
func (w *screenWatch) setQuiet(q bool) {
	if w.quiet && !q {
		w.urgent, w.dirty = true, true
	}
	w.quiet = q
	if q {
		w.release()
	}
}

// arm starts waiting for the next change, unless already waiting; false
// when changes cannot be reported (the monitor looks on its clock).
func (w *screenWatch) arm(ctx context.Context, src paneSource, terminalID string) bool {
	if w.ch != nil {
		return true
	}
	if terminalID == "" {
		return false
	}
	ch, stop, ok := src.ScreenChanged(ctx, terminalID)
	if !ok {
		return false
	}
	w.ch, w.stop = ch, stop
	return true
}

// confirm reports whether a monitor believes the look obs after the last
// believed one, prev: a screen that turned to a prompt or questionnaire is
// believed when the next look, ScreenConfirm later, shows the same state
// (one look, taken as a write arrives, may catch a redraw half done).
// Looks on a clock (no change reports) are believed at once.
func (w *screenWatch) confirm(prev, obs domain.Terminal) bool {
	prompt := obs.ScreenState == domain.ScreenAwaitingApproval || obs.ScreenState == domain.ScreenAwaitingInteraction
	if !prompt {
		w.pendingFP = "" // no prompt on screen: none waits to be confirmed
	}
	if !w.notified() || !prompt || obs.ExactPrompt || prev.ID == "" || obs.ScreenState == prev.ScreenState || obs.ScreenState == w.pending {
		w.pending = ""
		return true
	}
	w.pending, w.dirty, w.confirming = obs.ScreenState, true, true
	return false
}

// confirmPrompt reports whether a prompt or step fingerprint that differs
// from the one announced was read on two looks in a row; until then the
// next look is due after ScreenConfirm.
func (w *screenWatch) confirmPrompt(fp string) bool {
	if !w.notified() || fp == w.pendingFP {
		w.pendingFP = ""
		return true
	}
	w.pendingFP, w.dirty, w.confirming = fp, true, true
	return false
}

// fired records a change and disarms.
func (w *screenWatch) fired() {
	w.release()
	w.dirty = true
}

func (w *screenWatch) release() {
	if w.stop != nil {
		w.stop()
	}
	w.ch, w.stop = nil, nil
}

// notified: the monitor learns of changes (armed now, or fired since the
// last look), rather than looking on the clock.
func (w *screenWatch) notified() bool { return w.ch != nil || w.dirty || w.quiet }

// every is how long after the last look the next one is due: when the
// record has just shown a pending tool call, or the screen changed while
// a prompt is expected, now; to confirm a prompt, or after a look at a
// write while one is expected, ScreenConfirm; when the screen changed, or
// a prompt is expected, ScreenGap; when the record says quiet, QuietLook;
// when tmux reports changes and none came, ScreenQuiet; on the clock,
// ScreenInterval.
func (w *screenWatch) every(cfg domain.TurnConfig) time.Duration {
	switch {
	case w.urgent, w.dirty && w.expect && !w.confirming:
		return 0
	case w.confirming, w.drawing && w.expect:
		return cfg.ScreenConfirm
	case w.dirty, w.expect:
		return cfg.ScreenGap
	case w.quiet:
		return cfg.QuietLook
	case w.notified():
		return cfg.ScreenQuiet
	}
	return cfg.ScreenInterval
}

// nextLook is when the look after last is due: every after it, except
// that quiet looks fall on a shared grid, the multiples of QuietLook since
// the Unix epoch, so every quiet monitor looks at the same moment and the
// terminal driver can serve them together (one process table, one pane
// list and one capture of every pane per server, see
// discovery.LookPane).
func (w *screenWatch) nextLook(cfg domain.TurnConfig, last time.Time) time.Time {
	every := w.every(cfg)
	if w.quiet && every == cfg.QuietLook && every > 0 {
		return last.Truncate(every).Add(every)
	}
	return last.Add(every)
}

// lookNow reports whether the monitor looks at the screen now (at once when
// it has not seen it yet). The change watch is armed before a look, so no
// write after the look's capture is missed, and while the screen is known
// changed it is not re-armed (a busy pane does not wake the monitor at
// every write).
func (w *screenWatch) lookNow(ctx context.Context, src paneSource, cfg domain.TurnConfig, terminalID string, seen bool, last, now time.Time) bool {
	if w.ch != nil {
		select {
		case <-w.ch:
			w.fired()
		default:
		}
	}
	look := !seen || !now.Before(w.nextLook(cfg, last))
	if look {
		w.drawing = w.dirty && w.expect && !w.confirming
		w.dirty, w.confirming, w.urgent = false, false, false
	}
	if (look || !w.dirty) && !w.quiet {
		w.arm(ctx, src, terminalID)
	}
	return look
}

// wait is how long the monitor sleeps at most: until its next record read
// (the safety tick while the record's write watch is armed, else the poll)
// or its next look, whichever is first.
func (w *screenWatch) wait(cfg domain.TurnConfig, recordWatched, seen bool, last, now time.Time) time.Duration {
	d := cfg.PollInterval
	switch {
	case recordWatched && w.quiet:
		d = cfg.QuietLook
	case recordWatched:
		d = cfg.RecordSafety
	}
	if seen {
		if until := w.nextLook(cfg, last).Sub(now); until < d {
			d = until
		}
	}
	return max(d, time.Millisecond)
}

// recordReads is when a monitor reads its record: when the record's write
// watch fired or is not armed, at each look, and otherwise every
// RecordSafety; not at every wake.
type recordReads struct {
	at   time.Time
	woke bool // the write watch fired, or the monitor was nudged
}

// due reports whether to read now, and if so counts the read.
func (r *recordReads) due(cfg domain.TurnConfig, armed, looked bool, now time.Time) bool {
	if armed && !r.woke && !looked && now.Sub(r.at) < cfg.RecordSafety {
		return false
	}
	r.at, r.woke = now, false
	return true
}
