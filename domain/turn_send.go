package domain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// TurnConfig tunes Turns; zero fields take the defaults.
type TurnConfig struct {
	MaxRequestRunes   int           // longest request, in code points
	DefaultInactivity time.Duration // a Turn with no activity this long is stalled
	DefaultHard       time.Duration // observation ends this long after the send
	AcceptWindow      time.Duration // how long acceptance may take after Enter
	PollInterval      time.Duration // how often the durable record is read
	ScreenInterval    time.Duration // how often the screen is looked at
	// ScreenGap is the least time between two looks at a screen tmux
	// reports changing (ScreenNotifier): while output flows, a monitor
	// looks at most this often, and a prompt drawn reaches it within it.
	ScreenGap time.Duration
	// ScreenConfirm is how soon a monitor looks again at a screen that one
	// look read as a new prompt, to believe it (see screenWatch.confirm).
	ScreenConfirm time.Duration
	// ScreenQuiet is how often a monitor looks at a screen that tmux
	// reports unchanged: a safety net for what the pane's writes do not
	// show (its process ending without a word).
	ScreenQuiet time.Duration
	// RecordSafety is how often the record is read anyway while a write
	// watch (inotify) on it is armed: the watch wakes the monitor at once,
	// so this is only a safety net (a file the watch cannot see).
	RecordSafety time.Duration
}

func (c *TurnConfig) defaults() {
	if c.MaxRequestRunes == 0 {
		c.MaxRequestRunes = 4000
	}
	if c.DefaultInactivity == 0 {
		c.DefaultInactivity = 60 * time.Minute
	}
	if c.DefaultHard == 0 {
		c.DefaultHard = 720 * time.Minute
	}
	if c.AcceptWindow == 0 {
		c.AcceptWindow = 60 * time.Second
	}
	if c.PollInterval == 0 {
		c.PollInterval = 50 * time.Millisecond
	}
	if c.ScreenInterval == 0 {
		c.ScreenInterval = time.Second
	}
	if c.ScreenGap == 0 {
		c.ScreenGap = 200 * time.Millisecond
	}
	if c.ScreenConfirm == 0 {
		c.ScreenConfirm = 80 * time.Millisecond
	}
	if c.ScreenQuiet == 0 {
		c.ScreenQuiet = max(c.ScreenInterval, 5*time.Second)
	}
	if c.RecordSafety == 0 {
		c.RecordSafety = max(c.PollInterval, 2*c.ScreenInterval)
	}
}

// turns is the Turn machinery of a Service.
type turns struct {
	term   TurnTerminal
	redact Redactor
	cfg    TurnConfig

	lockMu sync.Mutex
	locks  map[string]*terminalLock // per terminal, while held or awaited

	// readErr: the monitor's last read of a Turn's record failed.
	readErrMu sync.Mutex
	readErr   map[string]bool

	monMu    sync.Mutex
	monCtx   context.Context
	monitors map[string]*monitorHandle // per turn
	monWG    sync.WaitGroup
}

// UseTurns wires the terminal side of Turns in.
func (s *Service) UseTurns(term TurnTerminal, redact Redactor, cfg TurnConfig) {
	cfg.defaults()
	s.turns = &turns{term: term, redact: redact, cfg: cfg, locks: map[string]*terminalLock{}, monitors: map[string]*monitorHandle{}, readErr: map[string]bool{}}
}

// setReadErr records whether the last read of a Turn's record failed.
func (tr *turns) setReadErr(id string, failed bool) {
	tr.readErrMu.Lock()
	defer tr.readErrMu.Unlock()
	if failed {
		tr.readErr[id] = true
	} else {
		delete(tr.readErr, id)
	}
}

func (tr *turns) readFailed(id string) bool {
	tr.readErrMu.Lock()
	defer tr.readErrMu.Unlock()
	return tr.readErr[id]
}

// lockTerminal takes the terminal lock. Lock order: terminal lock, then a
// store transaction; never the other way round.
func (tr *turns) lockTerminal(id string) func() {
	tr.lockMu.Lock()
	l, ok := tr.locks[id]
	if !ok {
		l = &terminalLock{}
		tr.locks[id] = l
	}
	l.refs++
	tr.lockMu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		tr.lockMu.Lock()
		if l.refs--; l.refs == 0 {
			delete(tr.locks, id) // the map holds only locks in use
		}
		tr.lockMu.Unlock()
	}
}

// terminalLock is one terminal's lock and how many callers hold or await it.
type terminalLock struct {
	mu   sync.Mutex
	refs int // guarded by turns.lockMu
}

// SendInput is a Send request.
type SendInput struct {
	TerminalID string `validate:"omitempty,max=100"`
	SessionID  string `validate:"omitempty,max=100"`
	// ConversationID names a backend conversation (Codex app-server).
	ConversationID     string `validate:"omitempty,max=200"`
	Request            string
	MessageID          string `validate:"omitempty,max=200"`
	InactivityMinutes  int    `validate:"omitempty,min=1,max=1440"`
	HardTimeoutMinutes int    `validate:"omitempty,min=1,max=10080"`
	// Identify: identify_and_send; the closed status probe, then the
	// dispatch, under one terminal lock (Codex).
	Identify bool
	// Model and ReasoningEffort: a backend conversation's model and
	// effort for this turn and the thread's later ones, from the daemon's
	// catalogue.
	Model           string `validate:"omitempty,max=80"`
	ReasoningEffort string `validate:"omitempty,max=40"`
}

// SendResult is what Send did.
type SendResult struct {
	Turn       Turn
	Watch      Watch // the Send's Watch ("" ID when it could not be stored)
	Warnings   []string
	Outcome    Outcome
	DoNotRetry bool
	Existing   bool // the idempotency key named an existing Turn; nothing was sent
	// ForegroundThreadID is what the identify probe read (provisional).
	ForegroundThreadID string
}

// MaxRequestBytes bounds a request's UTF-8 size (the terminal side passes
// it to tmux as one argument).
const MaxRequestBytes = 16 << 10

// normalizeRequest trims the white space the agents trim themselves, so the
// text AKK matches in the agent's record is the text it sent.
func normalizeRequest(req string) string { return strings.TrimSpace(req) }

// checkRequest applies the request rules that need no terminal.
func (tr *turns) checkRequest(req string) error {
	if strings.TrimSpace(req) == "" {
		return Invalid("request is empty", FieldError{Field: "request", Message: "must not be empty"})
	}
	if n := utf8.RuneCountInString(req); n > tr.cfg.MaxRequestRunes {
		return Invalid(fmt.Sprintf("request has %d characters; the limit is %d", n, tr.cfg.MaxRequestRunes),
			FieldError{Field: "request", Message: fmt.Sprintf("at most %d characters", tr.cfg.MaxRequestRunes)})
	}
	if !utf8.ValidString(req) {
		return Invalid("request is not valid UTF-8", FieldError{Field: "request", Message: "must be UTF-8"})
	}
	if len(req) > MaxRequestBytes {
		return Invalid(fmt.Sprintf("request has %d bytes; the limit is %d", len(req), MaxRequestBytes),
			FieldError{Field: "request", Message: fmt.Sprintf("at most %d bytes", MaxRequestBytes)})
	}
	for _, r := range req {
		// A tab becomes spaces in some agents and an escape could end the
		// bracketed paste: only printable text and newlines are sent.
		if r != '\n' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029') {
			return Invalid("request contains control characters", FieldError{Field: "request", Message: "only printable text and newlines"})
		}
	}
	first := strings.TrimSpace(strings.SplitN(strings.TrimLeft(req, " \t\n"), "\n", 2)[0])
	switch {
	case strings.HasPrefix(first, "/"):
		return E(CodeSlashCommandRejected, "the first line is a slash command; AKK sends tasks, not agent commands")
	case strings.HasPrefix(first, "!"):
		return E(CodeShellPrefixRejected, "the first line starts with !, which runs a shell command directly in the agent")
	}
	return nil
}

// Send dispatches a request to an agent terminal as a new Turn.
func (s *Service) Send(ctx context.Context, in SendInput) (SendResult, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return SendResult{}, err
	}
	tr := s.turns
	if tr == nil {
		return SendResult{}, E(CodeUnavailable, "turns are not configured")
	}
	if err := s.validate(in); err != nil {
		return SendResult{}, err
	}
	if in.TerminalID != "" && in.SessionID != "" {
		return SendResult{}, Invalid("give terminal_id or session_id, not both",
			FieldError{Field: "session_id", Message: "not together with terminal_id"})
	}
	if in.ConversationID != "" && (in.TerminalID != "" || in.SessionID != "" || in.Identify) {
		return SendResult{}, Invalid("conversation_id names a backend conversation: not together with terminal_id, session_id or identify",
			FieldError{Field: "conversation_id", Message: "alone, without terminal_id, session_id or identify"})
	}
	if in.ConversationID == "" && (in.Model != "" || in.ReasoningEffort != "") {
		field := "model"
		if in.Model == "" {
			field = "reasoning_effort"
		}
		return SendResult{}, Invalid("model and reasoning_effort choose a backend conversation's model: give them with conversation_id (a pane's model is set with set_model)",
			FieldError{Field: field, Message: "only with conversation_id"})
	}
	in.Request = normalizeRequest(in.Request)
	if err := tr.checkRequest(in.Request); err != nil {
		return SendResult{}, err
	}
	// Idempotency: the same key from the same owner returns the same Turn.
	if in.MessageID != "" {
		if t, err := s.turnByMessageID(ctx, p.HostID, in.MessageID); err == nil {
			return s.existing(ctx, t, in.Request)
		} else if !errors.Is(err, ErrNotFound) {
			return SendResult{}, err
		}
	}
	if in.ConversationID != "" {
		return s.sendBackend(ctx, p, in)
	}

	var session Session
	terminalID := in.TerminalID
	if in.SessionID != "" {
		session, err = s.store.Session(ctx, in.SessionID)
		if errors.Is(err, ErrNotFound) || (err == nil && !p.CanSeeHost(session.HostID)) {
			return SendResult{}, E(CodeSessionNotFound, "no session "+in.SessionID)
		}
		if err != nil {
			return SendResult{}, err
		}
		terminalID = session.TerminalID
	}
	if terminalID == "" {
		terminalID, err = s.onlySendReadyTerminal(ctx)
		if err != nil {
			return SendResult{}, err
		}
	}

	unlock := tr.lockTerminal(terminalID)
	defer unlock()
	// Under the lock: the key may have been taken meanwhile.
	if in.MessageID != "" {
		if t, err := s.turnByMessageID(ctx, p.HostID, in.MessageID); err == nil {
			return s.existing(ctx, t, in.Request)
		}
	}
	term, err := tr.term.Observe(ctx, terminalID)
	if errors.Is(err, ErrTerminalGone) {
		if session.ID != "" {
			return SendResult{}, E(CodeSessionTerminalGone, "the session's pane is gone or its agent restarted; list conversations and send to a terminal_id")
		}
		return SendResult{}, E(CodeTerminalNotFound, "no terminal "+terminalID+" (the pane closed or its agent restarted; list again)")
	}
	if err != nil {
		return SendResult{}, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	var current *Turn
	heldByOther := false
	if holding, err := s.holdingTurn(ctx, terminalID); err == nil {
		if p.CanSeeHost(holding.HostID) {
			current = &holding
		} else {
			heldByOther = true
		}
	} else if !errors.Is(err, ErrNotFound) {
		return SendResult{}, err
	}
	path, err := sendPath(term, current, heldByOther, in.TerminalID != "")
	if err != nil {
		return SendResult{}, err
	}
	foreground := ""
	if in.Identify {
		// identify_and_send: the probe and the dispatch under this one lock.
		if path != PathManaged || term.Agent.Kind != AgentCodex || s.native == nil || !term.Agent.Profiled() || term.Agent.Compatibility {
			return SendResult{}, E(CodeManualRequired, "identify is a Codex probe on an idle pane with an empty composer, on the version's own profile")
		}
		st, err := s.probe(ctx, p, term)
		if err != nil {
			return SendResult{}, err
		}
		if session.ID != "" && session.NativeThreadID != "" && st != session.NativeThreadID {
			return SendResult{}, E(CodeSessionThreadChanged, "the pane shows another native conversation than this session's; send to its terminal_id to start a new session")
		}
		foreground = st
		if term, err = tr.term.Observe(ctx, terminalID); err != nil || !term.SendReady() {
			return SendResult{}, E(CodeTerminalNotIdle, "the pane is not send-ready after the status probe; nothing of the task was typed")
		}
		session.NativeThreadID = "" // matched by the probe; the acceptance binds
	}
	if session.ID != "" {
		if err := sessionMatches(session, term); err != nil {
			if !s.probeable(session, term) || path != PathManaged {
				return SendResult{}, err
			}
			// Codex on a shared daemon: its records cannot name the pane's
			// thread, the closed status probe can (before any task text).
			if err := s.probeSession(ctx, p, session, term); err != nil {
				return SendResult{}, err
			}
			if term, err = tr.term.Observe(ctx, terminalID); err != nil || !term.SendReady() {
				return SendResult{}, E(CodeTerminalNotIdle, "the pane is not send-ready after the status probe; nothing of the task was typed")
			}
		}
	}
	clearer, _ := tr.term.(ComposerClearer)
	if !term.ComposerEmpty && clearer == nil {
		return SendResult{}, E(CodeTerminalNotIdle, "the composer holds text and this terminal cannot clear it")
	}
	mark, err := tr.term.Mark(ctx, term)
	if err != nil {
		return SendResult{}, &Error{Code: CodeUnavailable, Message: "could not read the agent's durable record", Err: err}
	}

	now := s.clock.Now().UTC()
	t := s.newTurn(p, in, terminalID, path, now)
	t.SessionID, t.Mark = session.ID, mark
	// Reserve durably before any input.
	err = s.store.InTx(ctx, func(tx Tx) error {
		if current != nil {
			// A broken Turn of the caller's (stalled or uncertain) cannot
			// veto the user's explicit Send: it is closed first.
			if err := s.supersede(ctx, tx, *current, t.ID, now); err != nil {
				return err
			}
		}
		if t.SessionID == "" {
			// Bound by the first accepted Turn's record (bindSession), not
			// by what the pane seemed to show before the request.
			session = Session{ID: s.ids.New("sess"), HostID: p.HostID, TerminalID: terminalID, CreatedAt: now, Revision: 1}
			if err := tx.InsertSession(ctx, session); err != nil {
				return err
			}
			t.SessionID = session.ID
		}
		return tx.InsertTurn(ctx, t)
	})
	if err != nil {
		return s.reserveFailed(ctx, p, in, err)
	}

	Failpoint("send.reserved")
	seq, done := s.keySequence(ctx)
	stage, subErr := SubmitNothing, error(nil)
	if !term.ComposerEmpty {
		// The user-explicit path: the draft goes with the profile's one
		// native clear (Claude Code's stash keeps it for the person).
		var pressed bool
		if pressed, subErr = clearer.ClearComposer(seq, term); pressed {
			stage = SubmitCleared
		}
		if subErr == nil {
			Failpoint("send.cleared")
		}
	}
	if subErr == nil {
		var st SubmitStage
		st, subErr = tr.term.Submit(seq, term, in.Request)
		if st != SubmitNothing || stage == SubmitNothing {
			stage = st
		}
	}
	done()
	if stage == SubmitEntered {
		Failpoint("send.entered")
	}
	res, err := s.afterSubmit(ctx, t, stage, subErr, false)
	res.ForegroundThreadID = foreground
	return s.withSendWatch(ctx, res, err)
}

// newTurn is the Turn a Send of in to endpoint reserves, with the caller's
// limits.
func (s *Service) newTurn(p Principal, in SendInput, endpoint string, path DeliveryPath, now time.Time) Turn {
	tr := s.turns
	t := Turn{
		ID: s.ids.New("turn"), HostID: p.HostID, Conversation: p.Conversation,
		TerminalID: endpoint, MessageID: in.MessageID, OriginalRequest: in.Request, Request: in.Request, State: TurnDispatching,
		SubmitStage: SubmitNothing, InactivityLimit: tr.cfg.DefaultInactivity, HardTimeout: tr.cfg.DefaultHard,
		DeliveryPath: path, CreatedAt: now, UpdatedAt: now, Revision: 1,
	}
	if in.InactivityMinutes > 0 {
		t.InactivityLimit = time.Duration(in.InactivityMinutes) * time.Minute
	}
	if in.HardTimeoutMinutes > 0 {
		t.HardTimeout = time.Duration(in.HardTimeoutMinutes) * time.Minute
	}
	return t
}

// reserveFailed answers a Send whose reservation failed: the Turn its key
// already names, the store's conflict, or the error.
func (s *Service) reserveFailed(ctx context.Context, p Principal, in SendInput, err error) (SendResult, error) {
	if in.MessageID != "" {
		if existing, e2 := s.turnByMessageID(ctx, p.HostID, in.MessageID); e2 == nil {
			return s.existing(ctx, existing, in.Request)
		}
	}
	var de *Error
	if errors.As(err, &de) && de.Code == CodeConflictActiveTurn {
		return SendResult{}, de // the store holds another Turn of this terminal
	}
	return SendResult{}, fmt.Errorf("reserve turn: %w", err)
}

// withSendWatch gives a dispatched Send its Watch: every Send has one, and
// storing it never undoes the Send.
func (s *Service) withSendWatch(ctx context.Context, res SendResult, err error) (SendResult, error) {
	if err != nil || res.Turn.ID == "" {
		return res, err
	}
	if w, err := s.attachSendWatch(ctx, res.Turn); err == nil {
		res.Watch = w
	} else {
		res.Warnings = append(res.Warnings, "the Turn was dispatched, but its Watch could not be stored; follow the Turn with its turn_id (its callbacks are unaffected)")
	}
	return res, nil
}

// supersede closes a broken Turn so a user-explicit Send may take its
// terminal, in the transaction that reserves the new Turn.
func (s *Service) supersede(ctx context.Context, tx Tx, old Turn, by string, now time.Time) error {
	cur, err := tx.Turn(ctx, old.ID)
	if err != nil {
		return err
	}
	if cur.Revision != old.Revision || !cur.State.HoldsTerminal() || cur.State.Active() {
		return ErrRevisionConflict // it moved since it was read; the caller retries the whole Send
	}
	cur.FailureReason = "closed while " + string(cur.State) + ": turn " + by + " was sent to its terminal (user-explicit send)"
	cur.State, cur.UpdatedAt, cur.EndedAt = TurnClosed, now, now
	if err := tx.UpdateTurn(ctx, cur); err != nil {
		return err
	}
	if err := s.syncSendWatch(ctx, tx, cur); err != nil {
		return err
	}
	_, err = s.emitTurnLocked(ctx, tx, cur, "turn.closed", false)
	return err
}

// afterSubmit records what a Submit did and starts monitoring. respond says
// whether this was a respond inside an existing Turn.
func (s *Service) afterSubmit(ctx context.Context, t Turn, stage SubmitStage, subErr error, respond bool) (SendResult, error) {
	ctx = context.WithoutCancel(ctx) // what happened to the pane must be recorded
	now := s.clock.Now().UTC()
	if stage == "" {
		stage = SubmitNothing
	}
	if stage == SubmitNothing {
		// Provably no input: undo the reservation, nothing was sent.
		err := s.store.InTx(ctx, func(tx Tx) error {
			if respond {
				cur, err := tx.Turn(ctx, t.ID)
				if err != nil {
					return err
				}
				cur.State, cur.UpdatedAt = TurnWaitingForHost, now
				return tx.UpdateTurn(ctx, cur)
			}
			return tx.DeleteTurn(ctx, t.ID)
		})
		if err != nil {
			return SendResult{}, err
		}
		msg := "the terminal changed before input; nothing was sent"
		if subErr != nil {
			msg += ": " + subErr.Error()
		}
		return SendResult{}, &Error{Code: CodeTerminalNotIdle, Message: msg, Err: subErr}
	}
	var res SendResult
	err := s.store.InTx(ctx, func(tx Tx) error {
		cur, err := tx.Turn(ctx, t.ID)
		if err != nil {
			return err
		}
		cur.SubmitStage, cur.UpdatedAt = stage, now
		if stage == SubmitEntered && subErr == nil {
			cur.LastActivityAt = now
			if _, err := s.emitTurnLocked(ctx, tx, cur, "turn.dispatched", false); err != nil {
				return err
			}
			res = SendResult{Outcome: OutcomeDone}
		} else {
			cur.State, cur.EndedAt = TurnDeliveryUncertain, now
			cur.FailureReason = "input reached the pane but its delivery is not proven (stage " + string(stage) + ")"
			if _, err := s.emitTurnLocked(ctx, tx, cur, "turn.delivery_uncertain", true); err != nil {
				return err
			}
			res = SendResult{Outcome: OutcomeUncertain, DoNotRetry: true}
		}
		if err := tx.UpdateTurn(ctx, cur); err != nil {
			return err
		}
		cur.Revision++
		res.Turn = cur
		return nil
	})
	if err != nil {
		return SendResult{}, err
	}
	if res.Turn.State.Monitored() {
		s.startMonitor(res.Turn.ID)
	}
	return res, nil
}

func (s *Service) existing(ctx context.Context, t Turn, request string) (SendResult, error) {
	original := t.OriginalRequest
	if original == "" {
		original = t.Request // a Turn stored before original_request existed
	}
	if original != request {
		return SendResult{}, E(CodeIdempotencyKeyReused, "message_id "+t.MessageID+" was used for a different request")
	}
	out := SendResult{Turn: t, Existing: true, Outcome: OutcomeDone}
	if w, err := s.store.WatchOfTurn(ctx, t.ID); err == nil {
		if out.Watch, err = s.projectWatch(ctx, w); err != nil {
			return SendResult{}, err
		}
	}
	if t.State == TurnDeliveryUncertain {
		out.Outcome, out.DoNotRetry = OutcomeUncertain, true
	}
	return out, nil
}

func (s *Service) turnByMessageID(ctx context.Context, hostID, messageID string) (Turn, error) {
	return s.store.TurnByMessageID(ctx, hostID, messageID)
}

func (s *Service) holdingTurn(ctx context.Context, terminalID string) (Turn, error) {
	return s.store.HoldingTurn(ctx, terminalID)
}

// sendReady is the rule for typing into a terminal on the managed path.
func sendReady(t Terminal) error {
	switch {
	case !t.Agent.Profiled():
		return E(CodeUnprofiledAgent, fmt.Sprintf("%s %s has no profile; AKK never types into it", t.Agent.Kind, t.Agent.Version))
	case t.ScreenState != ScreenIdle:
		return &Error{Code: CodeTerminalNotIdle, Message: "the terminal is " + string(t.ScreenState) + ", not idle"}
	case !t.ComposerEmpty:
		return E(CodeTerminalNotIdle, "the composer holds text someone typed; AKK will not overwrite it")
	}
	return nil
}

// sendPath decides how a Send may reach terminal t: current is the
// caller's Turn that holds t (nil when none), heldByOther says a Turn the
// caller may not see holds it, and explicit that the caller named t.
//
// The managed path needs an idle screen, an empty composer and no Turn
// holding t. When the caller named t, two things the managed path refuses
// cannot veto the user's Send (the user-explicit path): a draft in the
// composer (cleared once with the profile's native key) and a broken Turn
// of the caller's (stalled or uncertain; it is closed). Everything else
// still refuses before input: an unprofiled agent, another controller's
// Turn, a Turn still running, and any screen but the idle composer (a
// permission prompt, a questionnaire, a menu or viewer, a working task,
// or what AKK cannot read).
func sendPath(t Terminal, current *Turn, heldByOther, explicit bool) (DeliveryPath, error) {
	broken := current != nil && !current.State.Active()
	switch {
	case !t.Agent.Profiled():
		return "", E(CodeUnprofiledAgent, fmt.Sprintf("%s %s has no profile; AKK never types into it", t.Agent.Kind, t.Agent.Version))
	case heldByOther:
		return "", E(CodeConflictActiveTurn, "a Turn of another controller holds this terminal")
	case current != nil && !broken:
		return "", E(CodeConflictActiveTurn, "turn "+current.ID+" ("+string(current.State)+") still holds this terminal")
	case broken && !explicit:
		return "", E(CodeConflictActiveTurn, "turn "+current.ID+" ("+string(current.State)+") still holds this terminal; send with its terminal_id to take the terminal back, or close the turn")
	case t.ScreenState != ScreenIdle:
		return "", &Error{Code: CodeTerminalNotIdle, Message: "the terminal is " + string(t.ScreenState) + ", not idle"}
	case !t.ComposerEmpty && !explicit:
		return "", E(CodeTerminalNotIdle, "the composer holds text someone typed; send with the terminal_id to have AKK clear it once (Claude Code stashes it) before the request")
	case broken || !t.ComposerEmpty:
		return PathUserExplicit, nil
	}
	return PathManaged, nil
}

// sessionMatches refuses to follow a session to another native thread.
func sessionMatches(sess Session, t Terminal) error {
	if sess.NativeThreadID == "" {
		return nil // bound by the first accepted Turn; the terminal id is the same incarnation
	}
	switch {
	case t.NativeIdentity == IdentityResolved && t.NativeThreadID == sess.NativeThreadID:
		return nil
	case t.NativeIdentity == IdentityResolved:
		return E(CodeSessionThreadChanged, "the pane now shows another native conversation than this session's; send to its terminal_id to start a new session")
	}
	return E(CodeNativeIdentityUnproven, "AKK cannot prove the pane still shows this session's native conversation ("+string(t.NativeIdentity)+"); send to its terminal_id instead")
}

// probeable reports whether the closed status probe can prove that the
// pane shows sess's thread where the records cannot: a bound session on
// an exactly profiled Codex pane whose identity is ambiguous (threads in a
// shared daemon), send-ready.
func (s *Service) probeable(sess Session, t Terminal) bool {
	return s.native != nil && sess.NativeThreadID != "" && t.Agent.Kind == AgentCodex && t.Agent.Profiled() &&
		!t.Agent.Compatibility && t.NativeIdentity == IdentityAmbiguous && t.SendReady()
}

// probeSession runs the status probe once (the caller holds the terminal
// lock) and refuses unless the card names sess's thread.
func (s *Service) probeSession(ctx context.Context, p Principal, sess Session, t Terminal) error {
	st, err := s.probe(ctx, p, t)
	if err != nil {
		return err
	}
	if st != sess.NativeThreadID {
		return E(CodeSessionThreadChanged, "the pane shows another native conversation than this session's; send to its terminal_id to start a new session")
	}
	return nil
}

// probe runs the closed status probe once before a Send's text (the caller
// holds the terminal lock) and returns the thread it names. A probe that
// sent keys and proved nothing stops the Send before its text, never
// retried.
func (s *Service) probe(ctx context.Context, p Principal, t Terminal) (string, error) {
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := s.native.StatusCard(seq, t)
	if rerr := refusedBeforeInput(stage, err, "the status plan"); rerr != nil {
		return "", rerr
	}
	if err != nil || stage != AnswerVerified || st.NativeThreadID == "" {
		s.noteNativeUncertain(seq, p, t.ID, "send_identify", err)
		return "", E(CodeManualRequired, "the status probe sent keys and proved no thread ("+s.why(err)+"); nothing of the task was typed; look at the pane before sending again")
	}
	return st.NativeThreadID, nil
}

// onlySendReadyTerminal resolves a Send with no target.
func (s *Service) onlySendReadyTerminal(ctx context.Context) (string, error) {
	if s.terminals == nil {
		return "", E(CodeUnavailable, "terminal discovery is not configured")
	}
	ts, err := s.terminals.Discover(ctx)
	if err != nil {
		return "", &Error{Code: CodeUnavailable, Message: "terminal discovery failed", Err: err}
	}
	var ready []string
	for _, t := range ts {
		if t.SendReady() {
			if _, err := s.holdingTurn(ctx, t.ID); errors.Is(err, ErrNotFound) {
				ready = append(ready, t.ID)
			}
		}
	}
	switch len(ready) {
	case 1:
		return ready[0], nil
	case 0:
		return "", E(CodeNoSendReadyTerminal, "no send-ready terminal; give terminal_id or session_id")
	}
	return "", E(CodeAmbiguousTarget, fmt.Sprintf("%d terminals are send-ready; give terminal_id or session_id", len(ready)))
}
