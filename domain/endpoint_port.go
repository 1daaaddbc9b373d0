package domain

import "context"

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
	// readRecord reads what the agent recorded of the task on the endpoint
	// terminalID names, from mark (request: the followed turn's user
	// message, "" for a Watch's task). ok false: the endpoint keeps no
	// record to read from a mark (its daemon says how a turn stands when
	// it is followed again). No input.
	readRecord(ctx context.Context, terminalID string, mark DurableMark, request string) (p TurnProgress, ok bool, err error)
	// currentStep reads the questionnaire step t may be answered on now.
	currentStep(ctx context.Context, t Turn) (AgentKind, Terminal, InteractionStep, error)
	// deliverAnswers gives a reserved step its answers, once, under seq
	// (a bounded input step).
	deliverAnswers(seq context.Context, t Turn, term Terminal, fingerprint string, answers []StepAnswer) (AnswerStage, error)
	// turnSource is what the monitor follows t through: a stream of
	// observations in terms of no transport. unseenWait: a prompt or step
	// t waited on when this monitor began waits until the source shows it.
	// why, when t cannot be followed (the monitor stalls it).
	turnSource(ctx context.Context, t Turn) (src turnSource, unseenWait bool, why string)
	// watchSource is turnSource for w (why: the monitor invalidates it).
	watchSource(ctx context.Context, w Watch) (src watchSource, why string)
	// watchTarget finds the endpoint a Watch of id would observe, running
	// a task to watch now. No input.
	watchTarget(ctx context.Context, id string) (watchAnchor, error)
	// anchorWatch anchors a's Watch on the task running there now,
	// exactly when the endpoint can name it. No input.
	anchorWatch(ctx context.Context, a watchAnchor) (watchAnchor, error)
	// watchedLive checks that a timed-out Watch's endpoint is still there.
	watchedLive(ctx context.Context, w Watch) error
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

// watchAnchor is where a new Watch observes, as its endpoint found it.
type watchAnchor struct {
	ref  EndpointRef
	what string // "terminal" or "thread", as a refusal names it
	// exact: the Watch follows the task the record or the daemon names
	// (NativeTurnID, or the record from mark); else the pane's activity.
	exact        bool
	mark         DurableMark
	nativeTurnID string
	term         Terminal        // a pane's, as observed
	thread       BackendThread   // a thread's, as its daemon lists it
	daemon       ThreadTransport // what runs the thread
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
}

// where a person answers the prompt when AKK does not.
func (r promptRead) where() string {
	if r.pr.Where != "" {
		return r.pr.Where
	}
	return "where it is shown"
}

// unproven is why an answer short of verified leaves the prompt unproven.
func (r promptRead) unproven() string {
	if r.pr.Unproven != "" {
		return r.pr.Unproven
	}
	return "the answer to the permission prompt went out but its effect is not proven"
}

// rejectWaits: a rejection ends the agent's turn (ApprovalPrompt.RejectEndsTurn).
func (r promptRead) rejectWaits() bool { return r.pr.RejectEndsTurn }

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
