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

func (s absentEndpoint) interruptible(context.Context, Turn) (interruptTarget, error) {
	return interruptTarget{}, s.refuse()
}

func (s absentEndpoint) interrupt(context.Context, Turn, interruptTarget) error { return s.refuse() }

func (s absentEndpoint) followable(context.Context, Turn) error { return s.refuse() }

func (s absentEndpoint) readRecord(context.Context, string, DurableMark, string) (TurnProgress, bool, error) {
	return TurnProgress{}, false, s.refuse()
}

func (s absentEndpoint) currentStep(context.Context, Turn) (AgentKind, Terminal, InteractionStep, error) {
	return "", Terminal{}, InteractionStep{}, s.refuse()
}

func (s absentEndpoint) deliverAnswers(context.Context, Turn, Terminal, string, []StepAnswer) (AnswerStage, error) {
	return AnswerNothing, s.refuse()
}

func (s absentEndpoint) turnSource(context.Context, Turn) (turnSource, bool, string) {
	return nil, false, s.why()
}

func (s absentEndpoint) watchSource(context.Context, Watch) (watchSource, string) {
	return nil, s.why()
}

func (s absentEndpoint) watchTarget(context.Context, string) (watchAnchor, error) {
	return watchAnchor{}, E(CodeTerminalNotFound, s.why())
}

func (s absentEndpoint) anchorWatch(context.Context, watchAnchor) (watchAnchor, error) {
	return watchAnchor{}, E(CodeTerminalNotFound, s.why())
}

func (s absentEndpoint) watchedLive(context.Context, Watch) error {
	return E(CodeTerminalNotFound, s.why())
}

func (s absentEndpoint) models(context.Context, string) (ModelsResult, error) {
	return ModelsResult{}, E(CodeTerminalNotFound, s.why())
}

func (s absentEndpoint) configured(endpointUse) error { return s.refuse() }

func (s absentEndpoint) readPrompt(context.Context, Turn) (promptRead, error) {
	return promptRead{}, s.refuse()
}

func (s absentEndpoint) sendAnswer(context.Context, Turn, promptRead, string, ApprovalDecision) (AnswerStage, error) {
	return AnswerNothing, s.refuse()
}
