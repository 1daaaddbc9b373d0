package domain

import (
	"regexp"
	"time"
)

// GraphemeCutter may be implemented by the Redactor: Cut keeps the longest
// prefix of s of whole grapheme clusters that is at most limit code points
// (cut: something was left out). Without it, a cut keeps whole code points
// and never ends before a combining mark or joiner.
type GraphemeCutter interface {
	Cut(s string, limit int) (string, bool)
}

// ProgressAction is one action of a native turn as the agent's record
// states it: its type (the tool: Bash, exec_command, apply_patch, …) and
// status (in_progress, completed, failed). Never its arguments or output.
type ProgressAction struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

// Progress states.
const (
	ProgressOK        = "ok"
	ProgressNone      = "no_public_progress"
	ProgressReadError = "read_error"
)

// ProgressBudget is the public progress body's budget, in code points,
// shared by the commentary and the action summaries.
const ProgressBudget = 800

// StoredCommentaryLimit bounds the commentary a Turn keeps (redacted) to
// cut its public body from.
const StoredCommentaryLimit = 4000

// maxActionType bounds one action's type in the body.
const maxActionType = 60

// ProgressView is a Turn's public progress: the latest public commentary
// and up to two short action summaries, within ProgressBudget together.
type ProgressView struct {
	State        string
	Commentary   string
	Actions      []ProgressAction
	Truncated    bool
	NativeTurnID string
	ReadAt       time.Time
	// LatestItemAt is the agent's own timestamp of the newest item shown;
	// zero when it gave none (never the read time).
	LatestItemAt time.Time
}

var codeFence = regexp.MustCompile("(?s)```.*?(```|$)")
