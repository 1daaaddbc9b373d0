package handlers

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

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
	s         *Server
	rest      http.Handler
	tools     []mcpToolDef
	h         *mcp.StreamableHTTPHandler
	handshake time.Duration // an unfinished session ends after this
	idle      time.Duration // a session idle this long may make room for a new one

	mu       sync.Mutex
	sessions map[string]*mcpSession   // by MCP session id
	live     map[*mcpSession]struct{} // every session, from its initialize request until it ends
}

func newMCPEndpoint(s *Server, rest http.Handler, tools []mcpToolDef) *mcpEndpoint {
	e := &mcpEndpoint{s: s, rest: rest, tools: tools, handshake: s.MCPHandshakeTimeout, idle: s.MCPIdleBeforeEviction,
		sessions: map[string]*mcpSession{}, live: map[*mcpSession]struct{}{}}
	e.h = mcp.NewStreamableHTTPHandler(e.serverFor, &mcp.StreamableHTTPOptions{
		Logger:              sdkLogger(s.Log),
		SessionTimeout:      MCPSessionTimeout,
		MaxRequestBodyBytes: 2 * MaxBodyBytes,
	})
	return e
}

// MCPSessionTimeout ends an MCP session that sent no request for so long.
const MCPSessionTimeout = 30 * time.Minute

// principalKey names a principal in the tables of sessions and streams
// (MCP's, the dashboard's, the event streams').
func principalKey(p domain.Principal) string {
	if p.Operator {
		return "operator"
	}
	return "host:" + p.HostID
}

type sessionHolder struct{}

// ServeHTTP authenticates every request with its bearer token (no cookie:
// a browser's session must not reach the tools) and keeps a session to
// the principal that opened it. A session id AKK does not hold (never
// given, ended, or another principal's) is 404 for everyone.
func (e *mcpEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A browser's request from another site's page (the MCP transport
	// spec: servers must validate Origin).
	if !e.s.hosts.originAllowed(r) {
		writeError(w, r, errOrigin())
		return
	}
	p, ok := e.s.bearer(w, r)
	if !ok {
		return
	}
	ctx := domain.WithPrincipal(r.Context(), p)
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		e.mu.Lock()
		m, known := e.sessions[id]
		if known && principalKey(m.p) == principalKey(p) {
			m.inflight++
		}
		e.mu.Unlock()
		if !known || principalKey(m.p) != principalKey(p) {
			writeError(w, r, domain.E(domain.CodeNotFound, "no such MCP session"))
			return
		}
		defer e.done(m)
		if r.Method == http.MethodDelete {
			// The client ends its session: its place is free at once.
			e.forget(m)
		}
		e.h.ServeHTTP(w, r.WithContext(ctx))
		if r.Method == http.MethodDelete {
			e.drop(m)
		}
		return
	}
	if r.Method != http.MethodPost {
		e.h.ServeHTTP(w, r.WithContext(ctx))
		return
	}
	// A new session: it holds a place from its initialize request on.
	sess := &mcpSession{e: e, p: p}
	sess.ctx, sess.cancel = context.WithCancel(context.WithoutCancel(ctx))
	e.mu.Lock()
	var idlest *mcpSession
	if e.openLocked(principalKey(p)) >= MaxMCPSessions {
		// At the limit, the principal's longest-idle session makes room
		// (a one-shot client opens a session per call and never closes
		// it), if it has been idle a while; else the new one is refused.
		if idlest = e.idlestLocked(principalKey(p)); idlest == nil {
			e.mu.Unlock()
			writeError(w, r, domain.E(domain.CodeMCPSessionLimit,
				fmt.Sprintf("this controller has %d open MCP sessions in use, the most it may have; close one (DELETE /mcp) or let one idle", MaxMCPSessions)))
			return
		}
		e.forgetLocked(idlest)
	}
	sess.inflight = 1
	e.live[sess] = struct{}{}
	e.mu.Unlock()
	if idlest != nil {
		e.drop(idlest)
	}
	e.h.ServeHTTP(w, r.WithContext(context.WithValue(ctx, sessionHolder{}, sess)))
	e.done(sess)
	e.mu.Lock()
	ss := sess.ss
	e.mu.Unlock()
	if ss == nil || ss.InitializeParams() == nil {
		// No session came of it: the SDK closes one that was not
		// initialized by its first request (a failed initialize, or a
		// probe such as server/discover).
		e.drop(sess)
	}
}

// MaxMCPSessions bounds the open MCP sessions of one principal (each
// holds a server and an event pump until it closes or idles out); a
// session counts from its initialize on.
const MaxMCPSessions = 16

// openLocked counts a principal's sessions. A session whose first
// request was not an initialize (a probe such as server/discover) is
// about to be closed by the SDK and does not count.
func (e *mcpEndpoint) openLocked(key string) int {
	n := 0
	for m := range e.live {
		if principalKey(m.p) == key && (m.ss == nil || m.ss.InitializeParams() != nil) {
			n++
		}
	}
	return n
}

// endPrincipal ends every session of a principal.
func (e *mcpEndpoint) endPrincipal(key string) {
	e.mu.Lock()
	var ending []*mcpSession
	for m := range e.live {
		if principalKey(m.p) == key {
			ending = append(ending, m)
		}
	}
	e.mu.Unlock()
	for _, m := range ending {
		e.drop(m)
	}
}

// done ends one request of a session: it is idle from now on if no
// other request (an open stream) is in flight.
func (e *mcpEndpoint) done(m *mcpSession) {
	e.mu.Lock()
	defer e.mu.Unlock()
	m.inflight--
	m.idleSince = time.Now()
}

// idlestLocked is the principal's session with no request in flight that
// has been idle longest, if that is longer than e.idle; else nil.
func (e *mcpEndpoint) idlestLocked(key string) *mcpSession {
	var idlest *mcpSession
	for m := range e.live {
		if principalKey(m.p) != key || m.inflight > 0 || time.Since(m.idleSince) <= e.idle {
			continue
		}
		if idlest == nil || m.idleSince.Before(idlest.idleSince) {
			idlest = m
		}
	}
	return idlest
}

// forget frees a session's place and id at once.
func (e *mcpEndpoint) forget(m *mcpSession) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forgetLocked(m)
}

func (e *mcpEndpoint) forgetLocked(m *mcpSession) {
	if m.id != "" && e.sessions[m.id] == m {
		delete(e.sessions, m.id)
	}
	delete(e.live, m)
}

// drop ends a session for AKK and for the SDK alike: its place is free at
// once, and the SDK stops serving it.
func (e *mcpEndpoint) drop(m *mcpSession) {
	e.mu.Lock()
	e.forgetLocked(m)
	if m.timer != nil {
		m.timer.Stop()
	}
	ss := m.ss
	already := m.ended
	m.ended = true
	e.mu.Unlock()
	if already {
		return
	}
	m.cancel()
	if ss != nil {
		go ss.Close()
	}
}

// serverFor makes the MCP server of one new session, for the principal of
// the request that opens it.
func (e *mcpEndpoint) serverFor(r *http.Request) *mcp.Server {
	sess, ok := r.Context().Value(sessionHolder{}).(*mcpSession)
	if !ok {
		return nil
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "akk", Title: "AKK", Version: e.s.Version}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       sdkLogger(e.s.Log),
		GetSessionID: func() string {
			id := "mcp_" + rand.Text()
			e.mu.Lock()
			sess.id = id
			e.sessions[id] = sess
			// A session that has not finished its handshake by then ends.
			sess.timer = time.AfterFunc(e.handshake, func() {
				if !sess.started.Load() {
					e.drop(sess)
				}
			})
			e.mu.Unlock()
			return id
		},
		InitializedHandler: func(ctx context.Context, req *mcp.InitializedRequest) { sess.start(req.Session) },
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Capabilities:       &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
	})
	sess.srv = srv
	// The first message (initialize) names the SDK's session: from then on
	// AKK can end it, and learns when it ends.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
				sess.bind(ss)
			}
			return next(ctx, method, req)
		}
	})
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
	ctx     context.Context // ends with the session
	cancel  context.CancelFunc
	started atomic.Bool
	once    sync.Once

	// Under e.mu:
	id    string
	ss    *mcp.ServerSession
	timer *time.Timer
	ended bool
	// inflight counts its requests being served (an open stream among
	// them); idleSince is when the last one ended.
	inflight  int
	idleSince time.Time
}

// bind learns the SDK's session, once: when the SDK ends it, AKK forgets
// it; when AKK ended it first, the SDK's ends too.
func (m *mcpSession) bind(ss *mcp.ServerSession) {
	m.e.mu.Lock()
	if m.ss != nil {
		m.e.mu.Unlock()
		return
	}
	m.ss = ss
	ended := m.ended
	m.e.mu.Unlock()
	if ended {
		go ss.Close()
		return
	}
	go func() {
		ss.Wait()
		m.e.drop(m)
	}()
}

// ConversationArgument is the tool argument a host's own code (never its
// model: no tool's schema names it) may add to a call to say which of its
// conversations the call comes from, where its MCP client sends one fixed
// set of headers for all of them (OpenClaw's plugin adds its session key in
// its before_tool_call hook). It is the AKK-Conversation of that one call,
// validated as the header is.
const ConversationArgument = "akk_conversation"

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

// call serves one REST request in process with the caller's own token;
// conv, when set, is the call's own conversation reference.
func (m *mcpSession) call(req *http.Request, extra *mcp.RequestExtra, ss *mcp.ServerSession, conv string) (int, []byte) {
	if extra != nil && extra.Header != nil {
		req.Header.Set("Authorization", extra.Header.Get("Authorization"))
	}
	if conv == "" {
		conv = conversationOf(extra, ss)
	}
	if conv != "" {
		req.Header.Set("AKK-Conversation", conv)
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
		conv := ""
		if v, ok := args[ConversationArgument]; ok {
			s, isString := v.(string)
			if !isString || s == "" {
				return mcpProblem(domain.CodeInvalidRequest, ConversationArgument+" must be a non-empty string"), nil
			}
			// It travels as the AKK-Conversation header (to another node
			// of a fleet too): what no header could carry is refused.
			if strings.IndexFunc(s, unicode.IsControl) >= 0 || !utf8.ValidString(s) {
				return mcpProblem(domain.CodeValidationFailed, ConversationArgument+" must not contain control characters"), nil
			}
			conv = s
			delete(args, ConversationArgument)
		}
		hreq, err := d.request(ctx, args)
		if err != nil {
			return mcpProblem(domain.CodeInvalidRequest, err.Error()), nil
		}
		status, body := m.call(hreq, req.Extra, req.Session, conv)
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
		status, body := m.call(hreq, req.Extra, req.Session, "")
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
		m.bind(ss)
		go m.pump(m.ctx, ss)
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

// sdkLogger is log for the MCP SDK: its info lines (sessions opening and
// closing) are debug in AKK's log, so a daemon at info shows AKK's own
// lines; its warnings and errors stay.
func sdkLogger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return nil
	}
	return slog.New(demoted{log.Handler()})
}

// demoted lowers records under warn to debug.
type demoted struct{ h slog.Handler }

func demote(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}

func (d demoted) Enabled(ctx context.Context, l slog.Level) bool { return d.h.Enabled(ctx, demote(l)) }
func (d demoted) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return d.h.Handle(ctx, r)
}
func (d demoted) WithAttrs(as []slog.Attr) slog.Handler { return demoted{d.h.WithAttrs(as)} }
func (d demoted) WithGroup(n string) slog.Handler       { return demoted{d.h.WithGroup(n)} }
