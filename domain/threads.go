package domain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
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

// UseThreads sets the thread reader.
func (s *NativeCases) UseThreads(r ThreadReader) { s.threads = r }

// Threads lists the resumable native threads of the agent in a terminal:
// its project's threads from the agent's own records, newest first, the
// one on screen marked current. It sends no input.
func (s *NativeCases) Threads(ctx context.Context, terminalID string) (ThreadList, error) {
	if _, ok := PrincipalFrom(ctx); !ok {
		return ThreadList{}, E(CodeUnauthorized, "a bearer token is required")
	}
	if s.threads == nil || s.turns == nil {
		return ThreadList{}, E(CodeUnavailable, "thread listing is not configured")
	}
	term, err := s.turns.term.Observe(ctx, terminalID)
	if errors.Is(err, ErrTerminalGone) {
		return ThreadList{}, E(CodeTerminalNotFound, "no live pane runs terminal "+terminalID)
	}
	if err != nil {
		return ThreadList{}, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	if !term.Agent.Profiled() {
		return ThreadList{}, E(CodeUnprofiledAgent, string(term.Agent.Kind)+" "+term.Agent.Version+" has no profile; AKK does not read its records")
	}
	ths, err := s.threads.Threads(ctx, term)
	if err != nil {
		return ThreadList{}, &Error{Code: CodeUnavailable, Message: "could not read the agent's records", Err: err}
	}
	sort.SliceStable(ths, func(i, j int) bool { return ths[i].UpdatedAt.After(ths[j].UpdatedAt) })
	if len(ths) > MaxThreads {
		ths = ths[:MaxThreads]
	}
	now := s.clock.Now().UTC()
	ids := make([]string, len(ths))
	for i := range ths {
		ids[i] = ths[i].NativeThreadID
	}
	short := shortIDs(ids)
	h := sha256.New()
	h.Write([]byte(term.ID))
	for i := range ths {
		th := &ths[i]
		th.Number, th.ShortID = i+1, short[i]
		th.Current = term.NativeIdentity == IdentityResolved && term.NativeThreadID == th.NativeThreadID
		th.Title = strings.TrimSpace(th.Title)
		if utf8.RuneCountInString(th.Title) > ThreadTitleLimit {
			th.Title = boundText(s.turns.redact, th.Title, ThreadTitleLimit-1) // and "…"
		} else {
			th.Title = boundText(s.turns.redact, th.Title, ThreadTitleLimit)
		}
		h.Write([]byte(th.NativeThreadID + "|" + th.UpdatedAt.Format(time.RFC3339Nano) + "\n"))
	}
	h.Write([]byte(now.Truncate(ThreadSnapshotTTL).Format(time.RFC3339)))
	return ThreadList{TerminalID: term.ID, Agent: term.Agent, Project: term.Project,
		SnapshotID: "thr_" + hex.EncodeToString(h.Sum(nil))[:20], ExpiresAt: now.Add(ThreadSnapshotTTL), Threads: ths}, nil
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
