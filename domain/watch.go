package domain

import (
	"context"
	"time"
)

// WatchTerminal is what Watches need from the terminal side, beyond
// TurnTerminal's Observe and Progress.
type WatchTerminal interface {
	// AnchorWatch looks for the native task running in t now. With exact
	// true, the mark sits just before that task's user message, so
	// Progress(t, mark, "") follows exactly that task; otherwise the mark is
	// the end of the record and the Watch is best effort.
	AnchorWatch(ctx context.Context, t Terminal) (mark DurableMark, exact bool, err error)
}

// WatchState is where a Watch stands. The names are part of the API.
type WatchState string

const (
	WatchActive      WatchState = "active"
	WatchCompleted   WatchState = "completed"
	WatchFailed      WatchState = "failed"
	WatchTimedOut    WatchState = "timed_out"
	WatchInvalidated WatchState = "invalidated"
	WatchUnwatched   WatchState = "unwatched"
)

// Watch modes and confidences.
const (
	WatchModeExact    = "exact_task"
	WatchModeActivity = "terminal_activity"
	// WatchModeTurn: the Watch of a Send, following its Turn exactly. It
	// has no monitor and sends no callback of its own: the Turn's are the
	// Send's completion callbacks.
	WatchModeTurn   = "managed_turn"
	ConfidenceExact = "exact"
	ConfidenceBest  = "best_effort"
)

// Watch observes a task a person started. It never sends input and never
// owns the terminal.
type Watch struct {
	ID           string
	HostID       string
	Conversation string
	TerminalID   string      // the endpoint's public id
	Endpoint     EndpointRef // what the Watch observes, stored as it is
	TurnID       string      // a Send's Watch: the Turn it follows
	Mode         string
	State        WatchState
	Mark         DurableMark

	NativeTurnID  string
	FinalMessage  string
	LatestText    string
	Reason        string
	SeenActivity  bool // best effort: the pane was seen working
	IdleSince     time.Time
	ApprovalShown bool // a prompt is on screen now (one webhook per prompt)

	HardTimeout time.Duration
	CreatedAt   time.Time
	UpdatedAt   time.Time
	EndedAt     time.Time
	Revision    int64
}

// Confidence is how sure the Watch's end is.
func (w Watch) Confidence() string {
	if w.Mode == WatchModeExact || w.Mode == WatchModeTurn {
		return ConfidenceExact
	}
	return ConfidenceBest
}

// StableIdle is how long a best-effort Watch needs an idle screen after
// activity to call the task done.
var StableIdle = 3 * time.Second

// BackendThreads names, from the agent's own backend and with no input into
// the pane, the thread a working terminal runs (Codex's managed app-server
// daemon: the one thread of the pane's daemon that runs a turn). ok only
// when that is proven; anything less is not ok, never a guess.
type BackendThreads interface {
	ForegroundThread(ctx context.Context, t Terminal) (threadID string, ok bool, err error)
}

// NewWatchInput is a watch request.
type NewWatchInput struct {
	TerminalID         string `validate:"required,max=100"`
	HardTimeoutMinutes int    `validate:"omitempty,min=1,max=10080"`
	// Identify: on a Codex pane whose records cannot name its task, type
	// the closed status probe once to anchor the Watch exactly.
	Identify bool
}

// ThreadAnchor may be implemented by a WatchTerminal: AnchorWatchThread
// anchors on the open task of one named thread among the record files a
// shared holder keeps (what the status probe names).
type ThreadAnchor interface {
	AnchorWatchThread(ctx context.Context, t Terminal, threadID string) (mark DurableMark, exact bool, err error)
}

// MaxActiveWatchesPerHost bounds one controller's active Watches (each
// costs a monitor).
const MaxActiveWatchesPerHost = 64
