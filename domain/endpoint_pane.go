package domain

import (
	"context"
	"errors"
	"log/slog"
)

// paneEndpoint is an agent's terminal pane, through the pane transport
// (PaneTransport): driven by keys, followed through its screen and its
// agent's record.
type paneEndpoint struct {
	basics
	turns    *turns // the panes' observer and locks (UsePanes)
	monitors *Monitors
	watches  *WatchCases
	natives  *NativeCases
}

// readRecord reads the pane's agent's record from mark.
func (s *paneEndpoint) readRecord(ctx context.Context, terminalID string, mark DurableMark, request string) (TurnProgress, bool, error) {
	term, err := s.turns.term.Observe(ctx, terminalID)
	if err != nil {
		return TurnProgress{}, false, E(CodeTerminalNotFound, "the pane is gone or its agent restarted; its record cannot be read")
	}
	p, err := s.turns.term.Progress(ctx, term, mark, request)
	if err != nil {
		return TurnProgress{}, false, &Error{Code: CodeUnavailable, Message: "could not read the agent's record", Err: err}
	}
	return p, true, nil
}

// currentStep reads the questionnaire step t may be answered on now from
// its pane.
func (s *paneEndpoint) currentStep(ctx context.Context, t Turn) (AgentKind, Terminal, InteractionStep, error) {
	if s.turns == nil {
		return "", Terminal{}, InteractionStep{}, E(CodeUnavailable, "interactions are not configured")
	}
	term, err := s.turns.term.Observe(ctx, t.TerminalID)
	if errors.Is(err, ErrTerminalGone) {
		return "", Terminal{}, InteractionStep{}, E(CodeTerminalNotFound, "the turn's pane is gone or its agent restarted")
	}
	if err != nil {
		return "", Terminal{}, InteractionStep{}, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	st, err := s.turns.term.Step(ctx, term)
	if err != nil {
		return "", Terminal{}, InteractionStep{}, &Error{Code: CodeUnavailable, Message: "could not read the questionnaire", Err: err}
	}
	if !answerableIn(t, st) {
		return "", Terminal{}, InteractionStep{}, E(CodeNoInteraction, "the pane shows no questionnaire step now")
	}
	return term.Agent.Kind, term, st, nil
}

// deliverAnswers gives a reserved step its answers as one key sequence
// into the pane.
func (s *paneEndpoint) deliverAnswers(seq context.Context, t Turn, term Terminal, fingerprint string, answers []StepAnswer) (AnswerStage, error) {
	return s.turns.term.AnswerStep(seq, term, fingerprint, answers)
}

// turnSource follows the Turn through the pane's observer: its looks at
// the screen and its reads of the agent's record. A Turn that waited on a
// prompt or step when this monitor began (a daemon's restart) waits until
// a look shows it.
func (s *paneEndpoint) turnSource(_ context.Context, t Turn) (turnSource, bool, string) {
	src := &paneTurnSource{log: slog.With("turn_id", t.ID), panes: s.turns.term,
		obs: s.turns.paneObserver(PaneFollow{TerminalID: t.TerminalID, Kind: "turn", Mark: t.Mark, Record: true}, s.clock)}
	return src, t.State == TurnAwaitingApproval || t.State == TurnAwaitingInteraction, ""
}

// watchSource follows the Watch through the pane's observer: its looks at
// the screen and, for an exact Watch, its reads of the agent's record.
func (s *paneEndpoint) watchSource(_ context.Context, w Watch) (watchSource, string) {
	f := PaneFollow{TerminalID: w.TerminalID, Kind: "watch", Mark: w.Mark, Record: w.Mode == WatchModeExact}
	return &paneWatchSource{log: slog.With("watch_id", w.ID), exact: w.Mode == WatchModeExact, obs: s.turns.paneObserver(f, s.clock)}, ""
}

// watchTarget is the pane id names, working or awaiting approval.
func (s *paneEndpoint) watchTarget(ctx context.Context, id string) (watchAnchor, error) {
	term, err := s.turns.term.Observe(ctx, id)
	if errors.Is(err, ErrTerminalGone) {
		return watchAnchor{}, E(CodeTerminalNotFound, "no terminal "+id)
	}
	if err != nil {
		return watchAnchor{}, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	if !term.Watchable() {
		return watchAnchor{}, E(CodeNothingToWatch, "the pane is "+string(term.ScreenState)+"; a Watch follows a task that is working or awaiting approval")
	}
	return watchAnchor{ref: EndpointRef{Kind: EndpointPane, ID: term.ID}, what: "terminal", term: term}, nil
}

// anchorWatch anchors on the task the pane runs now: exactly when the
// agent's record names it, else on its activity from the record's end.
func (s *paneEndpoint) anchorWatch(ctx context.Context, a watchAnchor) (watchAnchor, error) {
	var err error
	a.mark, a.exact, err = s.turns.term.AnchorWatch(ctx, a.term)
	if err != nil {
		return watchAnchor{}, &Error{Code: CodeUnavailable, Message: "could not read the agent's record", Err: err}
	}
	return a, nil
}

// watchedLive checks that the watched pane still runs the same agent.
func (s *paneEndpoint) watchedLive(ctx context.Context, w Watch) error {
	if _, err := s.turns.term.Observe(ctx, w.TerminalID); err != nil {
		return E(CodeTerminalNotFound, "the watched pane is gone or its agent restarted")
	}
	return nil
}

// models reads a pane's model catalogue (NativeCases.paneModels).
func (s *paneEndpoint) models(ctx context.Context, terminalID string) (ModelsResult, error) {
	return s.natives.paneModels(ctx, terminalID)
}

// configured: a pane answers prompts and steps once the pane transport
// is wired in.
func (s *paneEndpoint) configured(u endpointUse) error {
	if s.turns == nil {
		return E(CodeUnavailable, string(u)+" are not configured")
	}
	return nil
}

// readPrompt reads the permission prompt on the pane now: its hook's,
// when Claude Code's PermissionRequest hook holds it, else the screen's.
func (s *paneEndpoint) readPrompt(ctx context.Context, t Turn) (promptRead, error) {
	if s.turns == nil {
		return promptRead{}, E(CodeUnavailable, "approvals are not configured")
	}
	term, err := s.turns.term.Observe(ctx, t.TerminalID)
	if errors.Is(err, ErrTerminalGone) {
		return promptRead{}, E(CodeTerminalNotFound, "the pane is gone or its agent restarted")
	}
	if err != nil {
		return promptRead{}, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	return s.promptOn(ctx, term)
}

// promptOn reads the permission prompt on the pane term names.
func (s *paneEndpoint) promptOn(ctx context.Context, term Terminal) (promptRead, error) {
	pr, err := s.turns.term.Prompt(ctx, term)
	if err != nil {
		return promptRead{}, &Error{Code: CodeUnavailable, Message: "could not read the prompt", Err: err}
	}
	return promptRead{pr: pr, term: term}, nil
}

// sendAnswer answers the pane's prompt with its key plan (or its hook).
func (s *paneEndpoint) sendAnswer(seq context.Context, _ Turn, seen promptRead, fingerprint string, d ApprovalDecision) (AnswerStage, error) {
	return s.turns.term.Answer(seq, seen.term, fingerprint, d)
}

// interruptible checks that the pane shows a running turn.
func (s *paneEndpoint) interruptible(ctx context.Context, t Turn) (interruptTarget, error) {
	term, err := s.turns.term.Observe(ctx, t.TerminalID)
	if errors.Is(err, ErrTerminalGone) {
		return interruptTarget{}, E(CodeTerminalNotFound, "the turn's pane is gone or its agent restarted")
	}
	if err != nil {
		return interruptTarget{}, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	if term.ScreenState == ScreenIdle || term.ScreenState == ScreenUnknown || term.ScreenState == ScreenStartupDialog {
		return interruptTarget{}, E(CodeTerminalNotIdle, "the pane shows "+string(term.ScreenState)+", not a running turn; nothing was sent")
	}
	return interruptTarget{term: term}, nil
}

// interrupt presses the pane's interrupt key.
func (s *paneEndpoint) interrupt(seq context.Context, _ Turn, target interruptTarget) error {
	return s.turns.term.Interrupt(seq, target.term)
}

// followable: the pane still shows the same live agent.
func (s *paneEndpoint) followable(ctx context.Context, t Turn) error {
	if _, err := s.turns.term.Observe(ctx, t.TerminalID); err != nil {
		return E(CodeTerminalNotFound, "the turn's pane is gone or its agent restarted; close the turn")
	}
	return nil
}
