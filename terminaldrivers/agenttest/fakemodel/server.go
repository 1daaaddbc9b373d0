package fakemodel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// API names in Request.API.
const (
	APIAnthropic = "anthropic"
	APIOpenAI    = "openai"
	// APIChat is OpenAI's Chat Completions (DeepSeek Harness speaks it).
	APIChat  = "openai-chat"
	APIOther = "other"
)

// Request is one recorded request and what the server made of it.
type Request struct {
	ID     int    `json:"id"`
	API    string `json:"api"`
	Method string `json:"method"`
	Path   string `json:"path"` // with the query, e.g. /v1/messages?beta=true
	Model  string `json:"model,omitempty"`
	// Effort is the reasoning effort the request asked for (OpenAI).
	Effort string `json:"effort,omitempty"`
	// Client identifies the caller by its API key: ClientID(key).
	Client string `json:"client,omitempty"`
	// Aux marks side requests (titles, probes): no scenario was played.
	Aux      bool              `json:"aux,omitempty"`
	Scenario string            `json:"scenario,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
	UserText string            `json:"user_text,omitempty"`
	// Earlier are the texts of the user messages before the latest, in
	// order (OpenAI requests): the conversation a request continues.
	Earlier     []string `json:"earlier,omitempty"`
	ToolResults []string `json:"tool_results,omitempty"`
	// ToolCall is the tool the answer called, as the API names it.
	ToolCall string    `json:"tool_call,omitempty"`
	Status   int       `json:"status"`
	Received time.Time `json:"received"`
	// Finished is when the response was fully written (zero while streaming).
	Finished time.Time `json:"finished"`
	// Interrupted is set when the client went away before the end.
	Interrupted bool `json:"interrupted,omitempty"`
}

// ClientID is a short digest of an API key, recorded as Request.Client, so
// tests sharing one server can tell their agents' requests apart without the
// log ever holding a key.
func ClientID(key string) string {
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}

// clientOf reads the API key a request presents (x-api-key or a bearer token).
func clientOf(r *http.Request) string {
	if k := r.Header.Get("x-api-key"); k != "" {
		return ClientID(k)
	}
	if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
		return ClientID(strings.TrimPrefix(a, "Bearer "))
	}
	return ""
}

// Done reports whether the response has been fully written or abandoned.
func (r Request) Done() bool { return !r.Finished.IsZero() }

// Options configure a Server.
type Options struct {
	// Log receives one line per request and any unknown path; nil discards.
	Log io.Writer
	// DumpDir, if set, receives each raw request body as <id>-<api>.json,
	// which is how the tool names and shapes of a new agent version are
	// learned.
	DumpDir string
}

// Server is the fake model. It is an http.Handler; Start also listens.
type Server struct {
	opts   Options
	logger *log.Logger

	mu       sync.Mutex
	requests []Request
	from     int            // Requests shows requests[from:] (Forget)
	changed  chan struct{}  // closed and replaced on every change
	failures map[string]int // error answers given per API and user text
	holds    map[string]chan struct{}

	ln   net.Listener
	http *http.Server
}

// New returns a Server that is not listening yet.
func New(opts Options) *Server {
	w := opts.Log
	if w == nil {
		w = io.Discard
	}
	return &Server{opts: opts, logger: log.New(w, "fakemodel: ", log.Ltime|log.Lmicroseconds), changed: make(chan struct{}), failures: map[string]int{}, holds: map[string]chan struct{}{}}
}

// Start listens on addr (e.g. "127.0.0.1:0") and serves in the background.
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("fakemodel listen %s: %w", addr, err)
	}
	s.ln = ln
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Printf("serve: %v", err)
		}
	}()
	return nil
}

// Addr is the listening address, e.g. 127.0.0.1:41234.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the base URL for Claude Code (ANTHROPIC_BASE_URL).
func (s *Server) URL() string { return "http://" + s.Addr() }

// OpenAIBaseURL is the base URL for a Codex model provider (ends in /v1).
func (s *Server) OpenAIBaseURL() string { return s.URL() + "/v1" }

// Close stops listening and ends open streams.
func (s *Server) Close() error {
	if s.http == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.http.Shutdown(ctx); err != nil {
		return s.http.Close()
	}
	return nil
}

// Requests returns a copy of every request recorded so far (since the
// last Forget), oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests)-s.from)
	for i, r := range s.requests[s.from:] {
		out[i] = r.clone()
	}
	return out
}

// Played counts the requests since Forget that played a scenario, not
// side requests (Aux: a thread's title, a probe), which an agent may send
// at any time (Codex asks for a title in the background, later on a busy
// machine): how a test proves that nothing it refused reached the agent.
func (s *Server) Played() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.requests[s.from:] {
		if !r.Aux {
			n++
		}
	}
	return n
}

// Forget hides the requests recorded so far from Requests and WaitRequest:
// the next test on a model its world shares counts from zero.
func (s *Server) Forget() {
	s.mu.Lock()
	s.from = len(s.requests)
	s.mu.Unlock()
}

// WaitRequest waits until a recorded request satisfies match and returns the
// first that does.
func (s *Server) WaitRequest(ctx context.Context, match func(Request) bool) (Request, error) {
	for {
		s.mu.Lock()
		ch := s.changed
		for _, r := range s.requests[s.from:] {
			if match(r) {
				s.mu.Unlock()
				return r.clone(), nil
			}
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Request{}, fmt.Errorf("fakemodel: no matching request: %w", ctx.Err())
		}
	}
}

func (r Request) clone() Request {
	c := r
	c.ToolResults = append([]string(nil), r.ToolResults...)
	if r.Params != nil {
		c.Params = make(map[string]string, len(r.Params))
		for k, v := range r.Params {
			c.Params[k] = v
		}
	}
	return c
}

func (s *Server) record(r Request) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.ID = len(s.requests) + 1
	s.requests = append(s.requests, r)
	s.notifyLocked()
	return r.ID
}

func (s *Server) update(id int, f func(*Request)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.requests[id-1])
	s.notifyLocked()
}

// notifyLocked wakes WaitRequest callers; the caller holds s.mu.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// ServeHTTP routes the APIs both agents use.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.serveAnthropic(w, r)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		s.recordOther(r, http.StatusOK)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 100})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		s.serveOpenAI(w, r)
	case r.Method == http.MethodPost && (r.URL.Path == "/v1/chat/completions" || r.URL.Path == "/chat/completions"):
		s.serveChat(w, r)
	case r.Method == http.MethodGet && (r.URL.Path == "/v1/models" || r.URL.Path == "/models"):
		s.recordOther(r, http.StatusOK)
		writeJSON(w, http.StatusOK, modelList(r))
	case r.Method == http.MethodGet && r.URL.Path == "/_fake/requests":
		writeJSON(w, http.StatusOK, s.Requests())
	case r.URL.Path == "/api/hello":
		// Claude Code 2.1.267 probes it at start-up.
		s.recordOther(r, http.StatusOK)
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case r.Method == http.MethodGet && (r.URL.Path == "/" || r.URL.Path == "/healthz"):
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	default:
		s.logger.Printf("unknown path %s %s (answered 404; add it to fakemodel if an agent needs it)", r.Method, r.URL.RequestURI())
		s.recordOther(r, http.StatusNotFound)
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"type": "not_found_error", "message": "fakemodel: unknown path " + r.URL.Path}})
	}
}

// recordPlayed records a request the scenarios answer, dumps its body and
// logs it: what it asked (t) and what the plan answers (toolName names a
// tool call as the API does).
func (s *Server) recordPlayed(api string, r *http.Request, body []byte, model, effort string, t turn, p plan, toolName func(*toolCall) string) int {
	rec := Request{API: api, Method: r.Method, Path: r.URL.RequestURI(), Model: model, Effort: effort, Client: clientOf(r), Aux: t.aux,
		Scenario: p.scenario, UserText: t.userText, Earlier: t.earlier, ToolResults: t.toolResults, Status: http.StatusOK, Received: time.Now()}
	if _, params, ok := ParseMarker(t.userText); ok && !t.aux {
		rec.Params = params
	}
	if p.tool != nil {
		rec.ToolCall = toolName(p.tool)
	}
	if p.status != 0 {
		rec.Status, rec.Finished = p.status, time.Now()
	}
	id := s.record(rec)
	s.dump(id, api, body)
	s.logger.Printf("#%d %s %s aux=%v scenario=%s tool_results=%d", id, api, r.URL.RequestURI(), t.aux, p.scenario, len(t.toolResults))
	return id
}

func (s *Server) recordOther(r *http.Request, status int) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	now := time.Now()
	id := s.record(Request{API: APIOther, Method: r.Method, Path: r.URL.RequestURI(), Client: clientOf(r), Aux: true, Status: status, Received: now, Finished: now})
	s.dump(id, APIOther, body)
}

func (s *Server) dump(id int, api string, body []byte) {
	if s.opts.DumpDir == "" || len(body) == 0 {
		return
	}
	name := filepath.Join(s.opts.DumpDir, fmt.Sprintf("%04d-%s.json", id, api))
	if err := os.WriteFile(name, body, 0o644); err != nil {
		s.logger.Printf("dump: %v", err)
	}
}

func modelList(r *http.Request) map[string]any {
	if r.Header.Get("anthropic-version") != "" || r.Header.Get("x-api-key") != "" {
		return map[string]any{"data": []map[string]any{{"type": "model", "id": "claude-sonnet-4-5", "display_name": "Fake Claude"}}, "has_more": false}
	}
	return map[string]any{"object": "list", "data": []map[string]any{{"id": "gpt-5-codex", "object": "model", "owned_by": "akk-fake"}}, "models": []any{}}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events and remembers whether the client went away.
type sse struct {
	w      http.ResponseWriter
	ctx    context.Context
	failed bool
}

func newSSE(w http.ResponseWriter, r *http.Request) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, ctx: r.Context()}
}

func (e *sse) event(name string, v any) {
	if e.failed {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own values always marshal
	}
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, data); err != nil {
		e.failed = true
		return
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// data writes one unnamed event, as Chat Completions streams do ("data:"
// lines only); raw is written as it is ("[DONE]").
func (e *sse) data(v any) {
	if e.failed {
		return
	}
	var data []byte
	if raw, ok := v.(string); ok {
		data = []byte(raw)
	} else {
		var err error
		if data, err = json.Marshal(v); err != nil {
			panic(err) // our own values always marshal
		}
	}
	if _, err := fmt.Fprintf(e.w, "data: %s\n\n", data); err != nil {
		e.failed = true
		return
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// sleep waits d unless the client goes away; it reports whether to go on.
func (e *sse) sleep(d time.Duration) bool {
	if e.failed {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-e.ctx.Done():
		e.failed = true
		return false
	}
}

// hold is the channel Release(name) closes.
func (s *Server) hold(name string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.holds[name]
	if !ok {
		c = make(chan struct{})
		s.holds[name] = c
	}
	return c
}

// Release ends the quiet part of every answer held with hold=name (now and
// later): a test lets the agent's turn go on once it has what it waited for,
// rather than racing a fixed duration.
func (s *Server) Release(name string) {
	c := s.hold(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-c:
	default:
		close(c)
	}
}

// quiet waits d (or, for a held plan, until it is released), sending a
// keep-alive every second; it reports whether to go on.
func (e *sse) quiet(p plan, keepAlive func()) bool {
	if p.released != nil {
		for {
			select {
			case <-p.released:
				return !e.failed
			case <-e.ctx.Done():
				e.failed = true
				return false
			case <-time.After(time.Second):
				keepAlive()
				if e.failed {
					return false
				}
			}
		}
	}
	d := p.quiet
	for d > 0 {
		step := min(d, time.Second)
		if !e.sleep(step) {
			return false
		}
		d -= step
		keepAlive()
	}
	return !e.failed
}

// comment writes an SSE comment line, which clients ignore: a keep-alive.
func (e *sse) comment() {
	if e.failed {
		return
	}
	if _, err := io.WriteString(e.w, ": keep-alive\n\n"); err != nil {
		e.failed = true
		return
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}

// readBody reads a JSON request body, keeping the raw bytes for dumps.
func readBody(r *http.Request, v any) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return body, fmt.Errorf("decode body: %w", err)
	}
	return body, nil
}

// plan decides the answer; an error scenario with times=N fails only the
// first N attempts at the same user text, then answers, so a test can watch
// an agent retry and recover.
func (s *Server) plan(api string, t turn) plan {
	p := decide(t)
	if p.hold != "" {
		p.released = s.hold(p.hold)
	}
	if p.status == 0 || t.aux {
		return p
	}
	_, params, _ := ParseMarker(t.userText)
	limit := intParam(params, "times", 0, 0, 1000)
	if limit == 0 {
		return p
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := api + "\x00" + t.userText
	if s.failures[key] >= limit {
		return plan{scenario: p.scenario, text: fmt.Sprintf("Recovered after %d failed attempts.", s.failures[key]), pieces: 1}
	}
	s.failures[key]++
	return p
}

// finish records the end of a streamed response.
func (s *Server) finish(id int, e *sse) {
	s.update(id, func(r *Request) {
		r.Finished = time.Now()
		r.Interrupted = e.failed || e.ctx.Err() != nil
	})
}
