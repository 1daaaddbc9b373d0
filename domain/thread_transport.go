package domain

import "context"

// BackendThread is one thread a Codex app-server daemon has loaded and
// recorded, as the daemon itself reports it.
type BackendThread struct {
	ThreadID   string
	Home       string // the daemon's CODEX_HOME: how AKK reaches it (never shown)
	Cwd        string
	Title      string
	Model      string
	CLIVersion string
	// Status is idle, active, not_loaded or system_error.
	Status string
	// Warnings are short sentences a person can act on (a daemon of a
	// version whose protocol AKK has not checked).
	Warnings []string
	// Kind is the thread transport that lists it (set by the domain).
	Kind EndpointKind
	// PaneTerminalID is the terminal whose pane is proven to show this
	// thread now (its Codex names the thread in the pane title, and no
	// other pane or loaded thread matches); "" when none is.
	PaneTerminalID string
}

// Backend thread states.
const (
	BackendIdle   = "idle"
	BackendActive = "active"
)

// BackendEventKind is what a followed backend turn did.
type BackendEventKind string

// BackendEvent is one thing a followed backend turn did, in the words a
// thread transport's daemon uses; the adapter hands it on as the
// Observation it makes (Observation).
type BackendEvent struct {
	Kind    BackendEventKind
	Text    string
	Changes []FileChange // BackendChanges
}

// Ends reports whether the event ends the following.
func (e BackendEvent) Ends() bool {
	switch e.Kind {
	case BackendCompleted, BackendInterrupted, BackendFailed, BackendGone:
		return true
	}
	return false
}

// BackendTurnOptions are a turn's overrides, which the daemon keeps for
// the thread's later turns too; "" leaves a value as it is.
type BackendTurnOptions struct{ Model, Effort string }

// ThreadTransport is a transport whose daemon runs an agent's threads:
// it takes a turn as one structured request, never a keystroke, and says
// itself when the turn starts and ends, what it asks, and what it
// changed. Codex's own app-server (reached through the managed daemons of
// the Codex panes AKK sees, never started by AKK) is one; a new one is an
// adapter that implements this and one UseThreadTransport call.
type ThreadTransport interface {
	// Threads lists the loaded, recorded threads of the daemons of terms'
	// agents.
	Threads(ctx context.Context, terms []Terminal) ([]BackendThread, error)
	// Start starts a turn on th with text, messageID as the client's id
	// of the message. SubmitNothing: nothing reached the daemon;
	// SubmitEntered with no error: the daemon started turnID; anything
	// else is unproven.
	Start(ctx context.Context, th BackendThread, text, messageID string, opts BackendTurnOptions) (turnID string, stage SubmitStage, err error)
	// Follow follows turnID of th: what the turn does, each as an
	// Observation (a BackendEvent's, or one made directly; a time it does
	// not state is when the monitor receives it). The channel closes after
	// an observation that Ends, or when ctx ends. A turn that already
	// ended yields its end.
	Follow(ctx context.Context, th BackendThread, turnID string) (<-chan Observation, error)
	// RunningTurn is the id of the turn th runs now, "" when none.
	RunningTurn(ctx context.Context, th BackendThread) (string, error)
	// Models is the daemon's model catalogue (each model with its
	// efforts) and the model and effort th's next turn gets; it sends no
	// input.
	// Model and Effort are "" when the daemon names no model for th.
	Models(ctx context.Context, th BackendThread) (ModelState, error)
	// Catalogue is the daemon's model catalogue alone.
	Catalogue(ctx context.Context, th BackendThread) ([]ModelOption, error)
	// Interrupt asks the daemon to interrupt turnID.
	Interrupt(ctx context.Context, th BackendThread, turnID string) error
	// Prompt is the command approval the followed turnID waits on now.
	Prompt(turnID string) (ApprovalPrompt, bool)
	// Decide answers that approval, if it is still the one fingerprinted:
	// AnswerNothing with an error when nothing was sent, AnswerVerified
	// when the daemon says it is resolved.
	Decide(ctx context.Context, turnID, fingerprint string, d ApprovalDecision) (AnswerStage, error)
	// Question is the question the followed turnID waits on now, as one
	// questionnaire step.
	Question(turnID string) (InteractionStep, bool)
	// AnswerQuestion answers it, if it is still the one fingerprinted,
	// like Decide.
	AnswerQuestion(ctx context.Context, turnID, fingerprint string, answers []StepAnswer) (AnswerStage, error)
}

const (
	// BackendProgress: an agent message completed (Text).
	BackendProgress BackendEventKind = "progress"
	// BackendApproval: the daemon asks to approve a command (Text: the
	// command); BackendResolved: no prompt waits any more.
	BackendApproval BackendEventKind = "approval"
	BackendResolved BackendEventKind = "resolved"
	// BackendQuestion: the agent asks the person questions.
	BackendQuestion BackendEventKind = "question"
	// BackendCompleted (Text: the final message), BackendInterrupted,
	// BackendFailed (Text: why): the turn ended.
	BackendCompleted   BackendEventKind = "completed"
	BackendInterrupted BackendEventKind = "interrupted"
	BackendFailed      BackendEventKind = "failed"
	// BackendGone: the daemon went away before the turn ended (Text: why).
	BackendGone BackendEventKind = "gone"
	// BackendChanges: a patch was applied (Changes: the files it changed).
	BackendChanges BackendEventKind = "changes"
)

// Observation is what the event says of its turn, in terms of no
// transport, for a thread transport's Follow; daemon names the daemon
// (ThreadKind.Name). It states no time: the monitor takes it as received.
func (e BackendEvent) Observation(daemon string) Observation {
	rec := &TurnProgress{}
	o := Observation{Record: rec}
	switch e.Kind {
	case BackendProgress:
		rec.LatestText = e.Text
	case BackendChanges:
		rec.Changes = e.Changes
	case BackendApproval:
		o.Asks = AskingApproval
	case BackendQuestion:
		o.Asks = AskingQuestion
	case BackendResolved:
		o.Asks = AskingNothing
	case BackendCompleted:
		rec.Completed, rec.FinalMessage = true, e.Text
	case BackendInterrupted:
		rec.Interrupted, rec.InterruptEnds = true, true
	case BackendFailed:
		rec.Failed, rec.FailureReason = true, e.Text
	case BackendGone:
		o.Lost, o.Why = EndpointUnreachable, "the thread's "+daemon+" went away before the turn ended: "+e.Text
	}
	return o
}
