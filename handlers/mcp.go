package handlers

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"akk/domain"
)

// The MCP endpoint (/mcp, streamable HTTP): every REST action as a tool
// (mcp_tools.go), a Turn's or a Watch's status as a resource
// (akk://turns/{turn_id}, akk://watches/{watch_id}), and the caller's
// events as notifications while it is connected. One MCP session belongs
// to the principal whose bearer token opened it; its session id is the
// AKK-Conversation its offers are bound to unless the client sends one.

// mcpAttention are the event types an assistant should act on: they go out
// as logging notifications, besides the resource update.
var mcpAttention = map[string]mcp.LoggingLevel{
	"turn.approval_required":     "warning",
	"turn.interaction_required":  "warning",
	"turn.waiting_for_host":      "warning",
	"turn.delivery_uncertain":    "error",
	"turn.response_uncertain":    "error",
	"turn.interaction_uncertain": "error",
	"turn.stalled":               "error",
	"turn.completed":             "notice",
	"turn.failed":                "error",
	"turn.cancelled":             "notice",
	"watch.completed":            "notice",
	"watch.failed":               "error",
}

// mcpEndpoint serves /mcp.
type mcpEndpoint struct {
	s     *Server
	rest  http.Handler
	tools []mcpToolDef
	h     *mcp.StreamableHTTPHandler

	mu       sync.Mutex
	sessions map[string]*mcpSession // by MCP session id
}

func newMCPEndpoint(s *Server, rest http.Handler, tools []mcpToolDef) *mcpEndpoint {
	e := &mcpEndpoint{s: s, rest: rest, tools: tools, sessions: map[string]*mcpSession{}}
	e.h = mcp.NewStreamableHTTPHandler(e.serverFor, &mcp.StreamableHTTPOptions{
		Logger:              s.Log,
		SessionTimeout:      30 * time.Minute,
		MaxRequestBodyBytes: 2 * MaxBodyBytes,
	})
	return e
}

// ServeHTTP authenticates every request with its bearer token (no cookie:
// a browser's session must not reach the tools) and keeps a session to
// the principal that opened it.
func (e *mcpEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p, ok := e.s.bearer(w, r)
	if !ok {
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		e.mu.Lock()
		m, known := e.sessions[id]
		e.mu.Unlock()
		if known && m.p.HostID != p.HostID {
			writeError(w, r, domain.E(domain.CodeNotFound, "no such MCP session"))
			return
		}
	} else if r.Method == http.MethodPost && e.open(p.HostID) >= MaxMCPSessions {
		writeError(w, r, domain.E(domain.CodeMCPSessionLimit,
			fmt.Sprintf("this controller has %d open MCP sessions, the most it may have; close one (DELETE /mcp) or let one time out", MaxMCPSessions)))
		return
	}
	e.h.ServeHTTP(w, r.WithContext(domain.WithPrincipal(r.Context(), p)))
	if r.Method == http.MethodDelete {
		// The client ended its session: its place is free at once.
		e.mu.Lock()
		delete(e.sessions, r.Header.Get("Mcp-Session-Id"))
		e.mu.Unlock()
	}
}

// MaxMCPSessions bounds the open MCP sessions of one principal (each
// holds a server and an event pump until it closes or idles out).
const MaxMCPSessions = 16

// open counts a principal's initialized sessions, forgetting those that
// never completed their handshake (a session forgets itself when it ends).
func (e *mcpEndpoint) open(hostID string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for id, m := range e.sessions {
		if !m.started.Load() && time.Since(m.created) > time.Minute {
			delete(e.sessions, id)
			continue
		}
		if m.started.Load() && m.p.HostID == hostID {
			n++
		}
	}
	return n
}

// serverFor makes the MCP server of one new session, for the principal of
// the request that opens it.
func (e *mcpEndpoint) serverFor(r *http.Request) *mcp.Server {
	p, ok := domain.PrincipalFrom(r.Context())
	if !ok {
		return nil
	}
	sess := &mcpSession{e: e, p: p, created: time.Now()}
	srv := mcp.NewServer(&mcp.Implementation{Name: "akk", Title: "AKK", Version: e.s.Version}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       e.s.Log,
		GetSessionID: func() string {
			id := "mcp_" + rand.Text()
			e.mu.Lock()
			e.sessions[id] = sess
			e.mu.Unlock()
			return id
		},
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) { sess.start(req.Session) },
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Capabilities:       &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
	})
	sess.srv = srv
	for _, d := range e.tools {
		srv.AddTool(&mcp.Tool{Name: d.Name, Description: d.description(), InputSchema: d.schema,
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: d.ReadOnly, IdempotentHint: d.ReadOnly, DestructiveHint: ptr(false)}},
			sess.tool(d))
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "turn", Title: "A Turn's status", URITemplate: "akk://turns/{turn_id}",
		MIMEType: "application/json", Description: "The status of one of your Turns (as akk_status returns it); updated on every event of the Turn."},
		sess.resource("akk://turns/", "/v1/turns/"))
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "watch", Title: "A Watch's status", URITemplate: "akk://watches/{watch_id}",
		MIMEType: "application/json", Description: "The status of one of your Watches; updated on every event of the Watch."},
		sess.resource("akk://watches/", "/v1/watches/"))
	return srv
}

const mcpInstructions = `AKK drives Claude Code and Codex that run in a person's tmux panes. ` +
	`Call akk_list first and use only the ids and prefilled bodies of its available_actions; each action names its tool (akk_ + the action's name). ` +
	`A notification is only a wake-up: call akk_status before acting on it. ` +
	`Never retry a result whose outcome is uncertain or that says do_not_retry: tell the user and look at the Turn's status instead. ` +
	`Approve prompts and answer questions only as the user would; ask the user when in doubt.`

// mcpSession is one connected client: its principal, and its event pump.
type mcpSession struct {
	e       *mcpEndpoint
	p       domain.Principal
	srv     *mcp.Server
	created time.Time
	started atomic.Bool
	once    sync.Once
}

// conversation is the AKK-Conversation of a call: the client's own header,
// or the MCP session id.
func conversationOf(extra *mcp.RequestExtra, ss *mcp.ServerSession) string {
	if extra != nil && extra.Header != nil {
		if c := extra.Header.Get("AKK-Conversation"); c != "" {
			return c
		}
	}
	if ss != nil {
		return ss.ID()
	}
	return ""
}

// call serves one REST request in process with the caller's own token.
func (m *mcpSession) call(req *http.Request, extra *mcp.RequestExtra, ss *mcp.ServerSession) (int, []byte) {
	if extra != nil && extra.Header != nil {
		req.Header.Set("Authorization", extra.Header.Get("Authorization"))
	}
	if c := conversationOf(extra, ss); c != "" {
		req.Header.Set("AKK-Conversation", c)
	}
	return serveInProcess(m.e.rest, req)
}

func (m *mcpSession) tool(d mcpToolDef) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := map[string]any{}
		if len(req.Params.Arguments) > 0 && string(req.Params.Arguments) != "null" {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return mcpProblem(domain.CodeInvalidRequest, "the arguments must be one JSON object"), nil
			}
		}
		hreq, err := d.request(ctx, args)
		if err != nil {
			return mcpProblem(domain.CodeInvalidRequest, err.Error()), nil
		}
		status, body := m.call(hreq, req.Extra, req.Session)
		return mcpResult(status, body), nil
	}
}

// mcpProblem is a refusal before any REST call, shaped as a REST problem.
func mcpProblem(code domain.Code, detail string) *mcp.CallToolResult {
	b, _ := json.Marshal(map[string]any{"type": "about:blank", "title": "Invalid tool call", "status": 422, "code": code, "detail": detail})
	return mcpResult(422, b)
}

func (m *mcpSession) resource(prefix, path string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		id, ok := strings.CutPrefix(req.Params.URI, prefix)
		if !ok || id == "" || strings.ContainsAny(id, "/?#") {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		hreq, _ := http.NewRequestWithContext(ctx, "GET", path+id, nil)
		status, body := m.call(hreq, req.Extra, req.Session)
		if status == http.StatusNotFound {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		if status >= 400 {
			return nil, fmt.Errorf("%d: %s", status, body)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json", Text: string(body)}}}, nil
	}
}

// start runs the session's event pump until the session ends: each event
// of the principal's records updates its resource, and attention states
// are logged to the client as well.
func (m *mcpSession) start(ss *mcp.ServerSession) {
	m.once.Do(func() {
		m.started.Store(true)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			ss.Wait()
			cancel()
			m.e.mu.Lock()
			delete(m.e.sessions, ss.ID())
			m.e.mu.Unlock()
		}()
		go m.pump(ctx, ss)
	})
}

func (m *mcpSession) pump(ctx context.Context, ss *mcp.ServerSession) {
	wake, unsubscribe := m.e.s.Hub.Subscribe()
	defer unsubscribe()
	cursor, err := m.e.s.Service.LastEventID(ctx)
	if err != nil {
		return
	}
	for {
		for {
			evs, err := m.e.s.Service.EventsAfter(ctx, m.p, cursor, sseBatch)
			if err != nil {
				return
			}
			for _, ev := range evs {
				cursor = ev.ID
				m.notify(ctx, ss, ev)
			}
			if len(evs) < sseBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
	}
}

func (m *mcpSession) notify(ctx context.Context, ss *mcp.ServerSession, ev domain.Event) {
	uri := ""
	switch {
	case strings.HasPrefix(ev.Subject, "turn_"):
		uri = "akk://turns/" + ev.Subject
	case strings.HasPrefix(ev.Subject, "watch_"):
		uri = "akk://watches/" + ev.Subject
	}
	if uri != "" {
		m.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
	if level, ok := mcpAttention[ev.Type]; ok {
		data := map[string]any{"type": ev.Type, "event_id": ev.ID, "subject": ev.Subject, "resource": uri,
			"next": "call akk_status for " + ev.Subject + " before acting"}
		ss.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "akk", Data: data})
	}
}
