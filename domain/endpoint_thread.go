package domain

import "context"

// threadEndpoint is a thread of a thread transport (a Codex thread,
// driven through its app-server daemon), whose daemon itself says when a
// turn starts and ends.
type threadEndpoint struct {
	*ThreadCases
	tt *threadTransport
}

// ReadRecord: the daemon keeps the record and says itself how a turn
// stands when it is followed again.
func (s threadEndpoint) ReadRecord(context.Context, string, DurableMark, string) (TurnProgress, bool, error) {
	return TurnProgress{}, false, nil
}

// CurrentStep reads the daemon's pending question as one questionnaire
// step.
func (s threadEndpoint) CurrentStep(ctx context.Context, t Turn) (AgentKind, Terminal, InteractionStep, error) {
	st, ok := s.tt.calls.Question(t.NativeTurnID)
	if !ok || t.State != TurnAwaitingInteraction {
		return s.tt.Agent, Terminal{}, InteractionStep{}, E(CodeNoInteraction, "the daemon asks no question of this turn now")
	}
	return s.tt.Agent, Terminal{}, st, nil
}

// DeliverAnswers gives a reserved step its answers through the daemon.
func (s threadEndpoint) DeliverAnswers(seq context.Context, t Turn, term Terminal, fingerprint string, answers []StepAnswer) (AnswerStage, error) {
	return s.tt.calls.AnswerQuestion(seq, t.NativeTurnID, fingerprint, answers)
}

// TurnSource follows the Turn through the daemon.
func (s threadEndpoint) TurnSource(ctx context.Context, t Turn) (TurnSource, bool, string) {
	return s.backendTurnSource(ctx, t)
}

// WatchSource follows the Watch through the daemon.
func (s threadEndpoint) WatchSource(ctx context.Context, w Watch) (WatchSource, string) {
	return s.backendWatchSource(ctx, w)
}

// WatchTarget is the thread id names, as its daemon lists it.
func (s threadEndpoint) WatchTarget(ctx context.Context, id string) (WatchAnchor, error) {
	tt, th, err := s.backendEndpointThread(ctx, id)
	if err != nil {
		return WatchAnchor{}, err
	}
	return WatchAnchor{Ref: EndpointRef{Kind: tt.Endpoint, ID: th.ThreadID}, What: "thread", Thread: th, Daemon: tt.calls}, nil
}

// AnchorWatch anchors on the turn the thread runs now (one a person or
// another client of its daemon started), exactly: the daemon names the
// turn, and its own events end the Watch. No input.
func (s threadEndpoint) AnchorWatch(ctx context.Context, a WatchAnchor) (WatchAnchor, error) {
	turnID, err := a.Daemon.RunningTurn(ctx, a.Thread)
	if err != nil {
		return WatchAnchor{}, &Error{Code: CodeUnavailable, Message: "could not read the thread from its daemon", Err: err}
	}
	if turnID == "" {
		return WatchAnchor{}, E(CodeNothingToWatch, "the thread runs no turn; a Watch follows a task that is working")
	}
	a.NativeTurnID, a.Exact = turnID, true
	return a, nil
}

// WatchedLive checks that the watched thread is still loaded in its daemon.
func (s threadEndpoint) WatchedLive(ctx context.Context, w Watch) error {
	if _, err := s.backendThread(ctx, w.Endpoint); err != nil {
		return E(CodeTerminalNotFound, "the watched thread is no longer loaded in its daemon")
	}
	return nil
}

// Models reads the thread's model catalogue from its daemon.
func (s threadEndpoint) Models(ctx context.Context, terminalID string) (ModelsResult, bool, error) {
	r, err := s.backendModels(ctx, terminalID)
	return r, true, err
}

// Configured: the daemon answers prompts and steps itself.
func (s threadEndpoint) Configured(EndpointUse) error { return nil }

// ReadPrompt is the command approval the daemon waits on, with the
// thread's folder as its project. Accepted or declined, the turn goes on
// (a declined command is the model's to handle).
func (s threadEndpoint) ReadPrompt(ctx context.Context, t Turn) (PromptRead, error) {
	pr, ok := s.tt.calls.Prompt(t.NativeTurnID)
	if !ok {
		if t.State != TurnAwaitingApproval {
			return PromptRead{}, nil
		}
		// The daemon asked while another akkd followed the turn.
		const where = "where the thread is shown"
		return PromptRead{Prompt: ApprovalPrompt{Present: true, Where: where,
			Reason: "the approval the daemon asked for is not followed by this akkd (it restarted meanwhile); answer it " + where}}, nil
	}
	facts := func(ctx context.Context) Terminal {
		term := Terminal{Agent: Agent{Kind: s.tt.Agent}}
		if th, err := s.backendThread(ctx, s.threadRef(t)); err == nil {
			term.Project = th.Cwd
		}
		return term
	}
	return PromptRead{Prompt: pr, RuleFacts: facts}, nil
}

// SendAnswer gives the daemon one decision, if it still asks the request
// fingerprinted, and waits for it to say it is resolved.
func (s threadEndpoint) SendAnswer(seq context.Context, t Turn, _ PromptRead, fingerprint string, d ApprovalDecision) (AnswerStage, error) {
	return s.tt.calls.Decide(seq, t.NativeTurnID, fingerprint, d)
}

// Interruptible checks that the daemon started the turn and is reachable.
func (s threadEndpoint) Interruptible(ctx context.Context, t Turn) (InterruptTarget, error) {
	if t.NativeTurnID == "" {
		return InterruptTarget{}, stateConflict(t, "cancel")
	}
	th, err := s.backendThread(ctx, s.threadRef(t))
	if err != nil {
		return InterruptTarget{}, err
	}
	return InterruptTarget{Thread: th}, nil
}

// Interrupt asks the daemon to interrupt the native turn; the monitor
// reports cancelled when the daemon says so.
func (s threadEndpoint) Interrupt(seq context.Context, t Turn, target InterruptTarget) error {
	return s.tt.calls.Interrupt(seq, target.Thread, t.NativeTurnID)
}

// Followable: the daemon started the turn and answers.
func (s threadEndpoint) Followable(ctx context.Context, t Turn) error {
	if t.NativeTurnID == "" {
		return E(CodeManualRequired, "the daemon's id of the turn was never recorded; close the turn")
	}
	_, err := s.backendThread(ctx, s.threadRef(t))
	return err
}

// threadRef is the thread t's daemon runs its turn on.
func (s threadEndpoint) threadRef(t Turn) EndpointRef {
	return EndpointRef{Kind: s.tt.Endpoint, ID: t.NativeThreadID}
}

// UseThreadTransport wires a thread transport in: its threads are listed
// as conversations, may be sent to and watched, and their prompts and
// questions answered. A kind whose ids could be read as another's (an
// empty prefix, one that begins another's) is a wiring mistake: it
// panics, before any id is read.
func (s *ThreadCases) UseThreadTransport(k ThreadKind, t ThreadTransport) {
	if err := registerIDPrefix(k); err != nil {
		panic(err)
	}
	tt := &threadTransport{ThreadKind: k, calls: t}
	if s.threadKinds == nil {
		s.threadKinds = map[EndpointKind]*threadTransport{}
	}
	s.threadKinds[k.Endpoint] = tt
	s.endpoints.register(k.Endpoint, threadEndpoint{s, tt})
}
