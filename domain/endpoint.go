package domain

import (
	"context"
	"strings"
)

// EndpointKind is the transport an endpoint is reached through.
type EndpointKind string

// Endpoint kinds.
const (
	// EndpointPane: an agent's terminal pane, driven by keys.
	EndpointPane EndpointKind = "pane"
	// EndpointCodexThread: a Codex thread, driven through its app-server
	// daemon.
	EndpointCodexThread EndpointKind = "codex_thread"
)

// The public ids of a Codex thread: its endpoint (what a backend Turn
// holds where a pane's Turn holds its terminal, so one Turn at a time
// holds a thread) and its conversation. This file alone writes and reads
// them.
const (
	backendConversationPrefix = "conv_cx_"
	backendEndpointPrefix     = "cx_"
)

// BackendConversationID is the conversation id of a backend thread.
func BackendConversationID(threadID string) string { return backendConversationPrefix + threadID }

// BackendEndpoint is the endpoint a backend Turn of the thread holds.
func BackendEndpoint(threadID string) string { return backendEndpointPrefix + threadID }

// conversationThread is the thread a backend conversation id names.
func conversationThread(id string) (string, bool) {
	threadID, ok := strings.CutPrefix(id, backendConversationPrefix)
	return threadID, ok && threadID != ""
}

// EndpointRef names what a Turn or a Watch holds: a pane by its terminal
// id, or a Codex thread by its thread id.
type EndpointRef struct {
	Kind EndpointKind
	ID   string
}

// ParseEndpoint reads a stored endpoint id (a Turn's or a Watch's
// TerminalID). It is the one place that tells a thread's endpoint from a
// pane.
func ParseEndpoint(id string) EndpointRef {
	if threadID, ok := strings.CutPrefix(id, backendEndpointPrefix); ok {
		return EndpointRef{Kind: EndpointCodexThread, ID: threadID}
	}
	return EndpointRef{Kind: EndpointPane, ID: id}
}

// String is the endpoint's stored id, as ParseEndpoint reads it.
func (r EndpointRef) String() string {
	if r.Kind == EndpointCodexThread {
		return BackendEndpoint(r.ID)
	}
	return r.ID
}

// turnEndpoint is what a Turn or a Watch holds, as the use cases drive it:
// each operation that differs between a pane and a Codex thread.
type turnEndpoint interface {
	// cancelTurn interrupts the running turn, once.
	cancelTurn(ctx context.Context, t Turn) (ActionResult, error)
	// renewTurn restarts monitoring of a stalled Turn. No input.
	renewTurn(ctx context.Context, t Turn) (ActionResult, error)
	// recoverTurn reconciles an unfinished Turn with what the agent
	// recorded. No input.
	recoverTurn(ctx context.Context, t Turn) (ActionResult, error)
	// approvalOf offers the approval a Turn waits on (nil when none is
	// shown).
	approvalOf(ctx context.Context, p Principal, t Turn) (*ApprovalView, error)
	// approveTurn answers that approval.
	approveTurn(ctx context.Context, p Principal, t Turn, d ApprovalDecision) (ActionResult, error)
	// currentStep reads the questionnaire step t may be answered on now.
	currentStep(ctx context.Context, t Turn) (AgentKind, Terminal, InteractionStep, error)
	// deliverAnswers gives a reserved step its answers.
	deliverAnswers(ctx context.Context, t Turn, term Terminal, fingerprint string, answers []StepAnswer) (AnswerStage, error)
	// turnFollower is what the monitor follows a Turn by (nil: the
	// Turn's end is stored already, as a Turn that cannot be followed).
	turnFollower(ctx context.Context, t Turn) follower
	// watchFollower is what the monitor follows a Watch by (nil, as
	// turnFollower).
	watchFollower(ctx context.Context, w Watch) follower
	// startWatch watches the task the endpoint named by in runs now.
	startWatch(ctx context.Context, p Principal, in NewWatchInput) (Watch, error)
	// watchedLive checks that a timed-out Watch's endpoint is still there.
	watchedLive(ctx context.Context, w Watch) error
	// reconcileWatch reconciles an exact Watch with what the agent
	// recorded. No input.
	reconcileWatch(ctx context.Context, w Watch) (Watch, error)
	// models reads the endpoint's model catalogue and the model and
	// effort in effect.
	models(ctx context.Context, terminalID string) (ModelsResult, error)
}

// endpointOf is the endpoint ref names.
func (s *Service) endpointOf(ref EndpointRef) turnEndpoint {
	if ref.Kind == EndpointCodexThread {
		return threadEndpoint{s}
	}
	return paneEndpoint{s}
}
