// Package handlers serves the REST contract (api/openapi.yaml): generated
// strict server plus thin handlers that decode, call the domain and map
// domain errors to RFC 9457 problems.
package handlers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	nethttpmiddleware "github.com/oapi-codegen/nethttp-middleware"

	"akk/api"
	"akk/domain"
	"akk/web"
)

// Deps is what the HTTP layer needs.
type Deps struct {
	Service *domain.Service
	Hub     EventHub
	Metrics *Metrics
	Version string
	Log     *slog.Logger
	// Heartbeat is the SSE comment interval; default 15 s.
	Heartbeat time.Duration
	// MCPHandshakeTimeout ends an MCP session that has not finished its
	// handshake (notifications/initialized) by then; default 1 min.
	MCPHandshakeTimeout time.Duration
	// MCPIdleBeforeEviction is how long an MCP session must have had no
	// request before a new session of its principal at the limit may end
	// it; default 1 s (a session in its handshake is never idle that long).
	MCPIdleBeforeEviction time.Duration
	// AllowedHosts are the host names (a port is ignored) a request may
	// name in its Host header, and an Origin header may name, besides the
	// loopback names localhost, 127.0.0.1 and ::1, which are always
	// allowed. "*" allows any Host (behind a reverse proxy that checks
	// it); an Origin must then name the request's own host.
	AllowedHosts []string
	// MetricsToken, when set, is the bearer token /metrics needs; empty,
	// /metrics is public.
	MetricsToken string
	// Fleet is the daemons sharing the store; nil on its own.
	Fleet Fleet
	// ClaudeHooks serves Claude Code's http hooks (claudehook.Path); nil:
	// not served. It checks its own credential.
	ClaudeHooks http.Handler
}

// EventHub tells SSE streams that new events were stored.
type EventHub interface {
	Subscribe() (<-chan struct{}, func())
}

// Server implements the generated StrictServerInterface.
type Server struct {
	Deps
	sessions uiSessions   // the dashboard's
	streams  openStreams  // the event streams open now
	mcp      *mcpEndpoint // its sessions
	hosts    hostPolicy
}

var _ StrictServerInterface = (*Server)(nil)

// actionsPrefix is where one-tap actions are posted: the token in the path
// is the credential, so only a POST is taken without another, and the path
// is never written anywhere (publicPath).
const actionsPrefix = "/v1/actions/"

// publicPath is a path as it may be said in an answer or a log: a one-tap
// action's token left out.
func publicPath(p string) string {
	if strings.HasPrefix(p, actionsPrefix) {
		return actionsPrefix + "{token}"
	}
	return p
}

// publicPaths need no token: the operations with `security: []` in the
// contract (a test keeps the two in step).
var publicPaths = map[string]bool{"/v1/health": true, "/openapi.yaml": true, "/metrics": true}

// New returns the daemon's HTTP handler with every route in one place.
func New(d Deps) (http.Handler, error) {
	if d.Heartbeat == 0 {
		d.Heartbeat = 15 * time.Second
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.MCPHandshakeTimeout == 0 {
		d.MCPHandshakeTimeout = time.Minute
	}
	if d.MCPIdleBeforeEviction == 0 {
		d.MCPIdleBeforeEviction = time.Second
	}
	spec, err := openapi3.NewLoader().LoadFromData(api.Spec)
	if err != nil {
		return nil, fmt.Errorf("load contract: %w", err)
	}
	spec.Servers = nil // match requests on any listen address
	validator := nethttpmiddleware.OapiRequestValidatorWithOptions(spec, &nethttpmiddleware.Options{
		Options:               openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, MultiError: false},
		SilenceServersWarning: true,
		ErrorHandlerWithOpts: func(ctx context.Context, err error, w http.ResponseWriter, r *http.Request, o nethttpmiddleware.ErrorHandlerOpts) {
			writeError(w, r, validationProblem(err, o.StatusCode))
		},
	})

	s := &Server{Deps: d, hosts: newHostPolicy(d.AllowedHosts)}
	strict := NewStrictHandlerWithOptions(s, nil, StrictHTTPServerOptions{
		RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, r, &domain.Error{Code: domain.CodeInvalidRequest, Message: "the request body could not be decoded", Err: err})
		},
		ResponseErrorHandlerFunc: writeError,
	})

	r := chi.NewRouter()
	r.Use(middleware.RequestID, noStore, d.Metrics.Middleware, recoverer, limitBody(MaxBodyBytes), s.authenticate, validator, s.routeInFleet)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, domain.E(domain.CodeNotFound, "no route "+r.Method+" "+publicPath(r.URL.Path)))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, domain.E(domain.CodeMethodNotAllowed, "method "+r.Method+" is not allowed on "+publicPath(r.URL.Path)))
	})
	api := HandlerWithOptions(strict, ChiServerOptions{
		BaseRouter: r,
		ErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, r, &domain.Error{Code: domain.CodeInvalidRequest, Message: err.Error(), Err: err})
		},
	})
	// The dashboard: static files only, no authority of its own (it calls
	// the routes above like any host).
	tools, err := buildMCPTools(spec)
	if err != nil {
		return nil, err
	}
	s.mcp = newMCPEndpoint(s, api, tools)
	// A rotated or deleted host's streams and MCP sessions end at once.
	d.Service.OnHostRevoked(s.revokeHost)
	top := http.NewServeMux()
	top.Handle("/mcp", s.mcp)
	if d.ClaudeHooks != nil {
		top.Handle("/hooks/claude-code", d.ClaudeHooks)
	}
	ui := web.Handler()
	top.Handle("GET /{$}", ui)
	top.Handle("GET /ui/", ui)
	top.Handle("GET /sw.js", ui)
	top.Handle("/", api)
	return s.hosts.checkHost(top), nil
}

// noStore marks every API answer as one no cache may keep: they carry
// Turn texts, commands and tokens (a browser's disk cache would keep them
// past sign-out).
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			w.Header().Set("Cache-Control", "no-store")
		}
		next.ServeHTTP(w, r)
	})
}

// validationProblem turns a contract validation failure into a problem.
func validationProblem(err error, status int) error {
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed) || status == http.StatusMethodNotAllowed:
		return domain.E(domain.CodeMethodNotAllowed, "this method is not allowed on this route")
	case status == http.StatusNotFound:
		return domain.E(domain.CodeNotFound, "no such route")
	}
	// The message is built from the field and the reason only: a
	// SchemaError's Error() renders the schema and the whole value.
	var re *openapi3filter.RequestError
	var se *openapi3.SchemaError
	field, msg := "", ""
	switch {
	case errors.As(err, &re) && errors.As(re.Err, &se):
		if re.Parameter != nil {
			field = clip(re.Parameter.Name, 100)
			msg = "parameter " + field + ": " + clip(se.Reason, 150)
		} else {
			field = clip(strings.Join(se.JSONPointer(), "."), 100)
			msg = "request body: " + strings.TrimPrefix(field+" ", " ") + clip(se.Reason, 150)
		}
	default:
		if re != nil && re.Parameter != nil {
			field = clip(re.Parameter.Name, 100)
		}
		msg, _, _ = strings.Cut(err.Error(), "\n")
		msg = clip(msg, 300)
	}
	de := &domain.Error{Code: domain.CodeInvalidRequest, Message: msg, Err: err}
	if field != "" {
		de.Fields = []domain.FieldError{{Field: field, Message: msg}}
	}
	return de
}

// clip cuts s to at most n bytes on a rune boundary, marking a cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n -= len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// MaxBodyBytes bounds a request body. The largest body the contract allows
// (a request of at most 16 KiB, JSON-escaped) fits many times over.
const MaxBodyBytes = 64 << 10

// limitBody reads a request body whole, up to max bytes, before anything
// else sees it: a larger one is refused with 413 and never held in memory.
func limitBody(max int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tooLarge := domain.E(domain.CodePayloadTooLarge, fmt.Sprintf("the request body is larger than %d bytes", max))
			if r.ContentLength > max {
				w.Header().Set("Connection", "close")
				writeError(w, r, tooLarge)
				return
			}
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
			var mbe *http.MaxBytesError
			switch {
			case errors.As(err, &mbe):
				w.Header().Set("Connection", "close")
				writeError(w, r, tooLarge)
				return
			case err != nil:
				writeError(w, r, &domain.Error{Code: domain.CodeInvalidRequest, Message: "the request body could not be read", Err: err})
				return
			}
			// One JSON value and nothing after it, in valid UTF-8: the
			// decoders behind would ignore trailing data and replace
			// invalid bytes, so a request would not be what was sent.
			if len(bytes.TrimSpace(body)) > 0 && strings.Contains(r.Header.Get("Content-Type"), "json") {
				if !utf8.Valid(body) {
					writeError(w, r, domain.E(domain.CodeInvalidRequest, "the request body is not valid UTF-8"))
					return
				}
				if jsonDepth(body) > MaxJSONDepth {
					writeError(w, r, domain.E(domain.CodeJSONTooDeep, fmt.Sprintf("the request body nests arrays and objects more than %d deep", MaxJSONDepth)))
					return
				}
				if !json.Valid(body) {
					writeError(w, r, domain.E(domain.CodeInvalidRequest, "the request body is not one JSON value (malformed, or data after it)"))
					return
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			next.ServeHTTP(w, r)
		})
	}
}

// MaxJSONDepth bounds how deeply a request body's arrays and objects nest
// (no request of the contract needs more than a few levels). A deeper body
// is refused before it is decoded or validated: the contract validator's
// cost grows with the square of the depth.
const MaxJSONDepth = 16

// jsonDepth is the deepest nesting of arrays and objects in b, counting
// brackets outside strings; it does not check that b is well formed.
func jsonDepth(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

func recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// authenticate resolves the bearer token (and AKK-Conversation) into the
// request's principal. Public paths pass without one.
// bearer authenticates r by its Authorization: Bearer token (any case of
// the scheme). On failure it has written the 401 problem and ok is false.
func (s *Server) bearer(w http.ResponseWriter, r *http.Request) (domain.Principal, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="akk"`)
		writeError(w, r, domain.E(domain.CodeUnauthorized, "an Authorization: Bearer token is required"))
		return domain.Principal{}, false
	}
	p, err := s.Service.Authenticate(r.Context(), strings.TrimSpace(token))
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="akk", error="invalid_token"`)
		writeError(w, r, err)
		return domain.Principal{}, false
	}
	return p, true
}

// metricsAuthorized reports whether r carries the metrics token, compared
// in constant time (of hashes, so not even its length shows).
func (s *Server) metricsAuthorized(r *http.Request) bool {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got, want := sha256.Sum256([]byte(strings.TrimSpace(token))), sha256.Sum256([]byte(s.MetricsToken))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), requestKey{}, r))
		if r.URL.Path == "/metrics" && s.MetricsToken != "" && !s.metricsAuthorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="akk-metrics"`)
			writeError(w, r, domain.E(domain.CodeUnauthorized, "/metrics needs Authorization: Bearer and the metrics token"))
			return
		}
		if publicPaths[r.URL.Path] || (r.URL.Path == "/v1/ui/session" && r.Method == http.MethodPost) ||
			strings.HasPrefix(r.URL.Path, actionsPrefix) { // the token is the credential; any other method is 405
			next.ServeHTTP(w, r)
			return
		}
		if s.Fleet != nil && r.Header.Get("AKK-Node") != "" {
			// Another node of the fleet forwarded this call: its signature,
			// never a token, names the principal.
			p, err := s.Fleet.Verify(r)
			if err != nil {
				writeError(w, r, err)
				return
			}
			ctx := context.WithValue(domain.WithPrincipal(r.Context(), p), forwardedKey{}, true)
			next.ServeHTTP(w, r.WithContext(ctx))
			return
		}
		auth := r.Header.Get("Authorization")
		if auth == "" {
			if cr, had, err := s.cookieAuth(w, r); had {
				if err != nil {
					writeError(w, r, err)
					return
				}
				next.ServeHTTP(w, cr)
				return
			}
		}
		p, ok := s.bearer(w, r)
		if !ok {
			return
		}
		conv := r.Header.Get("AKK-Conversation")
		if len(conv) > 256 {
			writeError(w, r, domain.Invalid("AKK-Conversation is longer than 256 characters",
				domain.FieldError{Field: "AKK-Conversation", Message: "at most 256 characters"}))
			return
		}
		p.Conversation = conv
		next.ServeHTTP(w, r.WithContext(domain.WithPrincipal(r.Context(), p)))
	})
}
