package domain

import (
	"context"
	"strings"
	"time"
)

// NativeThread is one resumable conversation of an agent in a project, as
// the agent's own records show it (Claude Code transcripts, Codex
// rollouts). Text is redacted and bounded before it leaves the domain.
type NativeThread struct {
	NativeThreadID string    `json:"native_thread_id"`
	Title          string    `json:"title"`
	UpdatedAt      time.Time `json:"updated_at"`
	// Current: the pane shows this thread now (its identity is resolved to it).
	Current bool `json:"current"`
	// Number and ShortID are for display and speech only, valid for the
	// snapshot that listed them.
	Number  int    `json:"number"`
	ShortID string `json:"short_id"`
}

// ThreadList is one snapshot of a terminal's native threads, newest first.
type ThreadList struct {
	TerminalID string         `json:"terminal_id"`
	Agent      Agent          `json:"agent"`
	Project    string         `json:"project"`
	SnapshotID string         `json:"snapshot_id"`
	ExpiresAt  time.Time      `json:"expires_at"`
	Threads    []NativeThread `json:"threads"`
}

// ThreadSnapshotTTL is how long a listing's display numbers and short ids
// mean anything.
const ThreadSnapshotTTL = 5 * time.Minute

// MaxThreads bounds one listing.
const MaxThreads = 100

// ThreadTitleLimit bounds a thread's title (code points).
const ThreadTitleLimit = 120

// ThreadReader reads the native threads of the agent a terminal runs,
// from the agent's records only (no input, no screen).
type ThreadReader interface {
	Threads(ctx context.Context, t Terminal) ([]NativeThread, error)
}

// shortIDs gives each id the shortest prefix (at least 8 characters, its
// dashes dropped) that no other id of the list shares.
func shortIDs(ids []string) []string {
	flat := make([]string, len(ids))
	for i, id := range ids {
		flat[i] = strings.ReplaceAll(id, "-", "")
	}
	out := make([]string, len(ids))
	for i, f := range flat {
		n := min(8, len(f))
		for ; n < len(f); n++ {
			unique := true
			for j, g := range flat {
				if j != i && strings.HasPrefix(g, f[:n]) {
					unique = false
					break
				}
			}
			if unique {
				break
			}
		}
		out[i] = f[:n]
	}
	return out
}
