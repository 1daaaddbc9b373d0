package domain

import (
	"context"
	"strings"
	"sync"
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

// ThreadKind is what the domain knows of a thread transport besides its
// calls.
type ThreadKind struct {
	Endpoint EndpointKind // the kind of its endpoints
	// IDPrefix begins its endpoint ids ("cx_" and the thread id); "conv_"
	// and that is a thread's conversation id.
	IDPrefix string
	Agent    AgentKind    // the agent its threads run
	Path     DeliveryPath // how a Send reaches a thread
	Name     string       // what a person calls its daemon, in messages
}

// CodexThreads is Codex's app-server daemon as a thread transport.
var CodexThreads = ThreadKind{Endpoint: EndpointCodexThread, IDPrefix: "cx_", Agent: AgentCodex,
	Path: PathCodexBackend, Name: "Codex app-server daemon"}

// The public ids of a thread transport's thread: its endpoint (what a
// Turn of the thread holds where a pane's Turn holds its terminal, so one
// Turn at a time holds a thread) is the kind's id prefix and the thread
// id; its conversation is "conv_" and that. This file alone writes and
// reads them; a pane's ids have no such prefix ("term_…", "conv_…").
const conversationPrefix = "conv_"

// idPrefixes are the id prefixes of the thread kinds this process knows:
// Codex's always, another once it is registered (UseThreadTransport).
var idPrefixes = struct {
	sync.RWMutex
	byKind map[EndpointKind]string
}{byKind: map[EndpointKind]string{CodexThreads.Endpoint: CodexThreads.IDPrefix}}

// registerIDPrefix makes k's ids known to ParseEndpoint. A kind keeps the
// prefix it was first given.
func registerIDPrefix(k ThreadKind) {
	idPrefixes.Lock()
	defer idPrefixes.Unlock()
	if _, ok := idPrefixes.byKind[k.Endpoint]; !ok {
		idPrefixes.byKind[k.Endpoint] = k.IDPrefix
	}
}

// prefixOf is kind's id prefix, "" for a pane (or an unknown kind).
func prefixOf(kind EndpointKind) string {
	idPrefixes.RLock()
	defer idPrefixes.RUnlock()
	return idPrefixes.byKind[kind]
}

// kindOfID is the thread kind whose prefix begins id, with the rest.
func kindOfID(id string) (EndpointRef, bool) {
	idPrefixes.RLock()
	defer idPrefixes.RUnlock()
	for kind, prefix := range idPrefixes.byKind {
		if rest, ok := strings.CutPrefix(id, prefix); ok {
			return EndpointRef{Kind: kind, ID: rest}, true
		}
	}
	return EndpointRef{}, false
}

// BackendConversationID is the conversation id of a Codex thread.
func BackendConversationID(threadID string) string {
	return EndpointRef{Kind: EndpointCodexThread, ID: threadID}.ConversationID()
}

// BackendEndpoint is the endpoint a Turn of a Codex thread holds.
func BackendEndpoint(threadID string) string {
	return EndpointRef{Kind: EndpointCodexThread, ID: threadID}.String()
}

// conversationThread is the thread endpoint a thread's conversation id
// names.
func conversationThread(id string) (EndpointRef, bool) {
	rest, ok := strings.CutPrefix(id, conversationPrefix)
	if !ok {
		return EndpointRef{}, false
	}
	ref, ok := kindOfID(rest)
	return ref, ok && ref.ID != ""
}

// EndpointRef names what a Turn or a Watch holds: a pane by its terminal
// id, or a thread by its thread id.
type EndpointRef struct {
	Kind EndpointKind
	ID   string
}

// ParseEndpoint reads a stored endpoint id (a Turn's or a Watch's
// TerminalID). It is the one place that tells a thread's endpoint from a
// pane.
func ParseEndpoint(id string) EndpointRef {
	if ref, ok := kindOfID(id); ok {
		return ref
	}
	return EndpointRef{Kind: EndpointPane, ID: id}
}

// String is the endpoint's stored id, as ParseEndpoint reads it.
func (r EndpointRef) String() string { return prefixOf(r.Kind) + r.ID }

// turnEndpoint is what a Turn or a Watch holds, as the use cases drive it:
// each operation that differs between a pane and a Codex thread.
type turnEndpoint interface {
	// interruptible checks that t's endpoint runs a turn to interrupt now,
	// and reads what interrupting it needs. No input.
	interruptible(ctx context.Context, t Turn) (interruptTarget, error)
	// interrupt interrupts that turn, once, under seq (a bounded input
	// step).
	interrupt(seq context.Context, t Turn, target interruptTarget) error
	// followable checks that t's endpoint can be followed again (the same
	// live agent in its pane, its daemon answering). No input.
	followable(ctx context.Context, t Turn) error
	// recoverTurn reconciles an unfinished Turn with what the agent
	// recorded. No input.
	recoverTurn(ctx context.Context, t Turn) (ActionResult, error)
	// approvalOf offers the approval a Turn waits on (nil when none is
	// shown).
	approvalOf(ctx context.Context, p Principal, t Turn) (*ApprovalView, error)
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
	// readPrompt reads the permission prompt the endpoint shows t now
	// (Present false: none), with what answering that very prompt needs.
	// No input.
	readPrompt(ctx context.Context, t Turn) (promptRead, error)
	// sendAnswer answers the prompt seen once, if it is still the one
	// fingerprinted: keys into a pane, a decision to a daemon. It runs
	// under seq, a bounded input step; AnswerNothing: nothing was sent.
	sendAnswer(seq context.Context, t Turn, seen promptRead, fingerprint string, d ApprovalDecision) (AnswerStage, error)
	// configured says why the endpoint cannot answer prompts (approvals)
	// or steps (interactions) at all, before any state is read; nil when
	// it can.
	configured(u endpointUse) error
}

// interruptTarget is what an endpoint read to interrupt a turn: the pane
// it observed, or the thread's daemon.
type interruptTarget struct {
	term   Terminal
	thread BackendThread
}

// promptRead is a permission prompt as an endpoint read it.
type promptRead struct {
	pr ApprovalPrompt
	// term is the pane it was read on (what its answer is typed into, and
	// what a host's rules match on).
	term Terminal
	// ruleFacts, when set, reads the agent and folder a host's rules
	// match on (a thread's, looked up only when a rule needs them).
	ruleFacts func(ctx context.Context) Terminal
	// unproven is why an answer short of verified leaves it unproven.
	unproven string
	// where a person answers it when AKK does not ("in the pane").
	where string
	// rejectWaits: a rejection ends the agent's turn, which then waits for
	// the host's words (keys on a TUI's prompt); else the agent works on
	// with the rejection as the tool's result (a hook, a daemon).
	rejectWaits bool
}

// endpointUse is a kind of answer an endpoint may give a Turn.
type endpointUse string

const (
	useApprovals    endpointUse = "approvals"
	useInteractions endpointUse = "interactions"
)

// endpointRegistry holds the endpoint of each kind this daemon has a
// transport for: a pane's always; a Codex thread's once a Codex backend is
// wired in (UseThreadTransport).
type endpointRegistry struct {
	byKind map[EndpointKind]turnEndpoint
	// absent is the endpoint of a kind with none registered.
	absent func(EndpointKind) turnEndpoint
}

// of is the endpoint registered for ref's kind. A kind with none
// registered (a thread's Turn stored by a daemon that ran with a backend)
// is absent: it refuses every call and stalls what the monitor would
// follow.
func (r *endpointRegistry) of(ref EndpointRef) turnEndpoint {
	if e, ok := r.byKind[ref.Kind]; ok {
		return e
	}
	return r.absent(ref.Kind)
}

// has says whether an endpoint of kind is registered.
func (r *endpointRegistry) has(kind EndpointKind) bool {
	_, ok := r.byKind[kind]
	return ok
}

// register makes e the endpoint of kind.
func (r *endpointRegistry) register(kind EndpointKind, e turnEndpoint) {
	if r.byKind == nil {
		r.byKind = map[EndpointKind]turnEndpoint{}
	}
	r.byKind[kind] = e
}

// ConversationID is the public conversation id of the endpoint: a pane's
// (ConversationIDFor its terminal) or a thread's.
func (r EndpointRef) ConversationID() string {
	if prefix := prefixOf(r.Kind); prefix != "" {
		return conversationPrefix + prefix + r.ID
	}
	return ConversationIDFor(r.ID)
}
