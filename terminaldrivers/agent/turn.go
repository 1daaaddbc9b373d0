package agent

import (
	"time"

	"akk/terminaldrivers/proc"
	"akk/terminaldrivers/screen"
)

// TurnProfile is a Profile that can also carry a Turn: type a request into
// its composer, read the composer back, and follow the agent's durable
// record (Claude transcript, Codex rollout) to the end of the native turn.
type TurnProfile interface {
	Profile
	TurnRules() TurnRules
	// ComposerText returns the rows of the main composer as drawn, without
	// the prompt glyph and the continuation indent, trailing blanks
	// trimmed; none for an empty composer (a placeholder is empty). ok is
	// false when no composer is recognised at the bottom of the screen.
	ComposerText(c screen.Capture) (rows []string, ok bool)
}

// TurnRules are what one agent version needs for a Turn beyond its screen
// grammar: keys, timings and how its durable record reads. Values, so a new
// version is a new value.
type TurnRules struct {
	// PasteWindow is how long to wait after a bracketed paste before the
	// composer is read back and Enter may be pressed.
	PasteWindow time.Duration
	// VerifyWithin bounds how long the composer may take to show the paste
	// (large pastes render late) before Submit gives up without Enter.
	VerifyWithin time.Duration
	// SettleGap is how long an idle screen must read the same before the
	// first key of a Send (0: one read suffices). An agent that still
	// redraws the end of a turn can drop input that lands meanwhile.
	SettleGap time.Duration
	// SubmitKey and InterruptKey are tmux key names.
	SubmitKey    string
	InterruptKey string
	// ClearKey empties a composer holding a draft, for the user-explicit
	// send: pressed once, then the composer must read empty. ClearRows is
	// the most composer rows it empties (0: any).
	ClearKey  string
	ClearRows int
	// Placeholder reports whether rows are the placeholder the agent draws
	// instead of a long paste of text (Claude Code: "[Pasted text #1 +4
	// lines]"; Codex: "[Pasted Content 1200 chars]"), with the counts it
	// shows matching text. Nil when the agent always shows pasted text.
	Placeholder func(rows []string, text string) bool
	// Collapses reports whether the agent shows text as a placeholder
	// rather than as text. Text it shows must fit the composer, which
	// Submit checks before any input. Nil: never collapsed.
	Collapses func(text string) bool
	// Records finds the durable record files that may receive the next
	// turn of process p: their paths now and, when more may be opened
	// later (a fresh Codex thread), the pid of the process that will hold
	// them open.
	Records func(fs proc.FS, table *proc.Table, p Process) (RecordSet, error)
	// Held lists the record files a holder process has open now; nil when
	// Records never names a holder.
	Held func(fs proc.FS, pid int) ([]RecordFile, error)
	// Parse reads one complete line of the durable record; ok is false for
	// lines that say nothing about a turn.
	Parse func(line []byte) (e Entry, ok bool)
	// IdleSince reads the state file of RecordSet.State: since when the
	// agent has been idle in threadID (no turn running, none waiting for
	// an answer); ok is false when it is not idle or the file does not
	// belong to threadID. Nil when the agent keeps no such file. It proves
	// the end of a turn that wrote no end record (Claude Code, interrupted
	// before any answer, puts the prompt back in the composer and records
	// nothing), once IdleGrace has passed with the record quiet.
	IdleSince func(stateFile, threadID string) (since time.Time, ok bool)
	IdleGrace time.Duration
	// AsksForetold: the agent's record, or its state file (Waiting),
	// shows every step that needs an answer (a permission prompt, a
	// question) as it draws it or before, so while they show none open a
	// monitor need not watch the screen closely. Measured on every pinned
	// version (agenttest.TestRecordFirst).
	AsksForetold bool
	// Waiting reads the state file of RecordSet.State: the agent says it
	// waits for the person (a prompt or question is drawn). Nil when the
	// agent keeps no such file.
	Waiting func(stateFile, threadID string) bool
}

// RecordSet is where a process's next turn may be recorded.
type RecordSet struct {
	Files []RecordFile
	// Holder is the pid (with its start time) whose open files may add
	// record files later; 0 when Files is complete.
	Holder      int
	HolderStart uint64
	// State is a small file the agent rewrites with its busy or idle
	// state (Claude Code's sessions/<pid>.json); "" when none.
	State string
}

// RecordFile is one durable record file, which may not exist yet.
type RecordFile struct {
	Path     string
	ThreadID string // the native thread (session) it records
}

// EntryKind is what a line of a durable record says about a turn.
type EntryKind int

const (
	// EntryUserPrompt: a message the person sent (Text, TurnID when the
	// agent names one).
	EntryUserPrompt EntryKind = iota + 1
	// EntryAssistantText: text the assistant wrote (Text, MessageID;
	// EndTurn when it ends the turn).
	EntryAssistantText
	// EntryCompleted: the agent recorded the end of a turn. With HasFinal
	// the final message is Text (Codex task_complete); without, it is the
	// last EndTurn assistant message (Claude Code turn_duration).
	EntryCompleted
	// EntryFailed: an API or runtime error ended the turn (Text: reason).
	EntryFailed
	// EntryInterrupted: the person interrupted the turn.
	EntryInterrupted
	// EntryAction: the assistant started an action (Action: its type, the
	// tool's name; ActionStatus in_progress) or the record states an
	// action's end (Action "", ActionStatus completed or failed), both
	// naming it by ActionID. Never its arguments or output.
	EntryAction
)

// Action statuses.
const (
	ActionInProgress = "in_progress"
	ActionCompleted  = "completed"
	ActionFailed     = "failed"
)

// Entry is one line of a durable record, read into what a Turn needs.
type Entry struct {
	Kind      EntryKind
	Text      string
	TurnID    string // the native turn it belongs to, "" when not named
	MessageID string
	EndTurn   bool
	HasFinal  bool
	Time      time.Time // when the agent wrote it, zero when not stated

	ActionID, Action, ActionStatus string // EntryAction

	// Changes are the file changes an action states: on its end (Claude
	// Code's tool result) they happened; on its start (Codex's patch call)
	// they happen when the action's end says it completed.
	Changes []FileChange `json:",omitempty"`
}

// FileChange is one file change an agent's record states (see
// domain.FileChange): its path as recorded (MovedTo: where an update
// moved it) and the change as the record gives it: hunks with line
// numbers (Claude Code), a diff body from its first "@@" (Codex), or the
// whole content of a file created or deleted.
type FileChange struct {
	Path    string
	MovedTo string `json:",omitempty"`
	Op      string // created, updated, deleted, moved
	Hunks   []Hunk `json:",omitempty"`
	Body    string `json:",omitempty"`
	Content string `json:",omitempty"`
}

// Diff writes the change as a unified diff, its paths as name gives them.
func (c FileChange) Diff(name func(string) string) string {
	switch {
	case c.Op == "created":
		return CreatedDiff(name(c.Path), c.Content)
	case c.Op == "deleted":
		return DeletedDiff(name(c.Path), c.Content)
	}
	to := c.Path
	if c.MovedTo != "" {
		to = c.MovedTo
	}
	if c.Body != "" {
		return DiffOfHunks(name(c.Path), name(to), c.Body)
	}
	return UnifiedDiff(name(c.Path), name(to), c.Hunks)
}
