package domain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Conversation is one agent terminal as a controller sees it: what AKK can
// prove about it now and the actions it may take.
type Conversation struct {
	ID       string
	Terminal Terminal
	// Backend is set (and Terminal zero) for a thread of a Codex
	// app-server daemon, driven through the daemon.
	Backend *BackendThread
	Actions []Action
	// SessionID is the caller's AKK session on this terminal, if any.
	SessionID string
	// CurrentTurn holds the terminal now; RecentTurn is the caller's latest
	// ended Turn there. Only Turns the caller may see are shown.
	CurrentTurn, RecentTurn *Turn
	// HeldByOther: a Turn the caller may not see holds the terminal.
	HeldByOther bool
	// Approval is the permission prompt the pane shows, offered to the caller.
	Approval *ApprovalView
	// Watches are the caller's active Watches of this terminal.
	Watches []Watch
}

// Action is one call a controller may make now, with its semantic ids
// prefilled. It is the only authority for what may be called.
type Action struct {
	Name   string
	Method string
	Path   string
	// Body is the request body with its semantic ids prefilled; nil when
	// the route takes none. As given it satisfies the contract, apart from
	// the user content Input names.
	Body map[string]any
	// Input names the user content the caller adds to Body (e.g. request).
	Input []string
	// Target says what a send follows: "terminal_follow_current" (whatever
	// conversation the pane shows now) or "session_exact" (only the native
	// conversation of the caller's session).
	Target string
}

// Send targets.
const (
	TargetTerminal = "terminal_follow_current"
	TargetSession  = "session_exact"
)

// UnavailableTurn is a Turn of the caller that still needs attention while
// its pane is gone: only record-side actions remain.
type UnavailableTurn struct {
	Turn    Turn
	Actions []Action
}

// ConversationList is what List shows.
type ConversationList struct {
	Conversations []Conversation
	Unavailable   []UnavailableTurn
}

// ConversationIDFor is the conversation id of a terminal: as stable as the
// terminal id itself.
func ConversationIDFor(terminalID string) string {
	return "conv_" + strings.TrimPrefix(terminalID, "term_")
}

// Terminals are the ports conversations and the doctor read.
type Terminals interface {
	TerminalDiscovery
	TerminalDiagnostics
}

// UseTerminals wires terminal discovery in.
func (s *Service) UseTerminals(t Terminals) { s.terminals = t }

func turnPath(id, rest string) string { return "/v1/turns/" + id + rest }

func act(name, method, path string, body map[string]any, input ...string) Action {
	return Action{Name: name, Method: method, Path: path, Body: body, Input: input}
}

// turnActions are the actions the state of a Turn the caller owns allows;
// live says whether its pane is there.
func (s *Service) turnActions(ctx context.Context, t Turn, live bool) ([]Action, error) {
	out := []Action{act("status", "GET", turnPath(t.ID, ""), nil)}
	switch t.State {
	case TurnWaitingForHost:
		if live {
			out = append(out, act("respond", "POST", turnPath(t.ID, "/respond"), map[string]any{}, "request"))
		}
	}
	if live && s.turnCancellable(t) {
		out = append(out, act("cancel", "POST", turnPath(t.ID, "/cancel"), nil))
	}
	if live && t.State == TurnStalled && !s.clock.Now().After(t.HardDeadline()) {
		out = append(out, act("renew", "POST", turnPath(t.ID, "/renew"), nil))
	}
	if live && (t.State == TurnStalled || t.State == TurnDeliveryUncertain || t.State == TurnResponseUncertain) {
		out = append(out, act("recover", "POST", turnPath(t.ID, "/recover"), nil))
	}
	if t.State.HoldsTerminal() {
		out = append(out, act("close", "POST", turnPath(t.ID, "/close"), map[string]any{}))
	}
	rc, err := s.retryActions(ctx, t.ID, turnPath(t.ID, "/retry-callback"))
	if err != nil {
		return nil, err
	}
	return append(out, rc...), nil
}

// turnCancellable mirrors Cancel's state rule.
func (s *Service) turnCancellable(t Turn) bool {
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
func (s *Service) retryActions(ctx context.Context, subject, path string) ([]Action, error) {
	ns, err := s.store.NotificationsAbout(ctx, subject)
	if err != nil {
		return nil, err
	}
	var out []Action
	for _, n := range ns {
		if n.State == NotificationFailed {
			out = append(out, act("retry_callback", "POST", path, map[string]any{"notification_id": n.ID}))
		}
	}
	return out, nil
}

// conversationOf builds t's row; recent holds the newest Turns of every
// listed terminal (RecentTurnsOf), read once for the whole list.
func (s *Service) conversationOf(ctx context.Context, p Principal, t Terminal, watches []Watch, recent map[string][]Turn) (Conversation, error) {
	c := Conversation{ID: ConversationIDFor(t.ID), Terminal: t, Actions: []Action{}, Watches: []Watch{}}
	if s.turns == nil {
		return c, nil
	}
	held := c.turnsOf(p, recent[t.ID])
	var session Session
	if c.SessionID != "" {
		if sess, err := s.store.Session(ctx, c.SessionID); err == nil {
			session = sess
		}
	}
	// send: the managed path (idle, empty composer, no Turn holds the
	// pane), or the user-explicit path Send would take for this terminal.
	if _, err := sendPath(t, c.CurrentTurn, c.HeldByOther, true); err == nil {
		a := act("send", "POST", "/v1/turns", map[string]any{"terminal_id": t.ID}, "request")
		a.Target = TargetTerminal
		c.Actions = append(c.Actions, a)
		if session.ID != "" && !held && session.NativeThreadID != "" && (sessionMatches(session, t) == nil || s.probeable(session, t)) {
			a := act("send", "POST", "/v1/turns", map[string]any{"session_id": session.ID}, "request")
			a.Target = TargetSession
			c.Actions = append(c.Actions, a)
		}
	}
	if s.threads != nil && t.Agent.Profiled() {
		c.Actions = append(c.Actions, act("threads", "GET", "/v1/terminals/"+t.ID+"/threads", nil))
	}
	// Native controls: an idle pane with an empty composer that no Turn
	// holds, on its own profile (never a neighbour's).
	if s.native != nil && !held && t.SendReady() && !t.Agent.Compatibility {
		resolved := t.NativeIdentity == IdentityResolved
		if resolved || t.Agent.Kind == AgentCodex {
			c.Actions = append(c.Actions, act("new_thread", "POST", "/v1/terminals/"+t.ID+"/threads", nil))
		}
		c.Actions = append(c.Actions, act("resume_thread", "POST", "/v1/terminals/"+t.ID+"/threads/resume", map[string]any{}, "native_thread_id"))
		if _, ok := s.native.(ModelControls); ok {
			c.Actions = append(c.Actions, act("model_options", "GET", "/v1/terminals/"+t.ID+"/models", nil),
				act("set_model", "PUT", "/v1/terminals/"+t.ID+"/model", map[string]any{}, "model", "reasoning_effort"))
		}
		if _, ok := s.native.(PermissionControls); ok {
			c.Actions = append(c.Actions, act("permission_options", "GET", "/v1/terminals/"+t.ID+"/permissions", nil),
				act("set_permissions", "PUT", "/v1/terminals/"+t.ID+"/permissions", map[string]any{}, "mode"))
		}
		if resolved {
			c.Actions = append(c.Actions, act("native_inspect", "POST", "/v1/terminals/"+t.ID+"/inspect", map[string]any{"inspection": InspectionStatus}))
		} else if t.Agent.Kind == AgentCodex {
			c.Actions = append(c.Actions, act("identify_foreground", "POST", "/v1/terminals/"+t.ID+"/identify-foreground", nil))
		}
	}
	// A model control's residue (its menu open, or its bare command in the
	// composer): the repair that clears it.
	if mr, ok := s.native.(ModelRepairer); ok && !held && !t.SendReady() && t.Agent.Profiled() && !t.Agent.Compatibility &&
		t.ScreenState != ScreenWorking && t.ScreenState != ScreenAwaitingApproval && mr.ModelResidue(ctx, t) {
		c.Actions = append(c.Actions, act("repair_model_control", "POST", "/v1/terminals/"+t.ID+"/model/repair", nil))
	}
	if s.watchTerm != nil && t.Watchable() && !held {
		body := map[string]any{"terminal_id": t.ID}
		if s.native != nil && t.Agent.Kind == AgentCodex && t.Agent.Profiled() && !t.Agent.Compatibility &&
			t.NativeIdentity == IdentityAmbiguous && t.ScreenState == ScreenWorking && t.ComposerEmpty {
			// The records cannot say which task is this pane's: the closed
			// status probe can (the Watch types it once).
			body["identify"] = true
		}
		c.Actions = append(c.Actions, act("watch", "POST", "/v1/watches", body))
	}
	for _, w := range watches {
		if w.TerminalID == t.ID && p.CanSeeHost(w.HostID) {
			c.Watches = append(c.Watches, w)
			c.Actions = append(c.Actions, act("status", "GET", "/v1/watches/"+w.ID, nil),
				act("unwatch", "DELETE", "/v1/watches/"+w.ID, nil))
		}
	}
	if err := s.addTurnActions(ctx, &c); err != nil {
		return c, err
	}
	// A questionnaire, or an async question asked while the Turn works on.
	if cur := c.CurrentTurn; cur != nil && s.interactions != nil &&
		(cur.State == TurnAwaitingInteraction || (cur.State == TurnWorking && t.AsyncQuestion)) {
		if in, err := s.TurnInteraction(ctx, cur.ID); err == nil && !in.ManualRequired && in.InteractionID != "" {
			c.Actions = append(c.Actions, act("respond_interaction", "POST", turnPath(cur.ID, "/interaction"),
				map[string]any{"interaction_id": in.InteractionID}, "answers"))
		}
	}
	// A permission prompt: offered to the owner of the Turn that holds
	// the pane, or to anyone when no Turn holds it.
	if t.ScreenState == ScreenAwaitingApproval && !c.HeldByOther {
		turnID, path := "", "/v1/terminals/"+t.ID+"/approval"
		if c.CurrentTurn != nil {
			turnID, path = c.CurrentTurn.ID, turnPath(c.CurrentTurn.ID, "/approval")
		}
		if c.CurrentTurn == nil || c.CurrentTurn.State == TurnAwaitingApproval {
			av, err := s.offerApproval(ctx, p, t, turnID)
			if err != nil {
				// One pane whose prompt cannot be read degrades its own
				// row, never the list.
				av = unreadablePrompt(err)
				c.Terminal.Warnings = append(c.Terminal.Warnings, av.Reason)
			}
			c.Approval = av
			if av != nil && !av.ManualRequired {
				// One action per decision: each body is complete as given.
				for _, d := range av.Decisions {
					c.Actions = append(c.Actions, act("approve", "POST", path, map[string]any{"decision": string(d)}))
				}
			}
		}
	}
	return c, nil
}

// addTurnActions adds the actions of the row's Turns (the one holding its
// endpoint, the caller's latest ended one).
func (s *Service) addTurnActions(ctx context.Context, c *Conversation) error {
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

// turnsOf sets the row's Turns from its endpoint's newest Turns: the one
// holding it (the caller's, else HeldByOther), the caller's latest ended
// one, and the caller's latest session. held: a Turn holds the endpoint.
func (c *Conversation) turnsOf(p Principal, newest []Turn) (held bool) {
	for _, x := range newest {
		if x.State.HoldsTerminal() {
			held = true
			if p.CanSeeHost(x.HostID) {
				c.CurrentTurn = &x
			} else {
				c.HeldByOther = true
			}
			continue
		}
		if c.RecentTurn == nil && p.CanSeeHost(x.HostID) {
			c.RecentTurn = &x
		}
	}
	for _, x := range newest {
		if p.CanSeeHost(x.HostID) {
			c.SessionID = x.SessionID
			break
		}
	}
	return held
}

// List lists every agent terminal, observed now, and the caller's Turns
// that need attention while their pane is gone. It sends no input.
// recentPerTerminal is how many of a terminal's newest Turns its row reads
// (the one that holds it, the caller's latest ended one, its session).
const recentPerTerminal = 20

func (s *Service) List(ctx context.Context) (ConversationList, error) {
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
	threads := s.backendThreads(ctx, ts)
	out := ConversationList{Conversations: make([]Conversation, 0, len(ts)+len(threads)), Unavailable: []UnavailableTurn{}}
	var recent map[string][]Turn
	if s.turns != nil {
		ids := make([]string, 0, len(ts)+len(threads))
		for _, t := range ts {
			ids = append(ids, t.ID)
		}
		for _, th := range threads {
			ids = append(ids, BackendEndpoint(th.ThreadID))
		}
		if recent, err = s.store.RecentTurnsOf(ctx, ids, recentPerTerminal); err != nil {
			return ConversationList{}, err
		}
	}
	live := map[string]bool{}
	panes := map[string]int{} // index in out.Conversations, by terminal id
	for _, t := range ts {
		live[t.ID] = true
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
		live[BackendEndpoint(th.ThreadID)] = true
		c, err := s.backendConversationOf(ctx, p, th, watches, recent)
		if err != nil {
			return ConversationList{}, err
		}
		if i, ok := panes[th.PaneTerminalID]; ok && th.PaneTerminalID != "" && out.Conversations[i].Backend == nil {
			out.Conversations[i] = mergePane(out.Conversations[i], c)
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
func (s *Service) visibleWatches(ctx context.Context, p Principal) ([]Watch, error) {
	all, err := s.store.ActiveWatches(ctx)
	if err != nil {
		return nil, err
	}
	var out []Watch
	for _, w := range all {
		if !p.CanSeeHost(w.HostID) {
			continue
		}
		if w, err = s.projectWatch(ctx, w); err != nil {
			return nil, err
		}
		if w.State == WatchActive {
			out = append(out, w)
		}
	}
	return out, nil
}

// Conversations lists every agent terminal, observed now.
func (s *Service) Conversations(ctx context.Context) ([]Conversation, error) {
	l, err := s.List(ctx)
	return l.Conversations, err
}

// Conversation returns one conversation, observed now.
func (s *Service) Conversation(ctx context.Context, id string) (Conversation, error) {
	all, err := s.Conversations(ctx)
	if err != nil {
		return Conversation{}, err
	}
	for _, c := range all {
		// A merged row answers to its pane's conversation id too.
		if c.ID == id || (c.Backend != nil && c.Terminal.ID != "" && ConversationIDFor(c.Terminal.ID) == id) {
			return c, nil
		}
	}
	return Conversation{}, E(CodeConversationNotFound, "no conversation "+id+" (the pane closed or its agent restarted; list again)")
}

// Readiness is the doctor's verdict.
type Readiness string

const (
	Ready          Readiness = "ready"
	PartiallyReady Readiness = "partially_ready"
	NotReady       Readiness = "not_ready"
)

// DoctorReport is what GET /v1/doctor shows.
type DoctorReport struct {
	Status        Readiness
	Reasons       []string
	Terminals     TerminalDiagnosis
	StoreWritable bool
	StoreProblem  string
	Hosts         []Host
}

// Doctor checks tmux, the agents in panes, the store and the hosts.
func (s *Service) Doctor(ctx context.Context) (DoctorReport, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return DoctorReport{}, err
	}
	r := DoctorReport{Status: Ready, Reasons: []string{}}
	if s.terminals != nil {
		d, err := s.terminals.Diagnose(ctx)
		if err != nil {
			return DoctorReport{}, fmt.Errorf("diagnose terminals: %w", err)
		}
		r.Terminals = d
		r.Reasons = append(r.Reasons, d.Problems()...)
	} else {
		r.Reasons = append(r.Reasons, "terminal discovery is not configured")
	}
	if err := s.store.CheckWritable(ctx); err != nil {
		r.StoreProblem = err.Error()
		r.Reasons = append(r.Reasons, "the store is not writable: "+err.Error())
	} else {
		r.StoreWritable = true
	}
	hosts, err := s.store.Hosts(ctx)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return DoctorReport{}, err
	}
	for _, h := range hosts {
		if p.CanSeeHost(h.ID) {
			r.Hosts = append(r.Hosts, h)
		}
	}
	if p.Operator && len(hosts) == 0 {
		r.Reasons = append(r.Reasons, "no host is registered: POST /v1/hosts (or akk hosts add) to receive webhooks")
	}
	switch {
	case s.terminals == nil || !r.Terminals.Tmux.Found || !r.StoreWritable:
		r.Status = NotReady
	case len(r.Reasons) > 0:
		r.Status = PartiallyReady
	}
	return r, nil
}

// WarnDaemonThread is a Codex pane's warning while nothing proves which of
// its daemon's threads it shows.
const WarnDaemonThread = "Codex's threads are held by its shared app-server daemon; this pane's thread is not proven until a native /status probe or an accepted request"

// paneOnly are the pane actions a merged row keeps besides its thread's:
// the thread's daemon sends, watches and reads models exactly, so the
// pane's own send, watch and model controls give way to those (and its
// thread needs no identifying).
func paneOnly(a Action) bool {
	switch a.Name {
	case "send", "watch", "model_options", "set_model", "identify_foreground":
		return false
	}
	return true
}

// mergePane is one row for a backend thread and the pane proven to show
// it: the thread's identity, Turns and actions, and the pane's own
// controls (its threads, permissions, native controls, its Watches and
// Turns). While a backend Turn holds the thread, a prompt on the pane is
// that Turn's, answered through the daemon only, by its owner.
func mergePane(pane, back Conversation) Conversation {
	c := back
	c.Terminal = pane.Terminal
	// The pane's thread is proven: it is this one.
	c.Terminal.NativeIdentity, c.Terminal.NativeThreadID = IdentityResolved, back.Backend.ThreadID
	c.Terminal.Warnings = slices.DeleteFunc(slices.Clone(pane.Terminal.Warnings), func(w string) bool { return w == WarnDaemonThread })
	// A backend Turn holds the thread (the caller's, or another
	// controller's): its prompt is answered through the daemon by its
	// owner only, never with the pane's keys.
	byBackend := back.CurrentTurn != nil || back.HeldByOther
	if pane.CurrentTurn != nil || pane.HeldByOther {
		// A pane Turn holds the pane: no second task through the daemon.
		c.Actions = slices.DeleteFunc(c.Actions, func(a Action) bool { return a.Name == "send" })
	}
	for _, a := range pane.Actions {
		if !paneOnly(a) || (byBackend && a.Name == "approve" && strings.HasPrefix(a.Path, "/v1/terminals/")) {
			continue
		}
		c.Actions = append(c.Actions, a)
	}
	c.Watches = append(c.Watches, pane.Watches...)
	if c.SessionID == "" {
		c.SessionID = pane.SessionID
	}
	if c.CurrentTurn == nil {
		c.CurrentTurn, c.HeldByOther = pane.CurrentTurn, c.HeldByOther || pane.HeldByOther
	}
	if c.RecentTurn == nil {
		c.RecentTurn = pane.RecentTurn
	}
	if c.Approval == nil && !byBackend {
		c.Approval = pane.Approval
	}
	return c
}
