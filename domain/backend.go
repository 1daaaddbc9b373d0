package domain

import (
	"context"
	"errors"
)

// The Codex backend: a Codex TUI of 0.158.0 and later hands its threads to
// a managed app-server daemon (one per CODEX_HOME). AKK reaches that
// daemon as one more client and drives a thread through it: the request
// is a structured turn/start, never a keystroke, and the daemon itself
// says when the turn starts and ends. A pane that shows the thread shows
// the turn as if it were typed there.

// backendConversationOf is the row of a backend thread: its Turns (the one
// holding it, the caller's latest) and the actions they allow.
func (s *ThreadCases) backendConversationOf(ctx context.Context, p Principal, th BackendThread, watches []Watch, recent map[EndpointRef][]Turn) (Conversation, error) {
	bt := th
	ref := EndpointRef{Kind: th.Kind, ID: th.ThreadID}
	c := Conversation{ID: ref.ConversationID(), Endpoint: ref, Backend: &bt, Actions: []Action{}, Watches: []Watch{}}
	if s.turns == nil {
		return c, nil
	}
	held := c.turnsOf(p, recent[ref])
	if !held && th.Status == BackendIdle {
		a := act("send", OnTurns, "", map[string]any{"conversation_id": c.ID}, "request")
		a.Target = TargetSession
		c.Actions = append(c.Actions, a)
	}
	// A turn a person or another client started: watched through the
	// daemon, exactly.
	endpoint := ref.String()
	if s.watches.watchTerm != nil && !held && th.Status == BackendActive {
		c.Actions = append(c.Actions, act("watch", OnWatches, "", map[string]any{"terminal_id": endpoint}))
	}
	// The daemon's model catalogue, read with no input.
	if th.Status == BackendIdle || th.Status == BackendActive {
		c.Actions = append(c.Actions, act("model_options", OnTerminal, endpoint, nil))
	}
	for _, w := range watches {
		if w.TerminalID == endpoint && p.CanSeeHost(w.HostID) {
			c.Watches = append(c.Watches, w)
			c.Actions = append(c.Actions, act("status", OnWatch, w.ID, nil),
				act("unwatch", OnWatch, w.ID, nil))
		}
	}
	if err := s.list.addTurnActions(ctx, &c); err != nil {
		return c, err
	}
	// The question the daemon waits on: answered with its projection's ids.
	if cur := c.CurrentTurn; cur != nil && cur.State == TurnAwaitingInteraction {
		if in, err := s.ic.TurnInteraction(ctx, cur.ID); err == nil && !in.ManualRequired && in.InteractionID != "" {
			c.Actions = append(c.Actions, act("respond_interaction", OnTurn, cur.ID,
				map[string]any{"interaction_id": in.InteractionID}, "answers"))
		}
	}
	// The command approval the daemon waits on, offered to the Turn's owner.
	if cur := c.CurrentTurn; cur != nil && cur.State == TurnAwaitingApproval {
		c.Approval, _ = s.ac.offerOf(ctx, p, *cur)
		if c.Approval != nil && !c.Approval.ManualRequired {
			for _, d := range c.Approval.Decisions {
				c.Actions = append(c.Actions, act("approve", OnTurn, cur.ID, map[string]any{"decision": string(d)}))
			}
		}
	}
	return c, nil
}

// sendBackend sends a request to a backend conversation's thread through
// its daemon: reserved durably first, one turn/start, never retried.
func (s *ThreadCases) sendBackend(ctx context.Context, p Principal, in SendInput) (SendResult, error) {
	tr := s.turns
	ref, ok := conversationThread(in.ConversationID)
	if !ok {
		return SendResult{}, E(CodeConversationNotFound, "conversation "+in.ConversationID+" is not a thread's conversation; send to a terminal with terminal_id")
	}
	tt, ok := s.threadsOf(ref.Kind)
	if !ok {
		return SendResult{}, E(CodeConversationNotFound, "conversation "+in.ConversationID+": no "+string(ref.Kind)+" transport is configured")
	}
	threadID, endpoint := ref.ID, ref.String()
	unlock := tr.lockTerminal(endpoint)
	defer unlock()
	if in.MessageID != "" {
		if t, err := s.sends.turnByMessageID(ctx, p.HostID, in.MessageID); err == nil {
			return s.sends.existing(ctx, t, in.Request)
		}
	}
	e := s.endpoints.of(ref)
	target, err := e.SendTarget(ctx, threadID)
	if err != nil {
		return SendResult{}, err
	}
	if holding, err := s.holdingTurn(ctx, endpoint); err == nil {
		return SendResult{}, E(CodeConflictActiveTurn, "turn "+visibleID(p, holding)+" holds this thread; wait for it, or close it")
	} else if !errors.Is(err, ErrNotFound) {
		return SendResult{}, err
	}
	if st := target.Thread.Status; st != BackendIdle {
		return SendResult{}, E(CodeThreadNotIdle, "the thread is "+st+", not idle (a turn runs); nothing was sent")
	}
	opts := BackendTurnOptions{Model: in.Model, Effort: in.ReasoningEffort}
	mark, err := e.PrepareSubmit(ctx, target, opts)
	if err != nil {
		return SendResult{}, err
	}
	now := s.clock.Now().UTC()
	t := s.sends.newTurn(p, in, ref, tt.Path, now)
	t.NativeThreadID, t.Mark = threadID, mark
	err = s.store.InTx(ctx, func(tx Tx) error {
		// The session is bound to the thread from the start: the daemon
		// names it exactly.
		session := Session{ID: s.ids.New("sess"), HostID: p.HostID, TerminalID: endpoint, NativeThreadID: threadID, CreatedAt: now, Revision: 1}
		if err := tx.InsertSession(ctx, session); err != nil {
			return err
		}
		t.SessionID = session.ID
		return tx.InsertTurn(ctx, t)
	})
	if err != nil {
		return s.sends.reserveFailed(ctx, p, in, err)
	}
	logSend(t, len(in.Request))
	res, err := s.sends.submitReserved(ctx, t, target, in.Request, opts)
	return s.sends.withSendWatch(ctx, res, err)
}

// visibleID names a Turn to a caller who may see it, else says only that
// another controller holds it.
func visibleID(p Principal, t Turn) string {
	if p.CanSeeHost(t.HostID) {
		return t.ID
	}
	return "of another controller"
}
