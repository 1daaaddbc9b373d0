package domain

import (
	"context"
	"time"
)

// PaneObserver makes a pane's monitor's observations (a Turn's or a
// Watch's): it looks at the pane and reads the agent's record, each when
// it decides one is due, and says them as Observations; it decides how
// long to sleep between rounds. The monitor decides what they mean
// (decideTurn, decideWatch), as a thread's monitor does with what its
// transport observes. The pane adapter implements it; one per monitor,
// used by it alone.
type PaneObserver interface {
	// Look is the round's look at the pane at now: an Observation of the
	// screen believed (the last one believed when this round's is not).
	// Looked: a look was made this round and, unless it failed (err) or
	// found the pane gone (Lost: EndpointClosed), believed; a look that
	// turned to a prompt the next look must show again is not. It arms the
	// record's write watch first, when the record is followed.
	Look(ctx context.Context, now time.Time) (Observation, error)
	// Read reads the agent's record of the followed task from where the
	// last read ended, when a read is due at now (last: whatever is due,
	// the pane being gone), and never before a screen was believed.
	// request is the followed turn's user message ("" for a Watch's
	// task). rec nil and no error: no read; moved: the record's latest
	// actions changed since the last read. A last read moves nothing on.
	Read(ctx context.Context, now time.Time, request string, last bool) (rec *TurnProgress, moved bool, err error)
	// Screen is the screen last believed (ID "" before the first).
	Screen() Terminal
	// Mark is where the next read of the record starts.
	Mark() DurableMark
	// ReadFrom makes the next read start at mark (the stored record's:
	// what the monitor held was not stored, or another wrote it).
	ReadFrom(mark DurableMark)
	// LookNow makes the next round look at once.
	LookNow()
	// ConfirmPrompt reports whether fp, a prompt or step fingerprint that
	// differs from the one announced, was read on two looks in a row; until
	// then the next look comes soon.
	ConfirmPrompt(fp string) bool
	// Foretold folds in what the round's decision learned: f.
	Foretold(now time.Time, f Foretelling)
	// Wait sleeps until the next round is due, the record is written, the
	// screen changes or nudge fires. nudged: the monitor reloads its
	// stored record and looks at once. ok false: ctx ended.
	Wait(ctx context.Context, nudge <-chan struct{}, now time.Time) (nudged, ok bool)
	// Close releases what the observer holds.
	Close()
}

// Foretelling is what a monitor's decision tells its observer about what
// the pane may ask next.
type Foretelling struct {
	// Asks: the monitor holds a prompt shown (a Watch's approval
	// observed), besides what the screen believed shows.
	Asks bool
	// Quiet: what the monitor follows lets the screen go unwatched while
	// the record says nothing that needs an answer can be drawn now
	// (TurnProgress.RecordQuiet) and nothing is asked (a Turn working and
	// accepted, an exact Watch).
	Quiet bool
}

// PaneFollow is what a pane's monitor follows.
type PaneFollow struct {
	TerminalID string
	Kind       string      // "turn" or "watch"
	Mark       DurableMark // where the first read of the record starts
	Record     bool        // the agent's record is read (not for an activity Watch)
}

// PaneObservers is a pane transport's observers: a PaneObserver for the
// monitor that follows f, on clock, tuned by cfg.
type PaneObservers interface {
	PaneObserver(f PaneFollow, clock Clock, cfg TurnConfig) PaneObserver
}

// ScreenObservation is what a look at the believed screen term observes,
// Looked left to the observer.
func ScreenObservation(term Terminal) Observation {
	return Observation{Asks: screenAsks(term), Idle: term.ScreenState == ScreenIdle, ExactPrompt: term.ExactPrompt,
		AsyncQuestion: term.AsyncQuestion}
}

// ShowsAsk: the screen shows a prompt or question.
func (t Terminal) ShowsAsk() bool { return asksOnScreen(t) }

// ToolOpen: one of the record's latest actions has not ended (a tool call
// that may ask for permission or show a question).
func (p TurnProgress) ToolOpen() bool { return pendingAction(p.Actions) }
