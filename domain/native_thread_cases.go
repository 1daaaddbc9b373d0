package domain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// NewThread starts a clean native thread in an idle pane (new-thread;
// clear-thread is the same action) and gives it a new AKK Session of the
// caller. The agent's records must prove the change: Claude Code's session
// record names the new session; Codex records a thread only at its first
// request, so its status card must name a new thread and the Session binds
// at its first accepted Turn. No Turn is created.
func (s *NativeCases) NewThread(ctx context.Context, terminalID string) (NewThreadResult, error) {
	p, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return NewThreadResult{}, err
	}
	defer unlock()
	prev := ""
	if term.NativeIdentity == IdentityResolved {
		prev = term.NativeThreadID
	}
	if !term.Agent.ThreadProbe && prev == "" {
		return NewThreadResult{}, E(CodeNativeIdentityUnproven, "the pane's session is not proven by Claude Code's records ("+string(term.NativeIdentity)+"), so a new one could not be proven either")
	}
	seq, done := s.keySequence(ctx)
	defer done()
	if prev == "" {
		// Codex with no record of its thread: learn the thread it shows
		// first, so the new one can be told from it.
		st, stage, err := s.native.StatusCard(seq, term)
		if rerr := refusedBeforeInput(stage, err, "the status plan"); rerr != nil {
			return NewThreadResult{}, rerr
		}
		if err != nil || stage != AnswerVerified || st.NativeThreadID == "" {
			s.noteNativeUncertain(seq, p, term.ID, "new_thread", err)
			return NewThreadResult{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, Binding: BindingNone, Detail: s.why(err)}, nil
		}
		prev = st.NativeThreadID
		if term, err = s.turns.term.Observe(seq, terminalID); err != nil || !term.SendReady() {
			s.noteNativeUncertain(seq, p, terminalID, "new_thread", err)
			return NewThreadResult{TerminalID: terminalID, Outcome: OutcomeUncertain, DoNotRetry: true, PreviousNativeThreadID: prev, Binding: BindingNone, Detail: s.why(err)}, nil
		}
	}
	stage, err := s.native.NewThread(seq, term)
	if rerr := refusedBeforeInput(stage, err, "the new-thread plan"); rerr != nil {
		return NewThreadResult{}, rerr
	}
	uncertain := NewThreadResult{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, PreviousNativeThreadID: prev, Binding: BindingNone}
	if err != nil || stage != AnswerVerified {
		s.noteNativeUncertain(seq, p, term.ID, "new_thread", err)
		uncertain.Detail = s.why(err)
		return uncertain, nil
	}
	threadID, binding, err := s.provenNewThread(seq, term, prev)
	if err != nil {
		s.noteNativeUncertain(seq, p, term.ID, "new_thread", err)
		uncertain.Detail = s.why(err)
		return uncertain, nil
	}
	return s.followThread(seq, p, term.ID, "terminal.thread_started", threadID, prev, binding), nil
}

// followThread stores the caller's new Session of the thread a native
// transition proved, with its event, in one transaction.
func (s *NativeCases) followThread(ctx context.Context, p Principal, terminalID, typ, threadID, prev, binding string) NewThreadResult {
	now := s.clock.Now().UTC()
	sess := Session{ID: s.ids.New("sess"), HostID: p.HostID, TerminalID: terminalID, CreatedAt: now, Revision: 1}
	if binding == BindingBound {
		sess.NativeThreadID = threadID
	}
	err := s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertSession(ctx, sess); err != nil {
			return err
		}
		_, err := s.emitLocked(ctx, tx, Event{Type: typ, HostID: p.HostID, Conversation: p.Conversation, Subject: terminalID,
			Data: map[string]any{"terminal_id": terminalID, "session_id": sess.ID, "native_thread_id": nullable(threadID),
				"previous_native_thread_id": nullable(prev), "binding": binding}}, false)
		return err
	})
	if err != nil {
		// The thread is on screen; only AKK's Session of it is missing.
		return NewThreadResult{TerminalID: terminalID, Outcome: OutcomeUncertain, DoNotRetry: true, PreviousNativeThreadID: prev,
			Binding: BindingNone, Detail: "the thread is on screen but its Session could not be stored"}
	}
	return NewThreadResult{TerminalID: terminalID, Outcome: OutcomeDone, SessionID: sess.ID, NativeThreadID: threadID,
		PreviousNativeThreadID: prev, Binding: binding}
}

// ResumeThread resumes one exact native thread of the pane's agent (one
// its records list for the pane's project now) and gives it a new AKK
// Session of the caller. The agent's side must prove the target after:
// its record (Claude Code's session record; Codex's open rollout up to
// 0.155.1), else Codex's closed status card, in which case the Session
// binds at its first accepted Turn. No Turn is created.
func (s *NativeCases) ResumeThread(ctx context.Context, terminalID, threadID string, previous bool) (NewThreadResult, error) {
	if previous && threadID != "" {
		return NewThreadResult{}, Invalid("give native_thread_id or previous, not both", FieldError{Field: "previous", Message: "not together with native_thread_id"})
	}
	if previous {
		var err error
		if threadID, err = s.previousThread(ctx, terminalID); err != nil {
			return NewThreadResult{}, err
		}
	}
	if !isThreadID(threadID) {
		return NewThreadResult{}, Invalid("native_thread_id must be a complete thread id from the threads listing",
			FieldError{Field: "native_thread_id", Message: "a complete lower-case UUID"})
	}
	p, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return NewThreadResult{}, err
	}
	defer unlock()
	if s.threads == nil {
		return NewThreadResult{}, E(CodeUnavailable, "thread listing is not configured")
	}
	ths, err := s.threads.Threads(ctx, term)
	if err != nil {
		return NewThreadResult{}, &Error{Code: CodeUnavailable, Message: "could not read the agent's records", Err: err}
	}
	listed := false
	for _, th := range ths {
		listed = listed || th.NativeThreadID == threadID
	}
	if !listed {
		return NewThreadResult{}, E(CodeThreadNotFound, "the agent's records list no thread "+threadID+" in this pane's project; list threads again")
	}
	prev := ""
	if term.NativeIdentity == IdentityResolved {
		prev = term.NativeThreadID
		if prev == threadID {
			return NewThreadResult{}, E(CodeThreadAlreadyCurrent, "the pane shows this thread already")
		}
	}
	seq, done := s.keySequence(ctx)
	defer done()
	stage, err := s.native.ResumeThread(seq, term, threadID)
	if rerr := refusedBeforeInput(stage, err, "the resume plan"); rerr != nil {
		return NewThreadResult{}, rerr
	}
	uncertain := NewThreadResult{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, PreviousNativeThreadID: prev, Binding: BindingNone}
	if err != nil || stage != AnswerVerified {
		s.noteNativeUncertain(seq, p, term.ID, "resume_thread", err)
		uncertain.Detail = s.why(err)
		return uncertain, nil
	}
	binding, err := s.provenThread(seq, term, threadID)
	if err != nil {
		s.noteNativeUncertain(seq, p, term.ID, "resume_thread", err)
		uncertain.Detail = s.why(err)
		return uncertain, nil
	}
	return s.followThread(seq, p, term.ID, "terminal.thread_resumed", threadID, prev, binding), nil
}

// previousThread is the thread the caller's last committed transition on
// terminalID (a new or resumed thread) left, provided fresh discovery
// proves the pane still shows the thread that transition went to: the one
// source "previous" can mean. Anything else is refused before any key.
func (s *NativeCases) previousThread(ctx context.Context, terminalID string) (string, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return "", err
	}
	f := FilterFor(p)
	f.Subject = terminalID
	var last struct {
		Thread   *string `json:"native_thread_id"`
		Previous *string `json:"previous_native_thread_id"`
	}
	found := false
	for after := int64(0); ; {
		evs, err := s.store.EventsAfter(ctx, after, f, 500)
		if err != nil {
			return "", err
		}
		for _, e := range evs {
			after = e.ID
			if e.Type != "terminal.thread_started" && e.Type != "terminal.thread_resumed" {
				continue
			}
			raw, ok := e.Data.(json.RawMessage)
			if !ok {
				continue
			}
			last.Thread, last.Previous = nil, nil
			found = json.Unmarshal(raw, &last) == nil
		}
		if len(evs) < 500 {
			break
		}
	}
	if !found || last.Previous == nil || *last.Previous == "" {
		return "", E(CodeThreadNotFound, "no earlier thread of yours is known on this terminal: resume by native_thread_id from the threads listing")
	}
	term, err := s.turns.term.Observe(ctx, terminalID)
	if errors.Is(err, ErrTerminalGone) {
		return "", E(CodeTerminalNotFound, "no live pane runs terminal "+terminalID)
	}
	if err != nil {
		return "", &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	if last.Thread == nil || term.NativeIdentity != IdentityResolved || term.NativeThreadID != *last.Thread {
		return "", E(CodeNativeIdentityUnproven, "the pane is not proven to show the thread your last transition went to, so previous has no single meaning; resume by native_thread_id")
	}
	return *last.Previous, nil
}

// provenThread proves the pane shows thread target after a resume: its
// records resolve to it (bound), or, where they cannot name the pane's
// thread (Codex on a shared daemon), the closed status card names it
// (pending_first_turn).
func (s *NativeCases) provenThread(ctx context.Context, term Terminal, target string) (string, error) {
	var last Terminal
	for range 100 {
		now, err := s.turns.term.Observe(ctx, term.ID)
		if err != nil {
			return "", err
		}
		last = now
		switch {
		case now.NativeIdentity == IdentityResolved && now.NativeThreadID == target:
			return BindingBound, nil
		case term.Agent.ThreadProbe && now.NativeIdentity != IdentityResolved && now.SendReady():
			st, stage, err := s.native.StatusCard(ctx, now)
			if probeAgain(stage, err) {
				break // nothing typed: the pane moved on since the look; look again
			}
			if err != nil || stage != AnswerVerified {
				return "", fmt.Errorf("the status probe after the resume: %v", err)
			}
			if st.NativeThreadID != target {
				return "", fmt.Errorf("the status card names thread %s, not %s", st.NativeThreadID, target)
			}
			return BindingPendingFirstTurn, nil
		}
		if err := s.pause(ctx, 100*time.Millisecond); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("the records never proved thread %s (identity %s %s)", target, last.NativeIdentity, last.NativeThreadID)
}

// provenNewThread proves from the agent's side which thread the pane shows
// after its new-thread command. Claude Code: its session record names a
// session other than prev (observed until it does, for up to 10 s).
// Codex: the closed status probe, once the pane is idle again, names a
// thread other than prev (Codex records a thread only at its first
// request).
func (s *NativeCases) provenNewThread(ctx context.Context, term Terminal, prev string) (string, string, error) {
	var last Terminal
	for range 100 {
		now, err := s.turns.term.Observe(ctx, term.ID)
		if err != nil {
			return "", "", err
		}
		last = now
		if !term.Agent.ThreadProbe {
			if now.NativeIdentity == IdentityResolved && now.NativeThreadID != prev && now.NativeThreadID != "" {
				return now.NativeThreadID, BindingBound, nil
			}
		} else if now.SendReady() {
			st, stage, err := s.native.StatusCard(ctx, now)
			switch {
			case probeAgain(stage, err):
				// Nothing typed: the pane moved on since the look (Codex
				// redraws its title after a new thread); look again.
			case err != nil || stage != AnswerVerified:
				return "", "", fmt.Errorf("the status probe after the new thread: %v", err)
			case st.NativeThreadID == "" || st.NativeThreadID == prev:
				return "", "", errors.New("the status card still names the previous thread")
			default:
				return st.NativeThreadID, BindingPendingFirstTurn, nil
			}
		}
		if err := s.pause(ctx, 100*time.Millisecond); err != nil {
			return "", "", err
		}
	}
	return "", "", fmt.Errorf("the records never proved a new thread (identity %s, screen %s)", last.NativeIdentity, last.ScreenState)
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
