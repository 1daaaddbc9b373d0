package domain

import "context"

// threadEndpoint is a thread of a thread transport (a Codex thread,
// driven through its app-server daemon), whose daemon itself says when a
// turn starts and ends.
type threadEndpoint struct {
	*ThreadCases
	tt *threadTransport
}

// readRecord: the daemon keeps the record and says itself how a turn
// stands when it is followed again.
func (s threadEndpoint) readRecord(context.Context, string, DurableMark, string) (TurnProgress, bool, error) {
	return TurnProgress{}, false, nil
}

// currentStep reads the daemon's pending question as one questionnaire
// step.
func (s threadEndpoint) currentStep(ctx context.Context, t Turn) (AgentKind, Terminal, InteractionStep, error) {
	st, ok := s.tt.calls.Question(t.NativeTurnID)
	if !ok || t.State != TurnAwaitingInteraction {
		return s.tt.Agent, Terminal{}, InteractionStep{}, E(CodeNoInteraction, "the daemon asks no question of this turn now")
	}
	return s.tt.Agent, Terminal{}, st, nil
}

// deliverAnswers gives a reserved step its answers through the daemon.
func (s threadEndpoint) deliverAnswers(seq context.Context, t Turn, term Terminal, fingerprint string, answers []StepAnswer) (AnswerStage, error) {
	return s.tt.calls.AnswerQuestion(seq, t.NativeTurnID, fingerprint, answers)
}

// turnSource follows the Turn through the daemon.
func (s threadEndpoint) turnSource(ctx context.Context, t Turn) (turnSource, bool, string) {
	return s.backendTurnSource(ctx, t)
}

// watchSource follows the Watch through the daemon.
func (s threadEndpoint) watchSource(ctx context.Context, w Watch) (watchSource, string) {
	return s.backendWatchSource(ctx, w)
}

// watchTarget is the thread id names, as its daemon lists it.
func (s threadEndpoint) watchTarget(ctx context.Context, id string) (watchAnchor, error) {
	tt, th, err := s.backendEndpointThread(ctx, id)
	if err != nil {
		return watchAnchor{}, err
	}
	return watchAnchor{ref: EndpointRef{Kind: tt.Endpoint, ID: th.ThreadID}, what: "thread", thread: th, daemon: tt.calls}, nil
}

// anchorWatch anchors on the turn the thread runs now (one a person or
// another client of its daemon started), exactly: the daemon names the
// turn, and its own events end the Watch. No input.
func (s threadEndpoint) anchorWatch(ctx context.Context, a watchAnchor) (watchAnchor, error) {
	turnID, err := a.daemon.RunningTurn(ctx, a.thread)
	if err != nil {
		return watchAnchor{}, &Error{Code: CodeUnavailable, Message: "could not read the thread from its daemon", Err: err}
	}
	if turnID == "" {
		return watchAnchor{}, E(CodeNothingToWatch, "the thread runs no turn; a Watch follows a task that is working")
	}
	a.nativeTurnID, a.exact = turnID, true
	return a, nil
}

// watchedLive checks that the watched thread is still loaded in its daemon.
func (s threadEndpoint) watchedLive(ctx context.Context, w Watch) error {
	if _, err := s.backendThread(ctx, w.Endpoint); err != nil {
		return E(CodeTerminalNotFound, "the watched thread is no longer loaded in its daemon")
	}
	return nil
}

// models reads the thread's model catalogue from its daemon.
func (s threadEndpoint) models(ctx context.Context, terminalID string) (ModelsResult, error) {
	return s.backendModels(ctx, terminalID)
}

// configured: the daemon answers prompts and steps itself.
func (s threadEndpoint) configured(endpointUse) error { return nil }

// readPrompt is the command approval the daemon waits on, with the
// thread's folder as its project. Accepted or declined, the turn goes on
// (a declined command is the model's to handle).
func (s threadEndpoint) readPrompt(ctx context.Context, t Turn) (promptRead, error) {
	pr, ok := s.tt.calls.Prompt(t.NativeTurnID)
	if !ok {
		if t.State != TurnAwaitingApproval {
			return promptRead{}, nil
		}
		// The daemon asked while another akkd followed the turn.
		const where = "where the thread is shown"
		return promptRead{pr: ApprovalPrompt{Present: true, Where: where,
			Reason: "the approval the daemon asked for is not followed by this akkd (it restarted meanwhile); answer it " + where}}, nil
	}
	facts := func(ctx context.Context) Terminal {
		term := Terminal{Agent: Agent{Kind: s.tt.Agent}}
		if th, err := s.backendThread(ctx, s.threadRef(t)); err == nil {
			term.Project = th.Cwd
		}
		return term
	}
	return promptRead{pr: pr, ruleFacts: facts}, nil
}

// sendAnswer gives the daemon one decision, if it still asks the request
// fingerprinted, and waits for it to say it is resolved.
func (s threadEndpoint) sendAnswer(seq context.Context, t Turn, _ promptRead, fingerprint string, d ApprovalDecision) (AnswerStage, error) {
	return s.tt.calls.Decide(seq, t.NativeTurnID, fingerprint, d)
}

// interruptible checks that the daemon started the turn and is reachable.
func (s threadEndpoint) interruptible(ctx context.Context, t Turn) (interruptTarget, error) {
	if t.NativeTurnID == "" {
		return interruptTarget{}, stateConflict(t, "cancel")
	}
	th, err := s.backendThread(ctx, s.threadRef(t))
	if err != nil {
		return interruptTarget{}, err
	}
	return interruptTarget{thread: th}, nil
}

// interrupt asks the daemon to interrupt the native turn; the monitor
// reports cancelled when the daemon says so.
func (s threadEndpoint) interrupt(seq context.Context, t Turn, target interruptTarget) error {
	return s.tt.calls.Interrupt(seq, target.thread, t.NativeTurnID)
}

// followable: the daemon started the turn and answers.
func (s threadEndpoint) followable(ctx context.Context, t Turn) error {
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
