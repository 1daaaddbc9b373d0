package domain

import (
	"context"
	"time"

	"github.com/coder/quartz"
)

// paneWaker is what a pane's monitor (a Turn's or a Watch's) waits on
// between rounds: its slow tick, the agent record's next write (armed
// before each read), tmux's report of the screen's next change, and
// nudges. The record reads it schedules are in reads.
type paneWaker struct {
	tick        *quartz.Ticker
	notifier    RecordNotifier
	written     <-chan struct{}
	stopWritten func()
	scr         screenWatch
	reads       recordReads
}

func newPaneWaker(clock quartz.Clock, tr *turns, kind string) paneWaker {
	w := paneWaker{tick: clock.NewTicker(tr.cfg.PollInterval, kind, "poll"), stopWritten: func() {}}
	w.notifier, _ = tr.term.(RecordNotifier)
	return w
}

// armRecordWatch arms the record's write watch from mark unless it is
// armed (or the terminal port cannot watch records).
func (w *paneWaker) armRecordWatch(mark DurableMark) {
	if w.notifier != nil && w.written == nil {
		if ch, stop, err := w.notifier.Changed(mark); err == nil {
			w.written, w.stopWritten = ch, stop
		}
	}
}

// close releases the watches and the ticker.
func (w *paneWaker) close() {
	w.scr.release()
	w.stopWritten()
	w.tick.Stop()
}

// wait sleeps until the next round is due (seen: a screen is believed;
// lastScreen: the last look), the record is written, the screen changes or
// the monitor is nudged. nudged: the caller reloads its stored record and
// looks at the screen at once. ok false: ctx ended.
func (w *paneWaker) wait(ctx context.Context, cfg TurnConfig, seen bool, lastScreen, now time.Time) (nudged, ok bool) {
	// With the record's write watch armed, a write wakes the monitor at
	// once: the record is read on that, or on the slow safety tick.
	w.tick.Reset(w.scr.wait(cfg, w.written != nil, seen, lastScreen, now))
	select {
	case <-ctx.Done():
		return false, false
	case <-w.tick.C:
	case <-w.written:
		w.stopWritten()
		w.written, w.stopWritten = nil, func() {}
		w.reads.woke = true
	case <-w.scr.ch:
		w.scr.fired()
	case <-nudges(ctx):
		w.reads.woke = true
		return true, true
	}
	return false, true
}
