package domain

import "context"

// Endpoint is what a Turn or a Watch holds, as the use cases drive it:
// each operation that differs between transports, and nothing of what it
// means for a Turn or a Watch. It is implemented outside the domain, one
// per kind of transport (the endpoints package: a pane's, a thread
// transport's), and wired in by kind (UseEndpoint).
type Endpoint interface {
	// Interruptible checks that t's endpoint runs a turn to interrupt now,
	// and reads what interrupting it needs. No input.
	Interruptible(ctx context.Context, t Turn) (EndpointTarget, error)
	// Interrupt interrupts that turn, once, under seq (a bounded input
	// step).
	Interrupt(seq context.Context, t Turn, target EndpointTarget) error
	// SendTarget observes the target a Send names by id (a pane's terminal
	// id, a thread's id). No input.
	SendTarget(ctx context.Context, id string) (EndpointTarget, error)
	// PrepareSubmit checks that target takes a request now, with opts (a
	// draft it can clear first; a model and effort its catalogue lists),
	// and reads the mark the agent's record of the request is read from.
	// No input.
	PrepareSubmit(ctx context.Context, target EndpointTarget, opts BackendTurnOptions) (DurableMark, error)
	// Submit puts reserved Turn t's request into target, once and never
	// retried, under seq (a bounded input step): typed into a pane, its
	// draft cleared first; started on a thread through its daemon. It
	// returns the furthest stage reached (SubmitNothing: provably no
	// input; a *Error then says why in the API's words) and the native
	// turn the endpoint started, when it names one.
	Submit(seq context.Context, t Turn, target EndpointTarget, request string, opts BackendTurnOptions) (nativeTurnID string, stage SubmitStage, err error)
	// Followable checks that t's endpoint can be followed again (the same
	// live agent in its pane, its daemon answering). No input.
	Followable(ctx context.Context, t Turn) error
	// ReadRecord reads what the agent recorded of the task on the endpoint
	// terminalID names, from mark (request: the followed turn's user
	// message, "" for a Watch's task). ok false: the endpoint keeps no
	// record to read from a mark (its daemon says how a turn stands when
	// it is followed again). No input.
	ReadRecord(ctx context.Context, terminalID string, mark DurableMark, request string) (p TurnProgress, ok bool, err error)
	// CurrentStep reads the questionnaire step t may be answered on now.
	CurrentStep(ctx context.Context, t Turn) (AgentKind, Terminal, InteractionStep, error)
	// DeliverAnswers gives a reserved step its answers, once, under seq
	// (a bounded input step).
	DeliverAnswers(seq context.Context, t Turn, term Terminal, fingerprint string, answers []StepAnswer) (AnswerStage, error)
	// TurnSource is what the monitor follows t through: a stream of
	// observations in terms of no transport. unseenWait: a prompt or step
	// t waited on when this monitor began waits until the source shows it.
	// why, when t cannot be followed (the monitor stalls it).
	TurnSource(ctx context.Context, t Turn) (src TurnSource, unseenWait bool, why string)
	// WatchSource is TurnSource for w (why: the monitor invalidates it).
	WatchSource(ctx context.Context, w Watch) (src WatchSource, why string)
	// WatchTarget finds the endpoint a Watch of id would observe, running
	// a task to watch now. No input.
	WatchTarget(ctx context.Context, id string) (WatchAnchor, error)
	// AnchorWatch anchors a's Watch on the task running there now,
	// exactly when the endpoint can name it. No input.
	AnchorWatch(ctx context.Context, a WatchAnchor) (WatchAnchor, error)
	// WatchedLive checks that a timed-out Watch's endpoint is still there.
	WatchedLive(ctx context.Context, w Watch) error
	// Models reads the endpoint's model catalogue and the model and
	// effort in effect, with no input. read false: the endpoint has no
	// catalogue to read so; a pane's native controls read it (keys,
	// under the terminal's lock).
	Models(ctx context.Context, terminalID string) (r ModelsResult, read bool, err error)
	// ReadPrompt reads the permission prompt the endpoint shows t now
	// (Present false: none), with what answering that very prompt needs.
	// No input.
	ReadPrompt(ctx context.Context, t Turn) (PromptRead, error)
	// SendAnswer answers the prompt seen once, if it is still the one
	// fingerprinted: keys into a pane, a decision to a daemon. It runs
	// under seq, a bounded input step; AnswerNothing: nothing was sent.
	SendAnswer(seq context.Context, t Turn, seen PromptRead, fingerprint string, d ApprovalDecision) (AnswerStage, error)
	// Configured says why the endpoint cannot answer prompts (approvals)
	// or steps (interactions) at all, before any state is read; nil when
	// it can.
	Configured(u EndpointUse) error
}

// EndpointTarget is what an endpoint read of its target to send it a
// request or interrupt its turn: the pane it observed, or the thread as
// its daemon lists it.
type EndpointTarget struct {
	Term   Terminal
	Thread BackendThread
}

// WatchAnchor is where a new Watch observes, as its endpoint found it.
type WatchAnchor struct {
	Ref  EndpointRef
	What string // "terminal" or "thread", as a refusal names it
	// Exact: the Watch follows the task the record or the daemon names
	// (NativeTurnID, or the record from mark); else the pane's activity.
	Exact        bool
	Mark         DurableMark
	NativeTurnID string
	Term         Terminal      // a pane's, as observed
	Thread       BackendThread // a thread's, as its daemon lists it
}

// PromptRead is a permission prompt as an endpoint read it.
type PromptRead struct {
	Prompt ApprovalPrompt
	// Term is the pane it was read on (what its answer is typed into, and
	// what a host's rules match on).
	Term Terminal
	// RuleFacts, when set, reads the agent and folder a host's rules
	// match on (a thread's, looked up only when a rule needs them).
	RuleFacts func(ctx context.Context) Terminal
}

// where a person answers the prompt when AKK does not.
func (r PromptRead) where() string {
	if r.Prompt.Where != "" {
		return r.Prompt.Where
	}
	return "where it is shown"
}

// unproven is why an answer short of verified leaves the prompt unproven.
func (r PromptRead) unproven() string {
	if r.Prompt.Unproven != "" {
		return r.Prompt.Unproven
	}
	return "the answer to the permission prompt went out but its effect is not proven"
}

// rejectWaits: a rejection ends the agent's turn (ApprovalPrompt.RejectEndsTurn).
func (r PromptRead) rejectWaits() bool { return r.Prompt.RejectEndsTurn }

// EndpointUse is a kind of answer an endpoint may give a Turn.
type EndpointUse string

const (
	UseApprovals    EndpointUse = "approvals"
	UseInteractions EndpointUse = "interactions"
)

// endpointRegistry holds the endpoint of each kind this daemon has a
// transport for, as cmd/akkd wires them (UseEndpoint): a pane's, and a
// Codex thread's once a Codex backend is wired in.
type endpointRegistry struct {
	byKind map[EndpointKind]Endpoint
	// absent is the endpoint of a kind with none registered.
	absent func(EndpointKind) Endpoint
}

// of is the endpoint registered for ref's kind. A kind with none
// registered (a thread's Turn stored by a daemon that ran with a backend)
// is absent: it refuses every call and stalls what the monitor would
// follow.
func (r *endpointRegistry) of(ref EndpointRef) Endpoint {
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
func (r *endpointRegistry) register(kind EndpointKind, e Endpoint) {
	if r.byKind == nil {
		r.byKind = map[EndpointKind]Endpoint{}
	}
	r.byKind[kind] = e
}
