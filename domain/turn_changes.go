package domain

import (
	"strings"
	"time"
)

// What a Turn changed is kept bounded: each change's diff at most
// MaxChangeDiff bytes (cut at a line's end, Truncated set), at most
// MaxTurnChanges changes per Turn (later ones are not kept, and the list
// says so).
const (
	MaxChangeDiff  = 64 << 10
	MaxTurnChanges = 500
)

// TurnChange is one change of a Turn as stored: redacted and bounded.
type TurnChange struct {
	Seq       int // 1, 2, … in the order the agent recorded them
	Path      string
	Op        FileOp
	Diff      string
	Truncated bool
	At        time.Time // when the agent recorded it (zero: not stated)
}

// TurnChanges is what GET /v1/turns/{id}/changes shows.
type TurnChanges struct {
	TurnID  string
	Changes []TurnChange
	// LimitReached: the Turn made more changes than are kept.
	LimitReached bool
}

// boundDiff keeps at most max bytes of a diff, cut after a whole line.
func boundDiff(d string, max int) (string, bool) {
	if len(d) <= max {
		return d, false
	}
	d = d[:max]
	if i := strings.LastIndexByte(d, '\n'); i >= 0 {
		d = d[:i+1]
	} else {
		d = ""
	}
	return d, true
}
