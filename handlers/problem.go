package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"akk/domain"
)

// statusOf is the one table from domain codes to HTTP statuses.
var statusOf = map[domain.Code]int{
	domain.CodeInvalidRequest:         http.StatusBadRequest,
	domain.CodeValidationFailed:       http.StatusUnprocessableEntity,
	domain.CodeUnauthorized:           http.StatusUnauthorized,
	domain.CodeForbidden:              http.StatusForbidden,
	domain.CodeCSRFRejected:           http.StatusForbidden,
	domain.CodeHostNotAllowed:         http.StatusForbidden,
	domain.CodeOriginNotAllowed:       http.StatusForbidden,
	domain.CodeNotFound:               http.StatusNotFound,
	domain.CodeHostNotFound:           http.StatusNotFound,
	domain.CodeConversationNotFound:   http.StatusNotFound,
	domain.CodeNotificationNotFound:   http.StatusNotFound,
	domain.CodeNotificationDelivered:  http.StatusConflict,
	domain.CodeNotificationIDRequired: http.StatusConflict,
	domain.CodeConflict:               http.StatusConflict,
	domain.CodeTurnNotFound:           http.StatusNotFound,
	domain.CodeSessionNotFound:        http.StatusNotFound,
	domain.CodeTerminalNotFound:       http.StatusNotFound,
	domain.CodeTerminalNotIdle:        http.StatusConflict,
	domain.CodeThreadNotIdle:          http.StatusConflict,
	domain.CodeUnprofiledAgent:        http.StatusConflict,
	domain.CodeConflictActiveTurn:     http.StatusConflict,
	domain.CodeSlashCommandRejected:   http.StatusUnprocessableEntity,
	domain.CodeShellPrefixRejected:    http.StatusUnprocessableEntity,
	domain.CodeIdempotencyKeyReused:   http.StatusConflict,
	domain.CodeSessionThreadChanged:   http.StatusConflict,
	domain.CodeSessionTerminalGone:    http.StatusConflict,
	domain.CodeNativeIdentityUnproven: http.StatusConflict,
	domain.CodeThreadNotFound:         http.StatusNotFound,
	domain.CodeThreadAlreadyCurrent:   http.StatusConflict,
	domain.CodeNoSendReadyTerminal:    http.StatusConflict,
	domain.CodeAmbiguousTarget:        http.StatusConflict,
	domain.CodeOfferExpired:           http.StatusConflict,
	domain.CodeActionGone:             http.StatusGone,
	domain.CodePromptChanged:          http.StatusConflict,
	domain.CodePromptAlreadyAnswered:  http.StatusConflict,
	domain.CodeDecisionUnavailable:    http.StatusConflict,
	domain.CodeManualRequired:         http.StatusConflict,
	domain.CodeWatchNotFound:          http.StatusNotFound,
	domain.CodeNothingToWatch:         http.StatusConflict,
	domain.CodeWatchStateConflict:     http.StatusConflict,
	domain.CodeWatchLimit:             http.StatusTooManyRequests,
	domain.CodeMCPSessionLimit:        http.StatusTooManyRequests,
	domain.CodeStreamLimit:            http.StatusTooManyRequests,
	domain.CodeNoInteraction:          http.StatusConflict,
	domain.CodeTurnStateConflict:      http.StatusConflict,
	domain.CodeMethodNotAllowed:       http.StatusMethodNotAllowed,
	domain.CodePayloadTooLarge:        http.StatusRequestEntityTooLarge,
	domain.CodeJSONTooDeep:            http.StatusBadRequest,
	domain.CodeUnavailable:            http.StatusServiceUnavailable,
	domain.CodeStoreUnavailable:       http.StatusServiceUnavailable,
	domain.CodeNodeUnreachable:        http.StatusServiceUnavailable,
	domain.CodeNodeNotFound:           http.StatusNotFound,
	domain.CodeNodeLive:               http.StatusConflict,
	domain.CodeInternal:               http.StatusInternalServerError,
}

// StatusOf returns the HTTP status for a domain code.
func StatusOf(c domain.Code) int {
	if s, ok := statusOf[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

func problemOf(err error) Problem {
	var de *domain.Error
	if !errors.As(err, &de) {
		return Problem{Type: "about:blank", Title: http.StatusText(500), Status: 500,
			Code: string(domain.CodeInternal), Detail: ptr("internal error")}
	}
	status := StatusOf(de.Code)
	p := Problem{
		Type:   "urn:akk:problem:" + string(de.Code),
		Title:  http.StatusText(status),
		Status: status,
		Code:   string(de.Code),
	}
	if de.Message != "" {
		p.Detail = ptr(de.Message)
	}
	if len(de.Fields) > 0 {
		fe := make([]FieldError, len(de.Fields))
		for i, f := range de.Fields {
			fe[i] = FieldError{Field: f.Field, Message: f.Message}
		}
		p.Errors = &fe
	}
	return p
}

// WriteProblem writes err as the problem the handlers would.
func WriteProblem(w http.ResponseWriter, r *http.Request, err error) { writeError(w, r, err) }

// writeError answers err as problem+json. Internal errors are logged, never
// shown; a request whose client went away is not an error of the daemon's.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	p := problemOf(err)
	switch {
	case p.Status >= 500 && r.Context().Err() != nil && errors.Is(err, context.Canceled):
		slog.DebugContext(r.Context(), "request ended: the client went away", "method", r.Method, "path", publicPath(r.URL.Path))
	case p.Status >= 500:
		slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", publicPath(r.URL.Path), "err", err)
	}
	p.Instance = ptr(publicPath(r.URL.Path))
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(p.Status)
	json.NewEncoder(w).Encode(p)
}

func ptr[T any](v T) *T { return &v }
