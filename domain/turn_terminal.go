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
	// InterruptEnds: the interruption ended the native turn for good (a
	// daemon's turn, which takes no more words). Without it the agent
	// waits in the same turn for the person's next words, so a Turn AKK
	// did not cancel waits for its host.
	InterruptEnds bool

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
