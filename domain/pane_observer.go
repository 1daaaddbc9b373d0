package domain

import (
	"context"
	"time"

	"github.com/coder/quartz"
)

// PaneObserver is how a pane's monitor (a Turn's or a Watch's) looks at
// its pane: when a look is due, which looks to believe, when to read the
// agent's record, and how long to sleep between rounds. The pane adapter
// decides all of that, from what the terminal and the record's write
// watch report; the monitor decides what each look and read mean. One per
// monitor, used by it alone.
type PaneObserver interface {
	// Look looks at the pane when a look is due at now (at once when no
	// screen is believed yet: prev.ID ""; last is the last look). due
	// false: no look this round. Otherwise obs and err are the look's,
	// and believed is false when obs turned to a prompt that the next look
	// must show again before the monitor believes it.
	Look(ctx context.Context, terminalID string, prev Terminal, last, now time.Time) (obs Terminal, due, believed bool, err error)
	// RecordDue reports whether the record is read in this round (looked:
	// the screen was looked at in it), and counts the read.
	RecordDue(now time.Time, looked bool) bool
	// ArmRecord arms the record's write watch from mark, unless it is
	// armed: a write then ends the monitor's sleep at once.
	ArmRecord(mark DurableMark)
	// ConfirmPrompt reports whether fp, a prompt or step fingerprint that
	// differs from the one announced, was read on two looks in a row; until
	// then the next look comes soon.
	ConfirmPrompt(fp string) bool
	// Foretold folds in what the round learned: f.
	Foretold(now time.Time, f Foretelling)
	// Wait sleeps until the next round is due (seen: a screen is believed;
	// last: the last look), the record is written, the screen changes or
	// nudge fires. nudged: the monitor reloads its stored record and looks
	// at once. ok false: ctx ended.
	Wait(ctx context.Context, nudge <-chan struct{}, seen bool, last, now time.Time) (nudged, ok bool)
	// Close releases what the observer holds.
	Close()
}

// Foretelling is what a monitor's round learned that tells when its pane
// may ask something.
type Foretelling struct {
	// Open: a tool call the record shows is open. Changed: the record's
	// latest actions changed since its last read (a tool call started or
	// ended). Waiting: the agent says it waits for the person. Asks: a
	// prompt or question is believed on screen.
	Open, Changed, Waiting, Asks bool
	// Quiet: the record says nothing that needs an answer can be drawn now
	// (TurnProgress.RecordQuiet), and what the monitor follows lets the
	// screen go unwatched meanwhile (a Turn working and accepted, a Watch
	// exact and shown no prompt).
	Quiet bool
}

// PaneObservers may be implemented by a TurnTerminal: a PaneObserver for
// the monitor of terminalID (kind "turn" or "watch"), on clock, tuned by
// cfg. Without it a monitor looks and reads on the clock alone
// (clockObserver).
type PaneObservers interface {
	PaneObserver(terminalID, kind string, clock Clock, cfg TurnConfig) PaneObserver
}

// paneObserver is the observer of a monitor of terminalID.
func (tr *turns) paneObserver(terminalID, kind string, clock Clock) PaneObserver {
	if po, ok := tr.term.(PaneObservers); ok {
		return po.PaneObserver(terminalID, kind, clock, tr.cfg)
	}
	return &clockObserver{term: tr.term, cfg: tr.cfg, tick: clock.NewTicker(tr.cfg.PollInterval, kind, "poll")}
}

// clockObserver looks at a pane every ScreenInterval and reads its record
// every round (PollInterval), believing every look: a terminal port that
// reports no changes.
type clockObserver struct {
	term TurnTerminal
	cfg  TurnConfig
	tick *quartz.Ticker
}

func (o *clockObserver) Look(ctx context.Context, terminalID string, prev Terminal, last, now time.Time) (Terminal, bool, bool, error) {
	if prev.ID != "" && now.Before(last.Add(o.cfg.ScreenInterval)) {
		return Terminal{}, false, false, nil
	}
	obs, err := o.term.Observe(ctx, terminalID)
	return obs, true, true, err
}

func (o *clockObserver) RecordDue(time.Time, bool) bool  { return true }
func (o *clockObserver) ArmRecord(DurableMark)           {}
func (o *clockObserver) ConfirmPrompt(string) bool       { return true }
func (o *clockObserver) Foretold(time.Time, Foretelling) {}
func (o *clockObserver) Close()                          { o.tick.Stop() }

func (o *clockObserver) Wait(ctx context.Context, nudge <-chan struct{}, seen bool, last, now time.Time) (bool, bool) {
	d := o.cfg.PollInterval
	if until := last.Add(o.cfg.ScreenInterval).Sub(now); seen && until < d {
		d = until
	}
	o.tick.Reset(max(d, time.Millisecond))
	select {
	case <-ctx.Done():
		return false, false
	case <-o.tick.C:
		return false, true
	case <-nudge:
		return true, true
	}
}
