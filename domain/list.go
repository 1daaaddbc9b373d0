package domain

import (
	"context"
	"sync"
	"time"
)

// ListCases list what the caller can see, observed now: each agent pane
// and Codex thread as a conversation row with the actions its state
// allows, and the caller's Turns whose endpoint is gone. They send no
// input, and hold only their ports.
type ListCases struct {
	basics
	terminals  Terminals
	turns      *turns        // the panes' channels and dialogs (UsePanes)
	watchTerm  WatchTerminal // the panes' (UsePanes)
	ledger     *turnLedger
	nat        *NativeCases
	ic         *InteractionCases
	ac         *ApprovalCases
	threadRows threadRows

	// promptsSeen is, per terminal, the prompt a listing last saw waiting
	// (no Turn holding the pane) and since when: this daemon's first
	// sight, the best there is for a prompt AKK did not cause.
	seenMu      sync.Mutex
	promptsSeen map[string]seenPrompt
}

// threadRows are the rows of the Codex threads a daemon lists.
type threadRows interface {
	backendThreads(ctx context.Context, ts []Terminal) []BackendThread
	backendConversationOf(ctx context.Context, p Principal, th BackendThread, watches []Watch, recent map[EndpointRef][]Turn) (Conversation, error)
}

// turnActions are the actions the state of a Turn the caller owns allows;
// live says whether its pane is there.
func (s *ListCases) turnActions(ctx context.Context, t Turn, live bool) ([]Action, error) {
	out := []Action{act("status", OnTurn, t.ID, nil)}
	switch t.State {
	case TurnWaitingForHost:
		if live {
			out = append(out, act("respond", OnTurn, t.ID, map[string]any{}, "request"))
		}
	}
	if live && cancellable(t) {
		out = append(out, act("cancel", OnTurn, t.ID, nil))
	}
	if live && t.State == TurnStalled && !s.clock.Now().After(t.HardDeadline()) {
		out = append(out, act("renew", OnTurn, t.ID, nil))
	}
	if live && (t.State == TurnStalled || t.State == TurnDeliveryUncertain || t.State == TurnResponseUncertain) {
		out = append(out, act("recover", OnTurn, t.ID, nil))
	}
	if t.State.HoldsTerminal() {
		out = append(out, act("close", OnTurn, t.ID, map[string]any{}))
	}
	rc, err := s.retryActions(ctx, OnTurn, t.ID)
	if err != nil {
		return nil, err
	}
	return append(out, rc...), nil
}

// cancellable mirrors Cancel's state rule.
func cancellable(t Turn) bool {
	if t.CancelRequested {
		return false
	}
	switch t.State {
	case TurnWorking, TurnAwaitingApproval, TurnAwaitingInteraction:
		return true
	case TurnDispatching:
		return t.SubmitStage == SubmitEntered
	}
	return false
}

// retryActions offers one retry_callback per failed notification of a
// record, each naming its notification: with several, the caller chooses.
func (s *ListCases) retryActions(ctx context.Context, on ActionOn, subject string) ([]Action, error) {
	ns, err := s.store.NotificationsAbout(ctx, subject)
	if err != nil {
		return nil, err
	}
	var out []Action
	for _, n := range ns {
		if n.State == NotificationFailed {
			out = append(out, act("retry_callback", on, subject, map[string]any{"notification_id": n.ID}))
		}
	}
	return out, nil
}

// conversationOf builds t's row; recent holds the newest Turns of every
// listed terminal (RecentTurnsOf), read once for the whole list.
func (s *ListCases) conversationOf(ctx context.Context, p Principal, t Terminal, watches []Watch, recent map[EndpointRef][]Turn) (Conversation, error) {
	ref := EndpointRef{Kind: EndpointPane, ID: t.ID}
	c := Conversation{ID: ref.ConversationID(), Endpoint: ref, Terminal: t, Actions: []Action{}, Watches: []Watch{}}
	c.Terminal.Channels = s.channelsOf(t)
	if s.turns == nil {
		return c, nil
	}
	held := c.turnsOf(p, recent[ref])
	c.Actions = append(c.Actions, s.sendActions(ctx, c, t, held)...)
	if s.nat.threads != nil && t.Agent.Profiled() {
		c.Actions = append(c.Actions, act("threads", OnTerminal, t.ID, nil))
	}
	c.Actions = append(c.Actions, s.nat.nativeActions(ctx, t, held)...)
	if s.watchTerm != nil && t.Watchable() && !held {
		body := map[string]any{"terminal_id": t.ID}
		if s.nat.native != nil && t.Agent.ThreadProbe && t.Agent.Profiled() && !t.Agent.Compatibility &&
			t.NativeIdentity == IdentityAmbiguous && t.ScreenState == ScreenWorking && t.ComposerEmpty {
			// The records cannot say which task is this pane's: the closed
			// status probe can (the Watch types it once).
			body["identify"] = true
		}
		c.Actions = append(c.Actions, act("watch", OnWatches, "", body))
	}
	for _, w := range watches {
		if w.TerminalID == t.ID && p.CanSeeHost(w.HostID) {
			c.Watches = append(c.Watches, w)
			c.Actions = append(c.Actions, act("status", OnWatch, w.ID, nil),
				act("unwatch", OnWatch, w.ID, nil))
		}
	}
	if err := s.addTurnActions(ctx, &c); err != nil {
		return c, err
	}
	// A questionnaire, or an async question asked while the Turn works on.
	if cur := c.CurrentTurn; cur != nil && s.ic.endpoints.of(cur.Endpoint).Configured(UseInteractions) == nil &&
		(cur.State == TurnAwaitingInteraction || (cur.State == TurnWorking && t.AsyncQuestion)) {
		if in, err := s.ic.TurnInteraction(ctx, cur.ID); err == nil && !in.ManualRequired && in.InteractionID != "" {
			c.Actions = append(c.Actions, act("respond_interaction", OnTurn, cur.ID,
				map[string]any{"interaction_id": in.InteractionID}, "answers"))
		}
	}
	s.addApproval(ctx, p, t, &c)
	return c, nil
}

// sendActions are the sends a row offers: the managed path (idle, empty
// composer, no Turn holds the pane), or the user-explicit path Send would
// take for this terminal; and to the caller's Session when it matches.
func (s *ListCases) sendActions(ctx context.Context, c Conversation, t Terminal, held bool) []Action {
	if _, err := sendPath(t, c.CurrentTurn, c.HeldByOther, true); err != nil {
		return nil
	}
	a := act("send", OnTurns, "", map[string]any{"terminal_id": t.ID}, "request")
	a.Target = TargetTerminal
	out := []Action{a}
	if c.SessionID == "" || held {
		return out
	}
	session, err := s.store.Session(ctx, c.SessionID)
	if err == nil && session.NativeThreadID != "" && (sessionMatches(session, t) == nil || s.nat.probeable(session, t)) {
		a := act("send", OnTurns, "", map[string]any{"session_id": session.ID}, "request")
		a.Target = TargetSession
		out = append(out, a)
	}
	return out
}

// addApproval offers a permission prompt to the owner of the Turn that
// holds the pane, or to anyone when no Turn holds it.
func (s *ListCases) addApproval(ctx context.Context, p Principal, t Terminal, c *Conversation) {
	if t.ScreenState != ScreenAwaitingApproval || c.HeldByOther {
		s.promptSeenAt(t.ID, "")
		return
	}
	turnID, on, id := "", OnTerminal, t.ID
	if c.CurrentTurn != nil {
		turnID, on, id = c.CurrentTurn.ID, OnTurn, c.CurrentTurn.ID
	}
	if c.CurrentTurn != nil && c.CurrentTurn.State != TurnAwaitingApproval {
		return
	}
	av, err := s.ac.offerApproval(ctx, p, t, turnID)
	if err != nil {
		// One pane whose prompt cannot be read degrades its own row,
		// never the list.
		av = unreadablePrompt(err)
		c.Terminal.Warnings = append(c.Terminal.Warnings, av.Reason)
	}
	if av != nil {
		if c.CurrentTurn != nil {
			av.WaitingSince = c.WaitingSince
		} else {
			av.WaitingSince = s.promptSeenAt(t.ID, av.PromptKind+"\x00"+av.Tool+"\x00"+av.CommandExcerpt)
		}
	}
	c.Approval = av
	if av != nil && !av.ManualRequired {
		// One action per decision: each body is complete as given.
		for _, d := range av.Decisions {
			c.Actions = append(c.Actions, act("approve", on, id, map[string]any{"decision": string(d)}))
		}
	}
}

// addTurnActions adds the actions of the row's Turns (the one holding its
// endpoint, the caller's latest ended one).
func (s *ListCases) addTurnActions(ctx context.Context, c *Conversation) error {
	if c.CurrentTurn != nil {
		c.WaitingSince = s.waitingSince(ctx, *c.CurrentTurn)
	}
	for _, x := range []*Turn{c.CurrentTurn, c.RecentTurn} {
		if x == nil {
			continue
		}
		as, err := s.turnActions(ctx, *x, true)
		if err != nil {
			return err
		}
		c.Actions = append(c.Actions, as...)
	}
	return nil
}

// recentPerTerminal is how many of a terminal's newest Turns its row reads
// (the one that holds it, the caller's latest ended one, its session).
const recentPerTerminal = 20

// List lists every agent terminal, observed now, and the caller's Turns
// that need attention while their pane is gone. It sends no input.
func (s *ListCases) List(ctx context.Context) (ConversationList, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return ConversationList{}, err
	}
	if s.terminals == nil {
		return ConversationList{}, E(CodeUnavailable, "terminal discovery is not configured")
	}
	ts, err := s.terminals.Discover(ctx)
	if err != nil {
		return ConversationList{}, &Error{Code: CodeUnavailable, Message: "terminal discovery failed", Err: err}
	}
	watches, err := s.visibleWatches(ctx, p)
	if err != nil {
		return ConversationList{}, err
	}
	threads := s.threadRows.backendThreads(ctx, ts)
	out := ConversationList{Conversations: make([]Conversation, 0, len(ts)+len(threads)), Unavailable: []UnavailableTurn{}}
	var recent map[EndpointRef][]Turn
	if s.turns != nil {
		eps := make([]EndpointRef, 0, len(ts)+len(threads))
		for _, t := range ts {
			eps = append(eps, EndpointRef{Kind: EndpointPane, ID: t.ID})
		}
		for _, th := range threads {
			eps = append(eps, EndpointRef{Kind: th.Kind, ID: th.ThreadID})
		}
		if recent, err = s.store.RecentTurnsOf(ctx, eps, recentPerTerminal); err != nil {
			return ConversationList{}, err
		}
	}
	live := map[string]bool{}
	panes := map[string]int{} // index in out.Conversations, by terminal id
	for _, t := range ts {
		live[t.ID] = true
		if dr, ok := s.dialogReader(); ok && t.ScreenState == ScreenStartupDialog {
			t.DialogQuestion, _ = dr.DialogQuestion(ctx, t)
		}
		c, err := s.conversationOf(ctx, p, t, watches, recent)
		if err != nil {
			return ConversationList{}, err
		}
		panes[t.ID] = len(out.Conversations)
		out.Conversations = append(out.Conversations, c)
	}
	// A backend thread is its own row, merged with a pane's row only when
	// that pane is proven to show exactly it (never by project or title).
	for _, th := range threads {
		live[EndpointRef{Kind: th.Kind, ID: th.ThreadID}.String()] = true
		c, err := s.threadRows.backendConversationOf(ctx, p, th, watches, recent)
		if err != nil {
			return ConversationList{}, err
		}
		if i, ok := panes[th.PaneTerminalID]; ok && th.PaneTerminalID != "" {
			out.Conversations[i] = mergePane(out.Conversations[i], c)
			delete(panes, th.PaneTerminalID) // one thread per pane's row
			continue
		}
		out.Conversations = append(out.Conversations, c)
	}
	if s.turns == nil {
		return out, nil
	}
	holding, err := s.store.Turns(ctx, TurnFilter{HostID: p.HostID, All: p.Operator, Holding: true, Limit: 500})
	if err != nil {
		return ConversationList{}, err
	}
	for _, t := range holding {
		if live[t.TerminalID] {
			continue
		}
		as, err := s.turnActions(ctx, t, false)
		if err != nil {
			return ConversationList{}, err
		}
		out.Unavailable = append(out.Unavailable, UnavailableTurn{Turn: t, Actions: as})
	}
	return out, nil
}

// visibleWatches are the active Watches the caller may see, as their
// status reads now.
func (s *ListCases) visibleWatches(ctx context.Context, p Principal) ([]Watch, error) {
	all, err := s.store.ActiveWatches(ctx)
	if err != nil {
		return nil, err
	}
	var out []Watch
	for _, w := range all {
		if !p.CanSeeHost(w.HostID) {
			continue
		}
		if w, err = s.ledger.projectWatch(ctx, w); err != nil {
			return nil, err
		}
		if w.State == WatchActive {
			out = append(out, w)
		}
	}
	return out, nil
}

// Conversations lists every agent terminal, observed now.
func (s *ListCases) Conversations(ctx context.Context) ([]Conversation, error) {
	l, err := s.List(ctx)
	return l.Conversations, err
}

// Conversation returns one conversation, observed now.
func (s *ListCases) Conversation(ctx context.Context, id string) (Conversation, error) {
	all, err := s.Conversations(ctx)
	if err != nil {
		return Conversation{}, err
	}
	for _, c := range all {
		// A merged row answers to its pane's conversation id too.
		if c.ID == id || (c.PaneID != "" && c.PaneID == id) {
			return c, nil
		}
	}
	return Conversation{}, E(CodeConversationNotFound, "no conversation "+id+" (the pane closed or its agent restarted; list again)")
}

// channelsOf is how AKK would answer a prompt or a question on t's pane.
func (s *ListCases) channelsOf(t Terminal) TerminalChannels {
	if s.turns != nil {
		if cr, ok := s.turns.term.(ChannelReader); ok {
			return cr.Channels(t)
		}
	}
	if t.Agent.Profiled() && !t.Agent.Compatibility {
		return TerminalChannels{Permission: ChannelScreen, Question: ChannelScreen}
	}
	return TerminalChannels{Permission: ChannelNone, Question: ChannelNone}
}

// dialogReader is the pane adapter's reader of start-up dialogs, when it
// has one.
func (s *ListCases) dialogReader() (DialogReader, bool) {
	if s.turns == nil {
		return nil, false
	}
	dr, ok := s.turns.term.(DialogReader)
	return dr, ok
}

type seenPrompt struct {
	key string
	at  time.Time
}

// promptSeenAt is when the prompt key of terminal id was first seen
// waiting, now when it is new; key "" forgets the terminal's.
func (s *ListCases) promptSeenAt(id, key string) time.Time {
	s.seenMu.Lock()
	defer s.seenMu.Unlock()
	if key == "" {
		delete(s.promptsSeen, id)
		return time.Time{}
	}
	if s.promptsSeen == nil {
		s.promptsSeen = map[string]seenPrompt{}
	}
	if p, ok := s.promptsSeen[id]; ok && p.key == key {
		return p.at
	}
	now := s.clock.Now().UTC()
	s.promptsSeen[id] = seenPrompt{key: key, at: now}
	return now
}
