package domain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// NativeControls drives an agent's own controls (its status view, its
// new-thread command) as closed, version-profiled plans. The slash
// commands they type are the profile's; nothing of them crosses the API.
// Each method is called under the terminal's lock with t observed there,
// send-ready; it captures the screen again right before its first key and
// sends nothing unless it still proves an idle, empty composer.
type NativeControls interface {
	// StatusCard opens the agent's status view once, reads it and returns
	// the pane to its idle empty composer.
	StatusCard(ctx context.Context, t Terminal) (NativeStatus, AnswerStage, error)
	// WorkingStatusCard is StatusCard on a working pane whose composer is
	// empty (Codex takes its status command while a task runs): the card
	// must be a new one, the composer empty again after it.
	WorkingStatusCard(ctx context.Context, t Terminal) (NativeStatus, AnswerStage, error)
	// NewThread runs the agent's new-thread command once and proves the
	// idle empty composer after it. The record side (which thread the pane
	// shows now) is the caller's to prove, by observing again.
	NewThread(ctx context.Context, t Terminal) (AnswerStage, error)
	// ResumeThread runs the agent's resume command with the complete id of
	// one of its threads once and proves the idle empty composer after it.
	ResumeThread(ctx context.Context, t Terminal, threadID string) (AnswerStage, error)
}

// NativeStatus is what an agent's status view showed, redacted.
type NativeStatus struct {
	NativeThreadID string
	AgentVersion   string
	Model          string
	Directory      string
	Permissions    string // Codex only
}

// ErrNativeUnsupported: the profile has no closed plan for this control
// (or the pane cannot show its result, e.g. too narrow); nothing was sent.
var ErrNativeUnsupported = errors.New("native control not supported here")

// UseNativeControls sets the native controls port.
func (s *Service) UseNativeControls(n NativeControls) { s.native = n }

// NativeInspection is the result of one native status inspection.
type NativeInspection struct {
	TerminalID            string
	Outcome               Outcome
	DoNotRetry            bool
	Status                *NativeStatus
	IdentityMatchesRecord bool
	Detail                string // why not done
}

// ForegroundProof is a diagnostic of which thread a Codex pane shows. It
// authorizes nothing and means nothing after ExpiresAt.
type ForegroundProof struct {
	TerminalID     string
	Outcome        Outcome
	DoNotRetry     bool
	NativeThreadID string
	RecordPresent  bool
	ProvenAt       time.Time
	ExpiresAt      time.Time
	Detail         string // why not done
}

// ForegroundProofTTL is how long a foreground proof is meaningful.
const ForegroundProofTTL = 30 * time.Second

// NewThreadResult is what a new-thread plan did.
type NewThreadResult struct {
	TerminalID             string
	Outcome                Outcome
	DoNotRetry             bool
	SessionID              string
	NativeThreadID         string
	PreviousNativeThreadID string
	Binding                string // BindingBound, BindingPendingFirstTurn, BindingNone
	Detail                 string // why not done
}

const (
	BindingBound            = "bound"
	BindingPendingFirstTurn = "pending_first_turn"
	BindingNone             = "none"
)

// InspectionStatus is the one native inspection offered.
const InspectionStatus = "status"

// nativeReady is the common gate of every native control: a caller, the
// port, the terminal's lock (returned: the caller unlocks), no Turn
// holding the pane, a live exactly profiled agent on an idle screen with
// an empty composer. An error means no key was sent.
func (s *Service) nativeReady(ctx context.Context, terminalID string) (Principal, Terminal, func(), error) {
	return s.nativeGate(ctx, terminalID, true)
}

// nativeGate is nativeReady; with idle false the screen may show anything
// but a working task or a prompt (a repair's residue).
func (s *Service) nativeGate(ctx context.Context, terminalID string, idle bool) (Principal, Terminal, func(), error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return Principal{}, Terminal{}, nil, err
	}
	if s.native == nil || s.turns == nil {
		return Principal{}, Terminal{}, nil, E(CodeUnavailable, "native controls are not configured")
	}
	unlock := s.turns.lockTerminal(terminalID)
	fail := func(err error) (Principal, Terminal, func(), error) {
		unlock()
		return Principal{}, Terminal{}, nil, err
	}
	if held, err := s.holdingTurn(ctx, terminalID); err == nil {
		if p.CanSeeHost(held.HostID) {
			return fail(E(CodeConflictActiveTurn, "turn "+held.ID+" holds this terminal; wait for it to end or close it"))
		}
		return fail(E(CodeConflictActiveTurn, "a Turn of another controller holds this terminal"))
	} else if !errors.Is(err, ErrNotFound) {
		return fail(err)
	}
	term, err := s.turns.term.Observe(ctx, terminalID)
	if errors.Is(err, ErrTerminalGone) {
		return fail(E(CodeTerminalNotFound, "no live pane runs terminal "+terminalID))
	}
	if err != nil {
		return fail(&Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err})
	}
	switch {
	case !term.Agent.Profiled():
		return fail(E(CodeUnprofiledAgent, string(term.Agent.Kind)+" "+term.Agent.Version+" has no profile; AKK types nothing into it"))
	case term.Agent.Compatibility:
		return fail(E(CodeManualRequired, string(term.Agent.Kind)+" "+term.Agent.Version+" is read with a neighbour's profile; its native controls are left to the person"))
	case idle && !term.SendReady():
		return fail(E(CodeTerminalNotIdle, fmt.Sprintf("the pane is not idle with an empty composer (screen %s)", term.ScreenState)))
	case !idle && (term.ScreenState == ScreenWorking || term.ScreenState == ScreenAwaitingApproval || term.ScreenState == ScreenAwaitingInteraction):
		return fail(E(CodeTerminalNotIdle, fmt.Sprintf("the pane is %s", term.ScreenState)))
	}
	return p, term, unlock, nil
}

// refusedBeforeInput is the refusal of a native plan that sent nothing
// (stage AnswerNothing), nil when it sent keys.
func refusedBeforeInput(stage AnswerStage, err error, plan string) error {
	if berr := backedOut(err); berr != nil {
		return berr // keys went out, and the pane is proven as it was
	}
	if stage != AnswerNothing {
		return nil
	}
	if err == nil {
		err = errors.New(plan + " sent nothing")
	}
	return nativeRefusal(err)
}

// nativeRefusal maps an error of a native plan that sent nothing.
func nativeRefusal(err error) error {
	var de *Error
	switch {
	case errors.As(err, &de):
		return err
	case errors.Is(err, ErrTerminalGone):
		return E(CodeTerminalNotFound, "the pane is gone or its agent restarted")
	case errors.Is(err, ErrNativeUnsupported):
		return &Error{Code: CodeManualRequired, Message: err.Error(), Err: err}
	}
	return &Error{Code: CodeTerminalNotIdle, Message: "the pane did not prove the exact screen the plan starts from; nothing was sent (" + err.Error() + ")", Err: err}
}

func (s *Service) redactStatus(st NativeStatus) NativeStatus {
	st.Model = s.redactText(st.Model)
	st.Directory = s.redactText(st.Directory)
	st.Permissions = s.redactText(st.Permissions)
	st.AgentVersion = s.redactText(st.AgentVersion)
	return st
}

// Inspect opens the agent's native status view once (native_inspect) on
// an idle pane whose native identity is proven, and reports what it shows
// beside whether it names the thread the records prove. No Turn, Session,
// monitor or callback is created.
func (s *Service) Inspect(ctx context.Context, terminalID, inspection string) (NativeInspection, error) {
	if inspection != InspectionStatus {
		return NativeInspection{}, Invalid("inspection must be status", FieldError{Field: "inspection", Message: "status"})
	}
	_, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return NativeInspection{}, err
	}
	defer unlock()
	if term.NativeIdentity != IdentityResolved {
		hint := ""
		if term.Agent.Kind == AgentCodex {
			hint = "; identify-foreground reads which thread it shows"
		}
		return NativeInspection{}, E(CodeNativeIdentityUnproven, "the pane's native identity is "+string(term.NativeIdentity)+", not proven by the agent's records"+hint)
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := s.native.StatusCard(seq, term)
	if rerr := refusedBeforeInput(stage, err, "the status plan"); rerr != nil {
		return NativeInspection{}, rerr
	}
	res := NativeInspection{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true}
	if err != nil || stage != AnswerVerified {
		res.Detail = s.why(err)
		return res, nil
	}
	st = s.redactStatus(st)
	res.Outcome, res.DoNotRetry, res.Status = OutcomeDone, false, &st
	res.IdentityMatchesRecord = st.NativeThreadID != "" && st.NativeThreadID == term.NativeThreadID
	return res, nil
}

// IdentifyForeground runs the closed status probe once on an idle Codex
// pane and reports the thread in its foreground: a diagnostic for a pane
// whose identity the records cannot prove (several threads on one shared
// daemon). It authorizes nothing and changes no record.
func (s *Service) IdentifyForeground(ctx context.Context, terminalID string) (ForegroundProof, error) {
	_, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return ForegroundProof{}, err
	}
	defer unlock()
	if term.Agent.Kind != AgentCodex {
		return ForegroundProof{}, E(CodeManualRequired, "foreground identification is a Codex probe; Claude Code's session record proves its thread")
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := s.native.StatusCard(seq, term)
	if rerr := refusedBeforeInput(stage, err, "the status plan"); rerr != nil {
		return ForegroundProof{}, rerr
	}
	now := s.clock.Now().UTC()
	res := ForegroundProof{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, ProvenAt: now, ExpiresAt: now}
	if err != nil || stage != AnswerVerified || st.NativeThreadID == "" {
		res.Detail = s.why(err)
		return res, nil
	}
	res.Outcome, res.DoNotRetry, res.NativeThreadID = OutcomeDone, false, st.NativeThreadID
	res.ExpiresAt = now.Add(ForegroundProofTTL)
	if s.threads != nil {
		if ths, err := s.threads.Threads(ctx, term); err == nil {
			for _, th := range ths {
				res.RecordPresent = res.RecordPresent || th.NativeThreadID == st.NativeThreadID
			}
		}
	}
	return res, nil
}

// NewThread starts a clean native thread in an idle pane (new-thread;
// clear-thread is the same action) and gives it a new AKK Session of the
// caller. The agent's records must prove the change: Claude Code's session
// record names the new session; Codex records a thread only at its first
// request, so its status card must name a new thread and the Session binds
// at its first accepted Turn. No Turn is created.
func (s *Service) NewThread(ctx context.Context, terminalID string) (NewThreadResult, error) {
	p, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return NewThreadResult{}, err
	}
	defer unlock()
	prev := ""
	if term.NativeIdentity == IdentityResolved {
		prev = term.NativeThreadID
	}
	if term.Agent.Kind == AgentClaude && prev == "" {
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
func (s *Service) followThread(ctx context.Context, p Principal, terminalID, typ, threadID, prev, binding string) NewThreadResult {
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
func (s *Service) ResumeThread(ctx context.Context, terminalID, threadID string, previous bool) (NewThreadResult, error) {
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
func (s *Service) previousThread(ctx context.Context, terminalID string) (string, error) {
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
func (s *Service) provenThread(ctx context.Context, term Terminal, target string) (string, error) {
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
		case term.Agent.Kind == AgentCodex && now.NativeIdentity != IdentityResolved && now.SendReady():
			st, stage, err := s.native.StatusCard(ctx, now)
			if err != nil || stage != AnswerVerified {
				return "", fmt.Errorf("the status probe after the resume: %v", err)
			}
			if st.NativeThreadID != target {
				return "", fmt.Errorf("the status card names thread %s, not %s", st.NativeThreadID, target)
			}
			return BindingPendingFirstTurn, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("the records never proved thread %s (identity %s %s)", target, last.NativeIdentity, last.NativeThreadID)
}

// isThreadID reports whether id is a complete lower-case UUID.
func isThreadID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i, r := range id {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
				return false
			}
		}
	}
	return true
}

// provenNewThread proves from the agent's side which thread the pane shows
// after its new-thread command. Claude Code: its session record names a
// session other than prev (observed until it does, for up to 10 s).
// Codex: the closed status probe, once the pane is idle again, names a
// thread other than prev (Codex records a thread only at its first
// request).
func (s *Service) provenNewThread(ctx context.Context, term Terminal, prev string) (string, string, error) {
	var last Terminal
	for range 100 {
		now, err := s.turns.term.Observe(ctx, term.ID)
		if err != nil {
			return "", "", err
		}
		last = now
		if term.Agent.Kind == AgentClaude {
			if now.NativeIdentity == IdentityResolved && now.NativeThreadID != prev && now.NativeThreadID != "" {
				return now.NativeThreadID, BindingBound, nil
			}
		} else if now.SendReady() {
			st, stage, err := s.native.StatusCard(ctx, now)
			if err != nil || stage != AnswerVerified {
				return "", "", fmt.Errorf("the status probe after the new thread: %v", err)
			}
			if st.NativeThreadID == "" || st.NativeThreadID == prev {
				return "", "", errors.New("the status card still names the previous thread")
			}
			return st.NativeThreadID, BindingPendingFirstTurn, nil
		}
		select {
		case <-ctx.Done():
			return "", "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return "", "", fmt.Errorf("the records never proved a new thread (identity %s, screen %s)", last.NativeIdentity, last.ScreenState)
}

// noteNativeUncertain records an uncertain native control on the event
// stream (no webhook: no Turn or Watch is involved).
func (s *Service) noteNativeUncertain(ctx context.Context, p Principal, terminalID, action string, cause error) {
	data := map[string]any{"terminal_id": terminalID, "action": action}
	if cause != nil {
		data["reason"] = s.redactText(cause.Error())
	}
	_ = s.store.InTx(ctx, func(tx Tx) error {
		_, err := s.emitLocked(ctx, tx, Event{Type: "terminal.native_uncertain", HostID: p.HostID, Conversation: p.Conversation, Subject: terminalID, Data: data}, false)
		return err
	})
}

// why is a redacted reason for an uncertain native control.
func (s *Service) why(err error) string {
	if err == nil {
		return "the plan's end was not proven"
	}
	return s.redactText(err.Error())
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// PermissionMode is one native permission mode: a semantic id and the
// agent's own label.
type PermissionMode struct {
	Mode  string
	Label string
}

// PermissionState is a pane's permission mode and the modes it offers.
type PermissionState struct {
	Current string
	Modes   []PermissionMode
}

// PermissionControls may be implemented by NativeControls: read and set
// the agent's own permission mode with the profile's closed plan.
type PermissionControls interface {
	// Permissions reads the current mode and the modes offered (Codex
	// opens and closes its menu: keys; Claude Code reads its footer: none).
	Permissions(ctx context.Context, t Terminal) (PermissionState, AnswerStage, error)
	// SetPermissions moves to mode, one proven step at a time, and reads
	// the mode back.
	SetPermissions(ctx context.Context, t Terminal, mode string) (PermissionState, AnswerStage, error)
}

// ErrModeUnavailable: the pane did not offer the mode; it is proven back
// on the mode it had.
var ErrModeUnavailable = errors.New("the pane does not offer this mode")

// PermissionsResult is what a permissions read or change did.
type PermissionsResult struct {
	TerminalID       string
	Outcome          Outcome
	DoNotRetry       bool
	Current          string
	Previous         string
	Modes            []PermissionMode
	AlreadyEffective bool
	Detail           string
}

func (s *Service) permissionControls() (PermissionControls, error) {
	pc, ok := s.native.(PermissionControls)
	if !ok {
		return nil, E(CodeUnavailable, "permission controls are not configured")
	}
	return pc, nil
}

// Permissions reads a pane's native permission mode and the modes it
// offers, on an idle pane with an empty composer no Turn holds.
func (s *Service) Permissions(ctx context.Context, terminalID string) (PermissionsResult, error) {
	_, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return PermissionsResult{}, err
	}
	defer unlock()
	pc, err := s.permissionControls()
	if err != nil {
		return PermissionsResult{}, err
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := pc.Permissions(seq, term)
	if berr := backedOut(err); berr != nil {
		return PermissionsResult{}, berr
	}
	if err != nil && stage == AnswerNothing {
		return PermissionsResult{}, nativeRefusal(err)
	}
	if err != nil || (stage != AnswerNothing && stage != AnswerVerified) {
		return PermissionsResult{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, Detail: s.why(err)}, nil
	}
	return PermissionsResult{TerminalID: term.ID, Outcome: OutcomeDone, Current: st.Current, Modes: st.Modes}, nil
}

// SetPermissions changes a pane's native permission mode to one the
// profile knows (Full Access is an explicit choice whose native
// confirmation AKK answers), then reads it back. A mode already in effect
// is reported as such without a key where the mode is on screen.
func (s *Service) SetPermissions(ctx context.Context, terminalID, mode string) (PermissionsResult, error) {
	if mode == "" || len(mode) > 40 {
		return PermissionsResult{}, Invalid("mode is required", FieldError{Field: "mode", Message: "a mode from the permissions listing"})
	}
	p, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return PermissionsResult{}, err
	}
	defer unlock()
	pc, err := s.permissionControls()
	if err != nil {
		return PermissionsResult{}, err
	}
	seq, done := s.keySequence(ctx)
	defer done()
	before, stage, err := pc.Permissions(seq, term)
	if berr := backedOut(err); berr != nil {
		return PermissionsResult{}, berr
	}
	if err != nil && stage == AnswerNothing {
		return PermissionsResult{}, nativeRefusal(err)
	}
	if err != nil || (stage != AnswerNothing && stage != AnswerVerified) {
		s.noteNativeUncertain(seq, p, term.ID, "set_permissions", err)
		return PermissionsResult{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, Detail: s.why(err)}, nil
	}
	offered := false
	for _, m := range before.Modes {
		offered = offered || m.Mode == mode
	}
	if !offered {
		return PermissionsResult{}, E(CodeValidationFailed, "the pane does not offer mode "+mode+"; read its permissions for the modes it offers")
	}
	if before.Current == mode {
		return PermissionsResult{TerminalID: term.ID, Outcome: OutcomeDone, Current: mode, Previous: mode, Modes: before.Modes, AlreadyEffective: true}, nil
	}
	if term, err = s.turns.term.Observe(seq, terminalID); err != nil || !term.SendReady() {
		return PermissionsResult{}, E(CodeTerminalNotIdle, "the pane is not idle with an empty composer after reading its modes; nothing was changed")
	}
	after, stage, err := pc.SetPermissions(seq, term, mode)
	if errors.Is(err, ErrModeUnavailable) {
		return PermissionsResult{}, &Error{Code: CodeManualRequired, Message: "the pane cycled back to " + before.Current + " without offering " + mode + "; its mode is unchanged", Err: err}
	}
	if berr := backedOut(err); berr != nil {
		return PermissionsResult{}, berr
	}
	if err != nil && stage == AnswerNothing {
		return PermissionsResult{}, nativeRefusal(err)
	}
	if err != nil || stage != AnswerVerified || after.Current != mode {
		s.noteNativeUncertain(seq, p, term.ID, "set_permissions", err)
		return PermissionsResult{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, Previous: before.Current, Detail: s.why(err)}, nil
	}
	_ = s.store.InTx(seq, func(tx Tx) error {
		_, err := s.emitLocked(seq, tx, Event{Type: "terminal.permissions_changed", HostID: p.HostID, Conversation: p.Conversation, Subject: term.ID,
			Data: map[string]any{"terminal_id": term.ID, "mode": mode, "previous": before.Current}}, false)
		return err
	})
	return PermissionsResult{TerminalID: term.ID, Outcome: OutcomeDone, Current: after.Current, Previous: before.Current, Modes: after.Modes}, nil
}

// ModelOption is one model of a pane's catalogue, with the reasoning
// efforts it offers (known for the model in effect only: reading another
// model's would mean selecting it).
type ModelOption struct {
	Model   string
	Label   string
	Efforts []string
}

// ModelState is a pane's model catalogue and what is in effect.
type ModelState struct {
	Model  string
	Effort string
	Models []ModelOption
	Scope  string // "current_session" or "current_and_new_sessions"
}

// ModelControls may be implemented by NativeControls: the agent's own
// model and effort control as closed plans.
type ModelControls interface {
	// Models opens the model UI once, reads the catalogue and what is in
	// effect, closes it, and proves the idle empty composer again.
	Models(ctx context.Context, t Terminal) (ModelState, AnswerStage, error)
	// SetModel sets effort on the model in effect, one proven step at a
	// time, and reads it back.
	SetModel(ctx context.Context, t Terminal, model, effort string) (ModelState, AnswerStage, error)
}

// ModelCatalogTTL is how long a catalogue may be consumed.
const ModelCatalogTTL = 5 * time.Minute

type catalogKey struct{ host, conversation, terminal string }

type catalog struct {
	state ModelState
	at    time.Time
	inc   Incarnation
}

// ModelsResult is what a catalogue read or a model change did.
type ModelsResult struct {
	TerminalID string
	Outcome    string // models: done / uncertain; set: changed / already_effective / uncertain
	DoNotRetry bool
	Effective  *ModelChoice
	Models     []ModelOption
	Scope      string
	ExpiresAt  time.Time
	Detail     string
}

// ModelChoice is a model with its reasoning effort.
type ModelChoice struct{ Model, Effort string }

func (s *Service) modelControls() (ModelControls, error) {
	mc, ok := s.native.(ModelControls)
	if !ok {
		return nil, E(CodeUnavailable, "model controls are not configured")
	}
	return mc, nil
}

// Models reads a pane's model catalogue and the model and effort in
// effect (model_options). The catalogue is the authority for one
// set-model by the same controller conversation within 5 minutes.
func (s *Service) Models(ctx context.Context, terminalID string) (ModelsResult, error) {
	if IsBackendEndpoint(terminalID) {
		return s.backendModels(ctx, terminalID)
	}
	p, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return ModelsResult{}, err
	}
	defer unlock()
	mc, err := s.modelControls()
	if err != nil {
		return ModelsResult{}, err
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := mc.Models(seq, term)
	if rerr := refusedBeforeInput(stage, err, "the model plan"); rerr != nil {
		return ModelsResult{}, rerr
	}
	if err != nil || stage != AnswerVerified {
		s.noteNativeUncertain(seq, p, term.ID, "model_options", err)
		return ModelsResult{TerminalID: term.ID, Outcome: string(OutcomeUncertain), DoNotRetry: true, Detail: s.why(err)}, nil
	}
	now := s.clock.Now().UTC()
	s.catalogMu.Lock()
	if s.catalogs == nil {
		s.catalogs = map[catalogKey]catalog{}
	}
	for k, c := range s.catalogs {
		if now.Sub(c.at) > ModelCatalogTTL {
			delete(s.catalogs, k)
		}
	}
	s.catalogs[catalogKey{p.HostID, p.Conversation, term.ID}] = catalog{state: st, at: now, inc: term.Process}
	s.catalogMu.Unlock()
	return ModelsResult{TerminalID: term.ID, Outcome: string(OutcomeDone), Effective: &ModelChoice{st.Model, st.Effort},
		Models: st.Models, Scope: st.Scope, ExpiresAt: now.Add(ModelCatalogTTL)}, nil
}

// SetModel consumes the caller's catalogue of the pane once and sets the
// model and effort it advertised (set_model).
func (s *Service) SetModel(ctx context.Context, terminalID, model, effort string) (ModelsResult, error) {
	if model == "" || effort == "" || len(model) > 80 || len(effort) > 40 {
		return ModelsResult{}, Invalid("model and reasoning_effort are both required", FieldError{Field: "reasoning_effort", Message: "from the models catalogue"})
	}
	p, err := requirePrincipal(ctx)
	if err != nil {
		return ModelsResult{}, err
	}
	key := catalogKey{p.HostID, p.Conversation, terminalID}
	s.catalogMu.Lock()
	cat, ok := s.catalogs[key]
	delete(s.catalogs, key) // consumed by this attempt, whatever it does
	s.catalogMu.Unlock()
	if !ok || s.clock.Now().UTC().Sub(cat.at) > ModelCatalogTTL {
		return ModelsResult{}, E(CodeOfferExpired, "no live model catalogue of this conversation for this terminal: read the models first (GET), from the same conversation, and choose within 5 minutes")
	}
	var efforts []string
	known := false
	for _, m := range cat.state.Models {
		if m.Model == model {
			known, efforts = true, m.Efforts
		}
	}
	if !known {
		return ModelsResult{}, E(CodeValidationFailed, "model "+model+" is not in the catalogue")
	}
	if !slices.Contains(efforts, effort) {
		return ModelsResult{}, E(CodeValidationFailed, "the catalogue advertises no effort "+effort+" for "+model+" (efforts are known for the model in effect)")
	}
	if model != cat.state.Model {
		return ModelsResult{}, E(CodeValidationFailed, "only the effort of the model in effect ("+cat.state.Model+") can be set here")
	}
	p, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return ModelsResult{}, err
	}
	defer unlock()
	if term.Process != cat.inc {
		return ModelsResult{}, E(CodeOfferExpired, "the pane's agent changed since the catalogue was read; read the models again")
	}
	if effort == cat.state.Effort {
		return ModelsResult{TerminalID: term.ID, Outcome: "already_effective", Effective: &ModelChoice{model, effort}, Scope: cat.state.Scope}, nil
	}
	mc, err := s.modelControls()
	if err != nil {
		return ModelsResult{}, err
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := mc.SetModel(seq, term, model, effort)
	if rerr := refusedBeforeInput(stage, err, "the model plan"); rerr != nil {
		return ModelsResult{}, rerr
	}
	if err != nil || stage != AnswerVerified || st.Model != model || st.Effort != effort {
		s.noteNativeUncertain(seq, p, term.ID, "set_model", err)
		return ModelsResult{TerminalID: term.ID, Outcome: string(OutcomeUncertain), DoNotRetry: true, Scope: cat.state.Scope, Detail: s.why(err)}, nil
	}
	_ = s.store.InTx(seq, func(tx Tx) error {
		_, err := s.emitLocked(seq, tx, Event{Type: "terminal.model_changed", HostID: p.HostID, Conversation: p.Conversation, Subject: term.ID,
			Data: map[string]any{"terminal_id": term.ID, "model": model, "reasoning_effort": effort, "scope": cat.state.Scope}}, false)
		return err
	})
	return ModelsResult{TerminalID: term.ID, Outcome: "changed", Effective: &ModelChoice{st.Model, st.Effort}, Scope: cat.state.Scope}, nil
}

// ModelRepairer may be implemented by NativeControls: clear what a model
// control left on a pane (its picker open, or its bare command in the
// composer) and prove the idle empty composer. It never presses Enter.
type ModelRepairer interface {
	// ModelResidue reports whether t shows something RepairModel clears.
	ModelResidue(ctx context.Context, t Terminal) bool
	RepairModel(ctx context.Context, t Terminal) (AnswerStage, error)
}

// ErrBackedOut: a native control opened a surface it could not read or
// use, backed out of it and proved the pane back at its idle empty
// composer. Nothing changed; the answer is manual_required.
var ErrBackedOut = errors.New("nothing changed: AKK closed what it opened and the pane is back at its idle empty composer")

// backedOut is the manual_required answer of a control that backed out.
func backedOut(err error) error {
	if !errors.Is(err, ErrBackedOut) {
		return nil
	}
	return &Error{Code: CodeManualRequired, Message: err.Error() + "; do it in the pane", Err: err}
}

// ErrNothingToRepair: the pane shows no model residue; nothing was sent.
var ErrNothingToRepair = errors.New("no model control residue on the pane")

// RepairResult is what a model-control repair did.
type RepairResult struct {
	TerminalID string
	Outcome    Outcome
	DoNotRetry bool
	Detail     string
}

// RepairModel clears an exact model-control residue (repair_model_control):
// an open model or effort menu is closed with Escape, a bare model command
// left in the composer is cleared with the line-clear key, each step
// proven, until the idle empty composer shows. Never Enter, never a model.
func (s *Service) RepairModel(ctx context.Context, terminalID string) (RepairResult, error) {
	mr, ok := s.native.(ModelRepairer)
	if !ok {
		return RepairResult{}, E(CodeUnavailable, "model repair is not configured")
	}
	p, term, unlock, err := s.nativeGate(ctx, terminalID, false)
	if err != nil {
		return RepairResult{}, err
	}
	defer unlock()
	seq, done := s.keySequence(ctx)
	defer done()
	stage, err := mr.RepairModel(seq, term)
	if errors.Is(err, ErrNothingToRepair) {
		return RepairResult{}, &Error{Code: CodeConflict, Message: "the pane shows no model picker or model command to clear; nothing was sent", Err: err}
	}
	if rerr := refusedBeforeInput(stage, err, "the repair"); rerr != nil {
		return RepairResult{}, rerr
	}
	if err != nil || stage != AnswerVerified {
		s.noteNativeUncertain(seq, p, term.ID, "repair_model_control", err)
		return RepairResult{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, Detail: s.why(err)}, nil
	}
	return RepairResult{TerminalID: term.ID, Outcome: OutcomeDone}, nil
}
