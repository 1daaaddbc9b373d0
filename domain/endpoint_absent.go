package domain

import (
	"context"
)

// absentEndpoint is a kind of endpoint this daemon has no transport for:
// a Codex thread's Turn or Watch stored while a backend was configured,
// read by a daemon started without one. It sends nothing: every action is
// refused, a prompt or step is not offered, and what the monitor would
// follow is stalled (a Turn) or invalidated (a Watch), as when the
// transport cannot be reached.
type absentEndpoint struct {
	kind EndpointKind
}

func (s absentEndpoint) why() string {
	return "no " + string(s.kind) + " transport is configured on this akkd (it was started without one)"
}

func (s absentEndpoint) refuse() error { return E(CodeUnavailable, s.why()) }

func (s absentEndpoint) Interruptible(context.Context, Turn) (EndpointTarget, error) {
	return EndpointTarget{}, s.refuse()
}

func (s absentEndpoint) Interrupt(context.Context, Turn, EndpointTarget) error { return s.refuse() }

func (s absentEndpoint) SendTarget(context.Context, string) (EndpointTarget, error) {
	return EndpointTarget{}, s.refuse()
}

func (s absentEndpoint) PrepareSubmit(context.Context, EndpointTarget, BackendTurnOptions) (DurableMark, error) {
	return "", s.refuse()
}

func (s absentEndpoint) Submit(context.Context, Turn, EndpointTarget, string, BackendTurnOptions) (string, SubmitStage, error) {
	return "", SubmitNothing, s.refuse()
}

func (s absentEndpoint) Followable(context.Context, Turn) error { return s.refuse() }

func (s absentEndpoint) ReadRecord(context.Context, string, DurableMark, string) (TurnProgress, bool, error) {
	return TurnProgress{}, false, s.refuse()
}

func (s absentEndpoint) CurrentStep(context.Context, Turn) (AgentKind, Terminal, InteractionStep, error) {
	return "", Terminal{}, InteractionStep{}, s.refuse()
}

func (s absentEndpoint) DeliverAnswers(context.Context, Turn, Terminal, string, []StepAnswer) (AnswerStage, error) {
	return AnswerNothing, s.refuse()
}

func (s absentEndpoint) TurnSource(context.Context, Turn) (TurnSource, bool, string) {
	return nil, false, s.why()
}

func (s absentEndpoint) WatchSource(context.Context, Watch) (WatchSource, string) {
	return nil, s.why()
}

func (s absentEndpoint) WatchTarget(context.Context, string) (WatchAnchor, error) {
	return WatchAnchor{}, E(CodeTerminalNotFound, s.why())
}

func (s absentEndpoint) AnchorWatch(context.Context, WatchAnchor) (WatchAnchor, error) {
	return WatchAnchor{}, E(CodeTerminalNotFound, s.why())
}

func (s absentEndpoint) WatchedLive(context.Context, Watch) error {
	return E(CodeTerminalNotFound, s.why())
}

func (s absentEndpoint) Models(context.Context, string) (ModelsResult, bool, error) {
	return ModelsResult{}, true, E(CodeTerminalNotFound, s.why())
}

func (s absentEndpoint) Configured(EndpointUse) error { return s.refuse() }

func (s absentEndpoint) ReadPrompt(context.Context, Turn) (PromptRead, error) {
	return PromptRead{}, s.refuse()
}

func (s absentEndpoint) SendAnswer(context.Context, Turn, PromptRead, string, ApprovalDecision) (AnswerStage, error) {
	return AnswerNothing, s.refuse()
}
