package domain

import (
	"context"
	"errors"
	"time"
)

// TurnTerminal is what Turns need from the terminal side. The domain never
// sees keys, screens or file formats: it asks for one bounded step and gets
// back what is proven. Implementations take no decision a domain rule should
// take (is the terminal send-ready? may this Turn be cancelled?).
type TurnTerminal interface {
	// Observe looks at one terminal now (fresh capture, fresh process
	// check). It returns ErrTerminalGone when the pane is gone or the agent
	// process is not the incarnation the id names.
	Observe(ctx context.Context, terminalID string) (Terminal, error)

	// Mark records where the agent's durable record (Claude transcript,
	// Codex rollout; for a fresh agent with no record yet, where one will
	// appear) ends now. Progress later reads only what comes after it. The
	// mark is opaque to the domain and is stored as is.
	Mark(ctx context.Context, t Terminal) (DurableMark, error)

	// Submit types text into t's empty composer as one bracketed paste,
	// waits out the profile's paste window, verifies that the composer holds
	// exactly text, and presses Enter once. It never retries. The returned
	// stage says how far it got, also when err is not nil: SubmitNothing means
	// provably no input reached the pane.
	Submit(ctx context.Context, t Terminal, text string) (SubmitStage, error)

	// Interrupt presses the profile's interrupt key (Esc) once.
	Interrupt(ctx context.Context, t Terminal) error

	// Progress reads the durable record after mark and reports what is
	// proven about the native turn whose user message is exactly request.
	// It returns the mark to resume from next time.
	Progress(ctx context.Context, t Terminal, mark DurableMark, request string) (TurnProgress, error)
}

// ComposerClearer may be implemented by a TurnTerminal, for the
// user-explicit send: ClearComposer empties t's composer, which holds a
// draft, with the profile's one native key (Codex: C-u; Claude Code: C-s,
// its stash, which keeps the draft for the person and puts it back after
// the next submit), then proves the composer empty. pressed says whether
// the key was sent (false: provably no input); err whether an empty
// composer is not proven.
type ComposerClearer interface {
	ClearComposer(ctx context.Context, t Terminal) (pressed bool, err error)
}

// ErrTerminalGone: the pane or the agent process incarnation is gone.
var ErrTerminalGone = errors.New("terminal gone")

// DurableMark is an opaque position in an agent's durable record.
type DurableMark string

// SubmitStage is how far a Submit got.
type SubmitStage string

const (
	// SubmitNothing: no byte reached the pane.
	SubmitNothing SubmitStage = "nothing"
	// SubmitCleared: the composer's draft was cleared with the profile's
	// native key (the user-explicit path); the request was not typed.
	SubmitCleared SubmitStage = "cleared"
	// SubmitPasted: the text was pasted; the composer did not (yet) prove to hold exactly it.
	SubmitPasted SubmitStage = "pasted"
	// SubmitVerified: the composer holds exactly the text; Enter not pressed.
	SubmitVerified SubmitStage = "verified"
	// SubmitEntered: Enter was pressed once after verification.
	SubmitEntered SubmitStage = "entered"
)

// TurnProgress is what the durable record proves about one native turn.
type TurnProgress struct {
	Mark DurableMark // resume position

	// Accepted: the record holds our exact request as a user message after
	// the mark. NativeThreadID / NativeTurnID are set when the record names them.
	Accepted       bool
	NativeThreadID string
	NativeTurnID   string

	// LatestText is the latest assistant text seen (unredacted; the domain
	// redacts and bounds it before showing it).
	LatestText string
	// LastActivity is when the record last grew for this turn.
	LastActivity time.Time
	// Actions are the turn's latest actions, oldest first (at most two);
	// LatestItemAt the record's own timestamp of its newest text or
	// action (zero when the record states none).
	Actions      []ProgressAction
	LatestItemAt time.Time

	// Exactly one of these ends the native turn.
	Completed     bool   // a durable completion record (Claude: turn_duration after end_turn; Codex: task_complete)
	FinalMessage  string // the final assistant message when Completed
	Failed        bool   // the agent recorded an API or runtime error ending the turn
	FailureReason string // short, no secrets
	Interrupted   bool   // the agent recorded that the turn was interrupted

	// AsksForetold: the agent's record or state shows every step that
	// needs an answer as it is drawn or before (a tool call open, Waiting),
	// so while they show none the screen need not be watched closely (see
	// screenWatch.quiet). Waiting: the agent's state says it waits for the
	// person.
	AsksForetold, Waiting bool

	// Changes are the files the agent's tools changed, as its record
	// states them, read since mark (each once: the next Progress from the
	// returned mark does not report them again), in record order.
	Changes []FileChange
}

// FileChange is one change an agent's tool made to a file, from its own
// record (Claude Code's Write, Edit and MultiEdit results, Codex's
// applied patches), never from the file system.
type FileChange struct {
	// Path is the file as the agent named it, relative to the agent's
	// working folder when inside it.
	Path string
	Op   FileOp
	// Diff is the change as a unified diff (unredacted, unbounded here:
	// the domain redacts and bounds it before it is stored).
	Diff string
	At   time.Time // when the agent recorded it; zero when not stated
}

// FileOp is what a change did to its file.
type FileOp string

const (
	FileCreated FileOp = "created"
	FileUpdated FileOp = "updated"
	FileDeleted FileOp = "deleted"
	FileMoved   FileOp = "moved"
)

// RecordQuiet: the record says nothing that needs an answer can be drawn
// now (the agent foretells its asks, no tool call stands open and it does
// not say it waits).
func (p TurnProgress) RecordQuiet() bool {
	return p.AsksForetold && !p.Waiting && !pendingAction(p.Actions)
}

// Ended reports whether the native turn is over.
func (p TurnProgress) Ended() bool { return p.Completed || p.Failed || p.Interrupted }

// RecordNotifier may be implemented by a TurnTerminal: Changed wakes the
// caller (by closing the channel, once) as soon as the record behind mark
// is written, so monitors need not wait for their next poll. stop releases
// it. Polling stays the fallback.
type RecordNotifier interface {
	Changed(mark DurableMark) (changed <-chan struct{}, stop func(), err error)
}

// Looker may be implemented by a TurnTerminal: Observe for a monitor's
// periodic look, allowed to share what it reads about processes and panes
// with other looks for a moment (the screen is still read now). Nothing
// that sends input uses it.
type Looker interface {
	Look(ctx context.Context, terminalID string) (Terminal, error)
}

// ScreenNotifier may be implemented by a TurnTerminal: ScreenChanged wakes
// the caller (by closing the channel, once) at the next write to the
// terminal's screen, so monitors look at a screen when it changed rather
// than on a clock. Armed before a look, it misses no write after it. ok is
// false when the change cannot be reported; stop releases it.
type ScreenNotifier interface {
	ScreenChanged(ctx context.Context, terminalID string) (changed <-chan struct{}, stop func(), ok bool)
}

// screenWatch is a monitor's wait for its terminal's next screen change.
type screenWatch struct {
	ch    <-chan struct{}
	stop  func()
	dirty bool // changed since the last look
	// pending and pendingFP are a changed state and prompt fingerprint one
	// look read, to be believed when the next look reads them again.
	pending    ScreenState
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

// ActionPending is the status of an action the record shows started and
// not ended.
const ActionPending = "in_progress"

// pendingAction: one of the record's latest actions has not ended (a tool
// call that may ask for permission or show a question).
func pendingAction(actions []ProgressAction) bool {
	for _, a := range actions {
		if a.Status == ActionPending {
			return true
		}
	}
	return false
}

// asksOnScreen: the screen believed shows a prompt or question.
func asksOnScreen(t Terminal) bool {
	return t.ScreenState == ScreenAwaitingApproval || t.ScreenState == ScreenAwaitingInteraction || t.AsyncQuestion
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
func (w *screenWatch) arm(ctx context.Context, tr *turns, terminalID string) bool {
	if w.ch != nil {
		return true
	}
	n, ok := tr.term.(ScreenNotifier)
	if !ok || terminalID == "" {
		return false
	}
	ch, stop, ok := n.ScreenChanged(ctx, terminalID)
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
func (w *screenWatch) confirm(prev, obs Terminal) bool {
	prompt := obs.ScreenState == ScreenAwaitingApproval || obs.ScreenState == ScreenAwaitingInteraction
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
func (w *screenWatch) every(cfg TurnConfig) time.Duration {
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
func (w *screenWatch) nextLook(cfg TurnConfig, last time.Time) time.Time {
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
func (w *screenWatch) lookNow(ctx context.Context, tr *turns, terminalID string, seen bool, last, now time.Time) bool {
	if w.ch != nil {
		select {
		case <-w.ch:
			w.fired()
		default:
		}
	}
	look := !seen || !now.Before(w.nextLook(tr.cfg, last))
	if look {
		w.drawing = w.dirty && w.expect && !w.confirming
		w.dirty, w.confirming, w.urgent = false, false, false
	}
	if (look || !w.dirty) && !w.quiet {
		w.arm(ctx, tr, terminalID)
	}
	return look
}

// wait is how long the monitor sleeps at most: until its next record read
// (the safety tick while the record's write watch is armed, else the poll)
// or its next look, whichever is first.
func (w *screenWatch) wait(cfg TurnConfig, recordWatched, seen bool, last, now time.Time) time.Duration {
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
func (r *recordReads) due(cfg TurnConfig, armed, looked bool, now time.Time) bool {
	if armed && !r.woke && !looked && now.Sub(r.at) < cfg.RecordSafety {
		return false
	}
	r.at, r.woke = now, false
	return true
}

// look is the monitor's periodic observation of a terminal.
func (tr *turns) look(ctx context.Context, terminalID string) (Terminal, error) {
	if l, ok := tr.term.(Looker); ok {
		return l.Look(ctx, terminalID)
	}
	return tr.term.Observe(ctx, terminalID)
}

// ScreenExcerpter may be implemented by a TurnTerminal: a bounded, redacted
// excerpt of the bottom of t's screen, for a status a person reads.
type ScreenExcerpter interface {
	Excerpt(ctx context.Context, t Terminal, rows int) (string, error)
}

// DialogReader may be implemented by a TurnTerminal: what a start-up
// dialog on t's screen asks (redacted, bounded; "" when it cannot say), for
// a person who answers it in the pane. It sends no input.
type DialogReader interface {
	DialogQuestion(ctx context.Context, t Terminal) (string, error)
}

// ExcerptRows bounds the screen excerpt in a Turn's status.
const ExcerptRows = 12
