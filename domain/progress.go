package domain

import (
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
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

// progressOf builds the public progress of t, read at now. The commentary
// was redacted when stored; here code blocks are left out (they may hold
// diffs or command output) and the body is cut to the budget at a
// grapheme boundary.
func (s *Service) progressOf(t Turn, now time.Time, readErr bool) ProgressView {
	v := ProgressView{NativeTurnID: t.NativeTurnID, ReadAt: now, LatestItemAt: t.LatestItemAt, State: ProgressNone}
	budget := ProgressBudget
	for _, a := range t.Actions {
		if len(v.Actions) == 2 {
			break
		}
		typ, cut := s.cutGraphemes(a.Type, maxActionType)
		v.Truncated = v.Truncated || cut
		pa := ProgressAction{Type: typ, Status: a.Status}
		budget -= utf8.RuneCountInString(pa.Type) + utf8.RuneCountInString(pa.Status)
		v.Actions = append(v.Actions, pa)
	}
	text := t.LatestText
	if codeFence.MatchString(text) {
		text = strings.TrimSpace(codeFence.ReplaceAllString(text, "[code omitted]"))
		v.Truncated = true
	}
	var cut bool
	v.Commentary, cut = s.cutGraphemes(text, max(budget, 0))
	v.Truncated = v.Truncated || cut || utf8.RuneCountInString(t.LatestText) >= StoredCommentaryLimit
	if v.Commentary != "" || len(v.Actions) > 0 {
		v.State = ProgressOK
	}
	if readErr {
		v.State = ProgressReadError
	}
	return v
}

// Progress is t's public progress as its stored record shows it now.
func (s *Service) Progress(t Turn) ProgressView {
	failed := s.turns != nil && t.State.Monitored() && s.turns.readFailed(t.ID)
	return s.progressOf(t, s.clock.Now().UTC(), failed)
}
