package domain

import (
	"errors"
	"fmt"
)

// Code is a stable machine code. It is the `code` of a problem+json response;
// handlers map each code to an HTTP status in one table.
type Code string

const (
	CodeInvalidRequest         Code = "invalid_request"
	CodeValidationFailed       Code = "validation_failed"
	CodeUnauthorized           Code = "unauthorized"
	CodeForbidden              Code = "forbidden"
	CodeCSRFRejected           Code = "csrf_rejected"
	CodeHostNotAllowed         Code = "host_not_allowed"
	CodeOriginNotAllowed       Code = "origin_not_allowed"
	CodeNotFound               Code = "not_found"
	CodeHostNotFound           Code = "host_not_found"
	CodeConversationNotFound   Code = "conversation_not_found"
	CodeNotificationNotFound   Code = "notification_not_found"
	CodeNotificationDelivered  Code = "notification_delivered"
	CodeNotificationIDRequired Code = "notification_id_required"
	CodeConflict               Code = "conflict"
	CodeTurnNotFound           Code = "turn_not_found"
	CodeSessionNotFound        Code = "session_not_found"
	CodeTerminalNotFound       Code = "terminal_not_found"
	CodeTerminalNotIdle        Code = "terminal_not_idle"
	CodeThreadNotIdle          Code = "thread_not_idle"
	CodeUnprofiledAgent        Code = "unprofiled_agent"
	CodeConflictActiveTurn     Code = "conflict_active_turn"
	CodeSlashCommandRejected   Code = "slash_command_rejected"
	CodeShellPrefixRejected    Code = "shell_prefix_rejected"
	CodeIdempotencyKeyReused   Code = "idempotency_key_reused"
	CodeSessionThreadChanged   Code = "session_thread_changed"
	CodeSessionTerminalGone    Code = "session_terminal_gone"
	CodeNativeIdentityUnproven Code = "native_identity_unproven"
	CodeThreadNotFound         Code = "thread_not_found"
	CodeThreadAlreadyCurrent   Code = "thread_already_current"
	CodeNoSendReadyTerminal    Code = "no_send_ready_terminal"
	CodeAmbiguousTarget        Code = "ambiguous_target"
	CodeTurnStateConflict      Code = "turn_state_conflict"
	CodeOfferExpired           Code = "offer_expired"
	// CodeActionGone: a one-tap action's token was used, or has expired.
	CodeActionGone            Code = "action_gone"
	CodePromptChanged         Code = "prompt_changed"
	CodePromptAlreadyAnswered Code = "prompt_already_answered"
	CodeDecisionUnavailable   Code = "decision_unavailable"
	CodeWatchNotFound         Code = "watch_not_found"
	CodeNothingToWatch        Code = "nothing_to_watch"
	CodeWatchStateConflict    Code = "watch_state_conflict"
	CodeWatchLimit            Code = "watch_limit_reached"
	CodeMCPSessionLimit       Code = "mcp_session_limit_reached"
	CodeStreamLimit           Code = "stream_limit_reached"
	CodeNoInteraction         Code = "no_interaction"
	CodeManualRequired        Code = "manual_required"
	CodeMethodNotAllowed      Code = "method_not_allowed"
	CodePayloadTooLarge       Code = "payload_too_large"
	CodeJSONTooDeep           Code = "json_too_deep"
	CodeUnavailable           Code = "unavailable"
	CodeStoreUnavailable      Code = "store_unavailable"
	// CodeNodeUnreachable: the fleet node that owns what the call names
	// does not answer; nothing was typed.
	CodeNodeUnreachable Code = "node_unreachable"
	// CodeNodeNotFound: no node of the fleet has this name.
	CodeNodeNotFound Code = "node_not_found"
	// CodeNodeLive: the node heartbeats; it cannot be removed.
	CodeNodeLive Code = "node_live"
	CodeInternal Code = "internal"
)

// FieldError names one invalid input field.
type FieldError struct {
	Field   string
	Message string
}

// Error is a domain error: a stable code, a message safe to show the caller,
// and the wrapped cause (never shown to the caller).
type Error struct {
	Code    Code
	Message string
	Fields  []FieldError
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// E builds a domain error.
func E(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }

// Invalid builds a validation_failed error (well-formed input the domain refuses) listing the offending fields.
func Invalid(msg string, fields ...FieldError) *Error {
	return &Error{Code: CodeValidationFailed, Message: msg, Fields: fields}
}

// ErrorCode returns the code of err, or CodeInternal when err carries none.
func ErrorCode(err error) Code {
	var de *Error
	if errors.As(err, &de) {
		return de.Code
	}
	return CodeInternal
}

// ErrNotFound is returned by store lookups that find nothing; use cases turn
// it into a specific code (host_not_found, ...).
var ErrNotFound = errors.New("not found")

// ErrRevisionConflict is returned by a compare-and-swap update whose expected
// revision is no longer current.
var ErrRevisionConflict = errors.New("revision conflict")
