// Package handlers serves the REST contract (api/openapi.yaml): generated
// strict server plus thin handlers that decode, call the domain and map
// domain errors to RFC 9457 problems.
package handlers

import (
	"bytes"
	"context"
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
}

// EventHub tells SSE streams that new events were stored.
type EventHub interface {
	Subscribe() (<-chan struct{}, func())
}

// Server implements the generated StrictServerInterface.
type Server struct {
	Deps
	sessions uiSessions // the dashboard's
}

var _ StrictServerInterface = (*Server)(nil)

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

	s := &Server{Deps: d}
	strict := NewStrictHandlerWithOptions(s, nil, StrictHTTPServerOptions{
		RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, r, &domain.Error{Code: domain.CodeInvalidRequest, Message: "the request body could not be decoded", Err: err})
		},
		ResponseErrorHandlerFunc: writeError,
	})

	r := chi.NewRouter()
	r.Use(middleware.RequestID, d.Metrics.Middleware, recoverer, limitBody(MaxBodyBytes), s.authenticate, validator)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, domain.E(domain.CodeNotFound, "no route "+r.Method+" "+r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, domain.E(domain.CodeMethodNotAllowed, "method "+r.Method+" is not allowed on "+r.URL.Path))
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
	top := http.NewServeMux()
	top.Handle("/mcp", newMCPEndpoint(s, api, tools))
	ui := web.Handler()
	top.Handle("GET /{$}", ui)
	top.Handle("GET /ui/", ui)
	top.Handle("/", api)
	return top, nil
}

// validationProblem turns a contract validation failure into a problem.
func validationProblem(err error, status int) error {
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed) || status == http.StatusMethodNotAllowed:
		return domain.E(domain.CodeMethodNotAllowed, "this method is not allowed on this route")
	case status == http.StatusNotFound:
		return domain.E(domain.CodeNotFound, "no such route")
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i > 0 {
		msg = msg[:i]
	}
	var re *openapi3filter.RequestError
	field := ""
	if errors.As(err, &re) {
		if re.Parameter != nil {
			field = re.Parameter.Name
		}
		var se *openapi3.SchemaError
		if errors.As(re.Err, &se) {
			if re.Parameter != nil {
				msg = "parameter " + field + ": " + se.Reason
			} else {
				field = strings.Join(se.JSONPointer(), ".")
				msg = "request body: " + strings.TrimPrefix(field+" ", " ") + se.Reason
			}
		}
	}
	de := &domain.Error{Code: domain.CodeInvalidRequest, Message: msg, Err: err}
	if field != "" {
		de.Fields = []domain.FieldError{{Field: field, Message: msg}}
	}
	return de
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

func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithValue(r.Context(), requestKey{}, r))
		if publicPaths[r.URL.Path] || (r.URL.Path == "/v1/ui/session" && r.Method == http.MethodPost) {
			next.ServeHTTP(w, r)
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
