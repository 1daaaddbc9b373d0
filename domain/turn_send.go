package domain

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Send dispatches a request to an agent terminal as a new Turn.
func (s *TurnCases) Send(ctx context.Context, in SendInput) (SendResult, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return SendResult{}, err
	}
	tr := s.turns
	if tr == nil {
		return SendResult{}, E(CodeUnavailable, "turns are not configured")
	}
	if err := s.checkSend(&in); err != nil {
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
		return s.threads.sendBackend(ctx, p, in)
	}

	session, terminalID, err := s.sendTarget(ctx, p, in)
	if err != nil {
		return SendResult{}, err
	}

	unlock := tr.lockTerminal(terminalID)
	defer unlock()
	// Under the lock: the key may have been taken meanwhile.
	if in.MessageID != "" {
		if t, err := s.turnByMessageID(ctx, p.HostID, in.MessageID); err == nil {
			return s.existing(ctx, t, in.Request)
		}
	}
	e := s.endpointOf(EndpointRef{Kind: EndpointPane, ID: terminalID})
	target, err := s.observeSendTarget(ctx, e, session, terminalID)
	if err != nil {
		return SendResult{}, err
	}
	current, heldByOther, err := s.holderOf(ctx, p, terminalID)
	if err != nil {
		return SendResult{}, err
	}
	path, err := sendPath(target.Term, current, heldByOther, in.TerminalID != "")
	if err != nil {
		return SendResult{}, err
	}
	target, foreground, err := s.proveSendTarget(ctx, p, in, &session, e, target, path)
	if err != nil {
		return SendResult{}, err
	}
	mark, err := e.PrepareSubmit(ctx, target, BackendTurnOptions{})
	if err != nil {
		return SendResult{}, err
	}

	now := s.clock.Now().UTC()
	t := s.newTurn(p, in, EndpointRef{Kind: EndpointPane, ID: terminalID}, path, now)
	t.SessionID, t.Mark = session.ID, mark
	// Reserve durably before any input.
	if err := s.reserveTurn(ctx, p, &t, current, now); err != nil {
		return s.reserveFailed(ctx, p, in, err)
	}
	logSend(t, len(in.Request))
	res, err := s.submitReserved(ctx, t, target, in.Request, BackendTurnOptions{})
	res.ForegroundThreadID = foreground
	return s.withSendWatch(ctx, res, err)
}

// observeSendTarget observes, through its endpoint, the pane a Send goes
// to.
func (s *TurnCases) observeSendTarget(ctx context.Context, e Endpoint, session Session, terminalID string) (EndpointTarget, error) {
	target, err := e.SendTarget(ctx, terminalID)
	var de *Error
	if session.ID != "" && errors.As(err, &de) && de.Code == CodeTerminalNotFound {
		return EndpointTarget{}, E(CodeSessionTerminalGone, "the session's pane is gone or its agent restarted; list conversations and send to a terminal_id")
	}
	return target, err
}

// holderOf is the Turn that holds the terminal: the caller's (current), or
// another host's (heldByOther, its Turn not shown).
func (s *TurnCases) holderOf(ctx context.Context, p Principal, terminalID string) (current *Turn, heldByOther bool, err error) {
	holding, err := s.holdingTurn(ctx, terminalID)
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if p.CanSeeHost(holding.HostID) {
		return &holding, false, nil
	}
	return nil, true, nil
}

// reserveTurn stores t before any input, in one transaction with closing
// the caller's broken Turn it supersedes and, for a Send to a terminal,
// the new session t opens.
func (s *TurnCases) reserveTurn(ctx context.Context, p Principal, t *Turn, current *Turn, now time.Time) error {
	return s.store.InTx(ctx, func(tx Tx) error {
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
			session := Session{ID: s.ids.New("sess"), HostID: p.HostID, TerminalID: t.TerminalID, CreatedAt: now, Revision: 1}
			if err := tx.InsertSession(ctx, session); err != nil {
				return err
			}
			t.SessionID = session.ID
		}
		return tx.InsertTurn(ctx, *t)
	})
}

// checkSend validates a Send's input and normalizes its request.
func (s *TurnCases) checkSend(in *SendInput) error {
	if err := s.validate(*in); err != nil {
		return err
	}
	if in.TerminalID != "" && in.SessionID != "" {
		return Invalid("give terminal_id or session_id, not both",
			FieldError{Field: "session_id", Message: "not together with terminal_id"})
	}
	if in.ConversationID != "" && (in.TerminalID != "" || in.SessionID != "" || in.Identify) {
		return Invalid("conversation_id names a backend conversation: not together with terminal_id, session_id or identify",
			FieldError{Field: "conversation_id", Message: "alone, without terminal_id, session_id or identify"})
	}
	if in.ConversationID == "" && (in.Model != "" || in.ReasoningEffort != "") {
		field := "model"
		if in.Model == "" {
			field = "reasoning_effort"
		}
		return Invalid("model and reasoning_effort choose a backend conversation's model: give them with conversation_id (a pane's model is set with set_model)",
			FieldError{Field: field, Message: "only with conversation_id"})
	}
	in.Request = normalizeRequest(in.Request)
	return s.turns.checkRequest(in.Request)
}

// sendTarget is the terminal a pane Send goes to: the one named, the
// Session's, or the only send-ready one; and the Session named, if any.
func (s *TurnCases) sendTarget(ctx context.Context, p Principal, in SendInput) (Session, string, error) {
	var session Session
	terminalID := in.TerminalID
	if in.SessionID != "" {
		var err error
		session, err = s.store.Session(ctx, in.SessionID)
		if errors.Is(err, ErrNotFound) || (err == nil && !p.CanSeeHost(session.HostID)) {
			return Session{}, "", E(CodeSessionNotFound, "no session "+in.SessionID)
		}
		if err != nil {
			return Session{}, "", err
		}
		terminalID = session.TerminalID
	}
	if terminalID == "" {
		id, err := s.onlySendReadyTerminal(ctx)
		if err != nil {
			return Session{}, "", err
		}
		terminalID = id
	}
	return session, terminalID, nil
}

// proveSendTarget runs, under the terminal's lock, the closed status probe
// a Send needs before any task text: identify_and_send's, or the one that
// proves a Session's thread on a shared Codex daemon. It returns the pane
// observed again after a probe and the foreground thread identify read.
func (s *TurnCases) proveSendTarget(ctx context.Context, p Principal, in SendInput, session *Session, e Endpoint, target EndpointTarget, path DeliveryPath) (EndpointTarget, string, error) {
	term, foreground := target.Term, ""
	if in.Identify {
		// identify_and_send: the probe and the dispatch under this one lock.
		if path != PathManaged || !term.Agent.ThreadProbe || s.nat.native == nil || !term.Agent.Profiled() || term.Agent.Compatibility {
			return target, "", E(CodeManualRequired, "identify is a Codex probe on an idle pane with an empty composer, on the version's own profile")
		}
		st, err := s.probe(ctx, p, term)
		if err != nil {
			return target, "", err
		}
		if session.ID != "" && session.NativeThreadID != "" && st != session.NativeThreadID {
			return target, "", E(CodeSessionThreadChanged, "the pane shows another native conversation than this session's; send to its terminal_id to start a new session")
		}
		foreground = st
		if target, err = e.SendTarget(ctx, term.ID); err != nil || !target.Term.SendReady() {
			return target, "", E(CodeTerminalNotIdle, "the pane is not send-ready after the status probe; nothing of the task was typed")
		}
		term = target.Term
		session.NativeThreadID = "" // matched by the probe; the acceptance binds
	}
	if session.ID == "" {
		return target, foreground, nil
	}
	if err := sessionMatches(*session, term); err != nil {
		if !s.nat.probeable(*session, term) || path != PathManaged {
			return target, "", err
		}
		// Codex on a shared daemon: its records cannot name the pane's
		// thread, the closed status probe can (before any task text).
		if err := s.probeSession(ctx, p, *session, term); err != nil {
			return target, "", err
		}
		if target, err = e.SendTarget(ctx, term.ID); err != nil || !target.Term.SendReady() {
			return target, "", E(CodeTerminalNotIdle, "the pane is not send-ready after the status probe; nothing of the task was typed")
		}
	}
	return target, foreground, nil
}

// probeSession runs the status probe once (the caller holds the terminal
// lock) and refuses unless the card names sess's thread.
func (s *TurnCases) probeSession(ctx context.Context, p Principal, sess Session, t Terminal) error {
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
func (s *TurnCases) probe(ctx context.Context, p Principal, t Terminal) (string, error) {
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := s.nat.native.StatusCard(seq, t)
	if rerr := refusedBeforeInput(stage, err, "the status plan"); rerr != nil {
		return "", rerr
	}
	if err != nil || stage != AnswerVerified || st.NativeThreadID == "" {
		s.nat.noteNativeUncertain(seq, p, t.ID, "send_identify", err)
		return "", E(CodeManualRequired, "the status probe sent keys and proved no thread ("+s.nat.why(err)+"); nothing of the task was typed; look at the pane before sending again")
	}
	return st.NativeThreadID, nil
}

// onlySendReadyTerminal resolves a Send with no target.
func (s *TurnCases) onlySendReadyTerminal(ctx context.Context) (string, error) {
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
