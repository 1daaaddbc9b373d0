package domain

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SendInput is a Send request.
type SendInput struct {
	TerminalID string `validate:"omitempty,max=100"`
	SessionID  string `validate:"omitempty,max=100"`
	// ConversationID names a backend conversation (Codex app-server).
	ConversationID     string `validate:"omitempty,max=200"`
	Request            string
	MessageID          string `validate:"omitempty,max=200"`
	InactivityMinutes  int    `validate:"omitempty,min=1,max=1440"`
	HardTimeoutMinutes int    `validate:"omitempty,min=1,max=10080"`
	// Identify: identify_and_send; the closed status probe, then the
	// dispatch, under one terminal lock (Codex).
	Identify bool
	// Model and ReasoningEffort: a backend conversation's model and
	// effort for this turn and the thread's later ones, from the daemon's
	// catalogue.
	Model           string `validate:"omitempty,max=80"`
	ReasoningEffort string `validate:"omitempty,max=40"`
}

// SendResult is what Send did.
type SendResult struct {
	Turn       Turn
	Watch      Watch // the Send's Watch ("" ID when it could not be stored)
	Warnings   []string
	Outcome    Outcome
	DoNotRetry bool
	Existing   bool // the idempotency key named an existing Turn; nothing was sent
	// ForegroundThreadID is what the identify probe read (provisional).
	ForegroundThreadID string
}

// MaxRequestBytes bounds a request's UTF-8 size (the terminal side passes
// it to tmux as one argument).
const MaxRequestBytes = 16 << 10

// normalizeRequest trims the white space the agents trim themselves, so the
// text AKK matches in the agent's record is the text it sent.
func normalizeRequest(req string) string { return strings.TrimSpace(req) }

// RequestFault is the rule a request's text breaks.
type RequestFault string

const (
	FaultNone      RequestFault = ""
	FaultEmpty     RequestFault = "empty"
	FaultNotUTF8   RequestFault = "not UTF-8"
	FaultTooLarge  RequestFault = "too large"
	FaultControl   RequestFault = "control character"
	FaultSlash     RequestFault = "slash command"
	FaultShell     RequestFault = "shell command"
	FaultPadded    RequestFault = "leading or trailing white space"
	FaultInvisible RequestFault = "zero-width or bidirectional control"
	requestControl              = "only printable text and newlines"
)

// CheckRequestText is the one rule for a request's text: the domain
// validates a Send with it, and a terminal adapter checks it again right
// before its first key. Not empty; UTF-8 within MaxRequestBytes; no control
// character but newline (a tab becomes spaces in some agents, an escape
// could end the bracketed paste); no zero-width or bidirectional control
// (Invisible); a first line that does not start a slash
// command or a shell command. padded says whether leading or trailing
// white space is a fault (the adapter's text must match the agent's record
// exactly; the domain trims it first).
func CheckRequestText(req string, padded bool) RequestFault {
	switch {
	case strings.TrimSpace(req) == "":
		return FaultEmpty
	case !utf8.ValidString(req):
		return FaultNotUTF8
	case len(req) > MaxRequestBytes:
		return FaultTooLarge
	case padded && strings.TrimFunc(req, unicode.IsSpace) != req:
		return FaultPadded
	}
	for _, r := range req {
		if r != '\n' && (unicode.IsControl(r) || r == '\u2028' || r == '\u2029') {
			return FaultControl
		}
		if Invisible(r) {
			return FaultInvisible
		}
	}
	first := strings.TrimSpace(strings.SplitN(strings.TrimLeft(req, " \t\n"), "\n", 2)[0])
	switch {
	case strings.HasPrefix(first, "/"):
		return FaultSlash
	case strings.HasPrefix(first, "!"):
		return FaultShell
	}
	return FaultNone
}

// Invisible reports whether r is a zero-width or bidirectional control
// (U+200B–U+200F, U+202A–U+202E, U+2066–U+2069, U+FEFF): text holding one
// does not read as what it is, and one before a slash command hides it
// from the first-line rule.
func Invisible(r rune) bool {
	return r >= 0x200B && r <= 0x200F || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 || r == 0xFEFF
}

// checkRequest applies the request rules that need no terminal.
func (tr *turns) checkRequest(req string) error {
	if strings.TrimSpace(req) == "" {
		return Invalid("request is empty", FieldError{Field: "request", Message: "must not be empty"})
	}
	if n := utf8.RuneCountInString(req); n > tr.cfg.MaxRequestRunes {
		return Invalid(fmt.Sprintf("request has %d characters; the limit is %d", n, tr.cfg.MaxRequestRunes),
			FieldError{Field: "request", Message: fmt.Sprintf("at most %d characters", tr.cfg.MaxRequestRunes)})
	}
	switch CheckRequestText(req, false) {
	case FaultEmpty:
		return Invalid("request is empty", FieldError{Field: "request", Message: "must not be empty"})
	case FaultNotUTF8:
		return Invalid("request is not valid UTF-8", FieldError{Field: "request", Message: "must be UTF-8"})
	case FaultTooLarge:
		return Invalid(fmt.Sprintf("request has %d bytes; the limit is %d", len(req), MaxRequestBytes),
			FieldError{Field: "request", Message: fmt.Sprintf("at most %d bytes", MaxRequestBytes)})
	case FaultControl:
		return Invalid("request contains control characters", FieldError{Field: "request", Message: requestControl})
	case FaultInvisible:
		return Invalid("request contains a zero-width or bidirectional control character", FieldError{Field: "request", Message: requestControl})
	case FaultSlash:
		return E(CodeSlashCommandRejected, "the first line is a slash command; AKK sends tasks, not agent commands")
	case FaultShell:
		return E(CodeShellPrefixRejected, "the first line starts with !, which runs a shell command directly in the agent")
	}
	return nil
}
