// Package panetest makes a pane transport of a test's fakes, as one
// adapter (agentpane) is the product's.
package panetest

import (
	"context"

	"akk/domain"
)

// Panes is a pane transport made of a test's fakes: a Turn side, and the approvals, steps, Watch anchor and
// native controls a test gives it. Those it is not given show nothing
// (None). A test that needs an ability of its own (a clear key, a
// thread anchor, screens, model controls) embeds Panes in a struct that
// has it.
type Panes struct {
	domain.TurnTerminal
	domain.ApprovalTerminal
	domain.InteractionTerminal
	domain.WatchTerminal
	domain.NativeControls
}

// Of is term's pane transport, showing nothing else.
func Of(term domain.TurnTerminal) Panes {
	return Panes{term, None{}, None{}, None{}, None{}}
}

// With is p with each part in the roles it plays (not the Turn side).
func (p Panes) With(parts ...any) Panes {
	for _, part := range parts {
		if a, ok := part.(domain.ApprovalTerminal); ok {
			p.ApprovalTerminal = a
		}
		if s, ok := part.(domain.InteractionTerminal); ok {
			p.InteractionTerminal = s
		}
		if a, ok := part.(domain.WatchTerminal); ok {
			p.WatchTerminal = a
		}
		if n, ok := part.(domain.NativeControls); ok {
			p.NativeControls = n
		}
	}
	return p
}

// None is a pane side that shows nothing: no permission prompt, no
// questionnaire step, a best-effort Watch anchor, no native control. It
// sends nothing.
type None struct{}

func (None) Prompt(context.Context, domain.Terminal) (domain.ApprovalPrompt, error) {
	return domain.ApprovalPrompt{}, nil
}
func (None) Answer(context.Context, domain.Terminal, string, domain.ApprovalDecision) (domain.AnswerStage, error) {
	return domain.AnswerNothing, domain.ErrPromptChanged
}
func (None) Step(context.Context, domain.Terminal) (domain.InteractionStep, error) {
	return domain.InteractionStep{}, nil
}
func (None) AnswerStep(context.Context, domain.Terminal, string, []domain.StepAnswer) (domain.AnswerStage, error) {
	return domain.AnswerNothing, domain.ErrPromptChanged
}
func (None) AnchorWatch(context.Context, domain.Terminal) (domain.DurableMark, bool, error) {
	return "", false, nil
}
func (None) StatusCard(context.Context, domain.Terminal) (domain.NativeStatus, domain.AnswerStage, error) {
	return domain.NativeStatus{}, domain.AnswerNothing, domain.ErrNativeUnsupported
}
func (None) WorkingStatusCard(context.Context, domain.Terminal) (domain.NativeStatus, domain.AnswerStage, error) {
	return domain.NativeStatus{}, domain.AnswerNothing, domain.ErrNativeUnsupported
}
func (None) NewThread(context.Context, domain.Terminal) (domain.AnswerStage, error) {
	return domain.AnswerNothing, domain.ErrNativeUnsupported
}
func (None) ResumeThread(context.Context, domain.Terminal, string) (domain.AnswerStage, error) {
	return domain.AnswerNothing, domain.ErrNativeUnsupported
}
