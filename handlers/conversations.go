package handlers

import (
	"context"
	"path/filepath"
	"strings"

	"akk/domain"
)

func agentOut(a domain.Agent) Agent {
	return Agent{Kind: AgentKind(a.Kind), Version: a.Version, Profile: a.Profile}
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// conversationOuts draws a row as the kind of endpoint it drives: the
// contract has an object of its own for each transport.
var conversationOuts = map[domain.EndpointKind]func(domain.Conversation) Conversation{
	domain.EndpointPane:        paneConversationOut,
	domain.EndpointCodexThread: backendConversationOut,
}

func conversationOut(c domain.Conversation) Conversation {
	if out, ok := conversationOuts[c.Endpoint.Kind]; ok {
		return out(c)
	}
	return paneConversationOut(c)
}

func paneConversationOut(c domain.Conversation) Conversation {
	t := c.Terminal
	out := Conversation{
		ConversationId:   c.ID,
		Title:            t.Title,
		Project:          t.Project,
		Agent:            agentOut(t.Agent),
		Transport:        ConversationTransportTerminal,
		Terminal:         terminalInfoOut(t),
		SessionId:        optString(c.SessionID),
		Approval:         approvalOut(c.Approval),
		Managed:          Managed{HeldByOther: c.HeldByOther},
		Watches:          []Watch{},
		Warnings:         append([]string{}, t.Warnings...),
		AvailableActions: actionsOut(c.Actions),
	}
	for _, w := range c.Watches {
		out.Watches = append(out.Watches, watchOut(w))
	}
	if c.CurrentTurn != nil {
		out.Managed.CurrentTurn = &TurnRef{TurnId: c.CurrentTurn.ID, State: TurnState(c.CurrentTurn.State), WaitingSince: optTime(c.WaitingSince)}
	}
	if c.RecentTurn != nil {
		out.Managed.RecentTurn = &TurnRef{TurnId: c.RecentTurn.ID, State: TurnState(c.RecentTurn.State)}
	}
	return out
}

func terminalInfoOut(t domain.Terminal) *TerminalInfo {
	return &TerminalInfo{
		TerminalId:           t.ID,
		Provider:             Tmux,
		ScreenState:          TerminalInfoScreenState(t.ScreenState),
		NativeIdentityState:  TerminalInfoNativeIdentityState(t.NativeIdentity),
		DurableActivityState: TerminalInfoDurableActivityState(t.DurableActivity),
		ComposerEmpty:        t.ComposerEmpty,
		TmuxSession:          optString(t.SessionName),
		TmuxWindow:           optString(t.WindowName),
		DialogQuestion:       optString(t.DialogQuestion),
		Channels:             channelsOut(t.Channels),
	}
}

// channelsOut is a terminal's channels; none when the row has none set.
func channelsOut(c domain.TerminalChannels) *TerminalChannels {
	or := func(ch domain.Channel) ChannelKind {
		if ch == "" {
			return ChannelKindNone
		}
		return ChannelKind(ch)
	}
	return &TerminalChannels{Permission: or(c.Permission), Question: or(c.Question)}
}

// backendConversationOut is the row of a Codex app-server thread, with
// the pane proven to show it when there is one.
func backendConversationOut(c domain.Conversation) Conversation {
	th := c.Backend
	title := th.Title
	if title == "" && th.Cwd != "" {
		// No request yet (a project's new thread): its folder says which.
		title = "New thread in " + filepath.Base(th.Cwd)
	} else if title == "" {
		title = th.ThreadID
	}
	out := Conversation{
		ConversationId: c.ID,
		Title:          title,
		Project:        th.Cwd,
		Agent:          Agent{Kind: AgentKind(domain.AgentCodex), Version: th.CLIVersion, Profile: "codex_app_server"},
		Transport:      ConversationTransportCodexBackend,
		Backend: &BackendInfo{Provider: CodexAppServer, NativeThreadId: th.ThreadID,
			ThreadStatus: BackendInfoThreadStatus(th.Status), Model: optString(th.Model)},
		SessionId:        optString(c.SessionID),
		Approval:         approvalOut(c.Approval),
		Managed:          Managed{HeldByOther: c.HeldByOther},
		Watches:          []Watch{},
		Warnings:         append([]string{}, th.Warnings...),
		AvailableActions: actionsOut(c.Actions),
	}
	if c.Terminal.ID != "" {
		out.Terminal = terminalInfoOut(c.Terminal)
		out.Warnings = append(out.Warnings, c.Terminal.Warnings...)
	}
	for _, w := range c.Watches {
		out.Watches = append(out.Watches, watchOut(w))
	}
	if c.CurrentTurn != nil {
		out.Managed.CurrentTurn = &TurnRef{TurnId: c.CurrentTurn.ID, State: TurnState(c.CurrentTurn.State), WaitingSince: optTime(c.WaitingSince)}
	}
	if c.RecentTurn != nil {
		out.Managed.RecentTurn = &TurnRef{TurnId: c.RecentTurn.ID, State: TurnState(c.RecentTurn.State)}
	}
	return out
}

// actionRoutes gives each action the domain offers its method and route:
// {id} is the record the action names.
var actionRoutes = map[domain.ActionOn]map[string][2]string{
	domain.OnTurns: {"send": {"POST", "/v1/turns"}},
	domain.OnTurn: {
		"status": {"GET", "/v1/turns/{id}"}, "respond": {"POST", "/v1/turns/{id}/respond"},
		"cancel": {"POST", "/v1/turns/{id}/cancel"}, "renew": {"POST", "/v1/turns/{id}/renew"},
		"recover": {"POST", "/v1/turns/{id}/recover"}, "close": {"POST", "/v1/turns/{id}/close"},
		"retry_callback":      {"POST", "/v1/turns/{id}/retry-callback"},
		"respond_interaction": {"POST", "/v1/turns/{id}/interaction"},
		"approve":             {"POST", "/v1/turns/{id}/approval"},
	},
	domain.OnTerminal: {
		"threads": {"GET", "/v1/terminals/{id}/threads"}, "new_thread": {"POST", "/v1/terminals/{id}/threads"},
		"resume_thread": {"POST", "/v1/terminals/{id}/threads/resume"},
		"model_options": {"GET", "/v1/terminals/{id}/models"}, "set_model": {"PUT", "/v1/terminals/{id}/model"},
		"permission_options":   {"GET", "/v1/terminals/{id}/permissions"},
		"set_permissions":      {"PUT", "/v1/terminals/{id}/permissions"},
		"native_inspect":       {"POST", "/v1/terminals/{id}/inspect"},
		"identify_foreground":  {"POST", "/v1/terminals/{id}/identify-foreground"},
		"repair_model_control": {"POST", "/v1/terminals/{id}/model/repair"},
		"approve":              {"POST", "/v1/terminals/{id}/approval"},
	},
	domain.OnWatches: {"watch": {"POST", "/v1/watches"}},
	domain.OnWatch:   {"status": {"GET", "/v1/watches/{id}"}, "unwatch": {"DELETE", "/v1/watches/{id}"}},
}

// actionRoute is a's method and path; ok is false for an action no route
// serves (a test proves there is none).
func actionRoute(a domain.Action) (method, path string, ok bool) {
	r, ok := actionRoutes[a.On][a.Name]
	if !ok {
		return "", "", false
	}
	return r[0], strings.ReplaceAll(r[1], "{id}", a.ID), true
}

func actionsOut(as []domain.Action) []Action {
	out := make([]Action, 0, len(as))
	for _, a := range as {
		method, path, ok := actionRoute(a)
		if !ok {
			continue // never offer what no route serves
		}
		act := Action{Action: a.Name, Method: method, Path: path}
		if a.Body != nil {
			b := a.Body
			act.Body = &b
		}
		if len(a.Input) > 0 {
			in := make([]ActionInput, len(a.Input))
			for i, x := range a.Input {
				in[i] = ActionInput(x)
			}
			act.Input = &in
		}
		if a.Target != "" {
			tg := ActionTarget(a.Target)
			act.Target = &tg
		}
		out = append(out, act)
	}
	return out
}

// ListConversations lists every agent pane, observed now.
func (s *Server) ListConversations(ctx context.Context, _ ListConversationsRequestObject) (ListConversationsResponseObject, error) {
	l, err := s.Service.List(ctx)
	if err != nil {
		return nil, err
	}
	out := ListConversations200JSONResponse{Conversations: make([]Conversation, len(l.Conversations)),
		UnavailableManagedTurns: []UnavailableTurn{}}
	for i, c := range l.Conversations {
		out.Conversations[i] = conversationOut(c)
	}
	for _, u := range l.Unavailable {
		out.UnavailableManagedTurns = append(out.UnavailableManagedTurns, UnavailableTurn{TurnId: u.Turn.ID,
			State: TurnState(u.Turn.State), TerminalId: u.Turn.TerminalID, SessionId: optString(u.Turn.SessionID),
			AvailableActions: actionsOut(u.Actions)})
	}
	return out, nil
}

// GetConversation returns one conversation, observed now.
func (s *Server) GetConversation(ctx context.Context, req GetConversationRequestObject) (GetConversationResponseObject, error) {
	c, err := s.Service.Conversation(ctx, req.ConversationId)
	if err != nil {
		return nil, err
	}
	return GetConversation200JSONResponse(conversationOut(c)), nil
}

// GetDoctor reports readiness.
func (s *Server) GetDoctor(ctx context.Context, _ GetDoctorRequestObject) (GetDoctorResponseObject, error) {
	r, err := s.Service.Doctor(ctx)
	if err != nil {
		return nil, err
	}
	d := r.Terminals
	out := GetDoctor200JSONResponse{
		Status:       DoctorStatus(r.Status),
		Reasons:      r.Reasons,
		Tmux:         DoctorTmux{Found: d.Tmux.Found, Version: optString(d.Tmux.Version), Problem: optString(d.Tmux.Problem)},
		TmuxServers:  []DoctorTmuxServer{},
		StaleSockets: ptr(d.StaleSockets),
		TmuxSearched: ptr(append([]string{}, d.Searched...)),
		Agents:       []DoctorAgent{},
		Supported:    []Agent{},
		Store:        DoctorStore{Writable: r.StoreWritable, Problem: optString(r.StoreProblem)},
		Hosts:        DoctorHosts{Count: len(r.Hosts), WebhookUrls: []string{}},
	}
	for _, srv := range d.Servers {
		out.TmuxServers = append(out.TmuxServers, DoctorTmuxServer{Socket: srv.Socket, Panes: srv.Panes, Problem: optString(srv.Problem)})
	}
	for _, a := range d.Agents {
		out.Agents = append(out.Agents, DoctorAgent{Kind: AgentKind(a.Agent.Kind), Version: a.Agent.Version,
			Profile: a.Agent.Profile, Profiled: a.Agent.Profiled(), Panes: a.Panes})
	}
	for _, a := range d.Supported {
		out.Supported = append(out.Supported, agentOut(a))
	}
	for _, h := range r.Hosts {
		out.Hosts.WebhookUrls = append(out.Hosts.WebhookUrls, h.WebhookURL)
	}
	return out, nil
}
