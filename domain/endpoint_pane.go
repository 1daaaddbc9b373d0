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

// ReadRecord reads the pane's agent's record from mark.
func (s *paneEndpoint) ReadRecord(ctx context.Context, terminalID string, mark DurableMark, request string) (TurnProgress, bool, error) {
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

// CurrentStep reads the questionnaire step t may be answered on now from
// its pane.
func (s *paneEndpoint) CurrentStep(ctx context.Context, t Turn) (AgentKind, Terminal, InteractionStep, error) {
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

// DeliverAnswers gives a reserved step its answers as one key sequence
// into the pane.
func (s *paneEndpoint) DeliverAnswers(seq context.Context, t Turn, term Terminal, fingerprint string, answers []StepAnswer) (AnswerStage, error) {
	return s.turns.term.AnswerStep(seq, term, fingerprint, answers)
}

// TurnSource follows the Turn through the pane's observer: its looks at
// the screen and its reads of the agent's record. A Turn that waited on a
// prompt or step when this monitor began (a daemon's restart) waits until
// a look shows it.
func (s *paneEndpoint) TurnSource(_ context.Context, t Turn) (TurnSource, bool, string) {
	src := &paneTurnSource{log: slog.With("turn_id", t.ID), panes: s.turns.term,
		obs: s.turns.paneObserver(PaneFollow{TerminalID: t.TerminalID, Kind: "turn", Mark: t.Mark, Record: true}, s.clock)}
	return src, t.State == TurnAwaitingApproval || t.State == TurnAwaitingInteraction, ""
}

// WatchSource follows the Watch through the pane's observer: its looks at
// the screen and, for an exact Watch, its reads of the agent's record.
func (s *paneEndpoint) WatchSource(_ context.Context, w Watch) (WatchSource, string) {
	f := PaneFollow{TerminalID: w.TerminalID, Kind: "watch", Mark: w.Mark, Record: w.Mode == WatchModeExact}
	return &paneWatchSource{log: slog.With("watch_id", w.ID), exact: w.Mode == WatchModeExact, obs: s.turns.paneObserver(f, s.clock)}, ""
}

// WatchTarget is the pane id names, working or awaiting approval.
func (s *paneEndpoint) WatchTarget(ctx context.Context, id string) (WatchAnchor, error) {
	term, err := s.turns.term.Observe(ctx, id)
	if errors.Is(err, ErrTerminalGone) {
		return WatchAnchor{}, E(CodeTerminalNotFound, "no terminal "+id)
	}
	if err != nil {
		return WatchAnchor{}, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	if !term.Watchable() {
		return WatchAnchor{}, E(CodeNothingToWatch, "the pane is "+string(term.ScreenState)+"; a Watch follows a task that is working or awaiting approval")
	}
	return WatchAnchor{Ref: EndpointRef{Kind: EndpointPane, ID: term.ID}, What: "terminal", Term: term}, nil
}

// AnchorWatch anchors on the task the pane runs now: exactly when the
// agent's record names it, else on its activity from the record's end.
func (s *paneEndpoint) AnchorWatch(ctx context.Context, a WatchAnchor) (WatchAnchor, error) {
	var err error
	a.Mark, a.Exact, err = s.turns.term.AnchorWatch(ctx, a.Term)
	if err != nil {
		return WatchAnchor{}, &Error{Code: CodeUnavailable, Message: "could not read the agent's record", Err: err}
	}
	return a, nil
}

// WatchedLive checks that the watched pane still runs the same agent.
func (s *paneEndpoint) WatchedLive(ctx context.Context, w Watch) error {
	if _, err := s.turns.term.Observe(ctx, w.TerminalID); err != nil {
		return E(CodeTerminalNotFound, "the watched pane is gone or its agent restarted")
	}
	return nil
}

// Models reads a pane's model catalogue (NativeCases.paneModels).
func (s *paneEndpoint) Models(ctx context.Context, terminalID string) (ModelsResult, error) {
	return s.natives.paneModels(ctx, terminalID)
}

// Configured: a pane answers prompts and steps once the pane transport
// is wired in.
func (s *paneEndpoint) Configured(u EndpointUse) error {
	if s.turns == nil {
		return E(CodeUnavailable, string(u)+" are not configured")
	}
	return nil
}

// ReadPrompt reads the permission prompt on the pane now: its hook's,
// when Claude Code's PermissionRequest hook holds it, else the screen's.
func (s *paneEndpoint) ReadPrompt(ctx context.Context, t Turn) (PromptRead, error) {
	if s.turns == nil {
		return PromptRead{}, E(CodeUnavailable, "approvals are not configured")
	}
	term, err := s.turns.term.Observe(ctx, t.TerminalID)
	if errors.Is(err, ErrTerminalGone) {
		return PromptRead{}, E(CodeTerminalNotFound, "the pane is gone or its agent restarted")
	}
	if err != nil {
		return PromptRead{}, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	return s.promptOn(ctx, term)
}

// promptOn reads the permission prompt on the pane term names.
func (s *paneEndpoint) promptOn(ctx context.Context, term Terminal) (PromptRead, error) {
	pr, err := s.turns.term.Prompt(ctx, term)
	if err != nil {
		return PromptRead{}, &Error{Code: CodeUnavailable, Message: "could not read the prompt", Err: err}
	}
	return PromptRead{Prompt: pr, Term: term}, nil
}

// SendAnswer answers the pane's prompt with its key plan (or its hook).
func (s *paneEndpoint) SendAnswer(seq context.Context, _ Turn, seen PromptRead, fingerprint string, d ApprovalDecision) (AnswerStage, error) {
	return s.turns.term.Answer(seq, seen.Term, fingerprint, d)
}

// Interruptible checks that the pane shows a running turn.
func (s *paneEndpoint) Interruptible(ctx context.Context, t Turn) (InterruptTarget, error) {
	term, err := s.turns.term.Observe(ctx, t.TerminalID)
	if errors.Is(err, ErrTerminalGone) {
		return InterruptTarget{}, E(CodeTerminalNotFound, "the turn's pane is gone or its agent restarted")
	}
	if err != nil {
		return InterruptTarget{}, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	if term.ScreenState == ScreenIdle || term.ScreenState == ScreenUnknown || term.ScreenState == ScreenStartupDialog {
		return InterruptTarget{}, E(CodeTerminalNotIdle, "the pane shows "+string(term.ScreenState)+", not a running turn; nothing was sent")
	}
	return InterruptTarget{Term: term}, nil
}

// Interrupt presses the pane's interrupt key.
func (s *paneEndpoint) Interrupt(seq context.Context, _ Turn, target InterruptTarget) error {
	return s.turns.term.Interrupt(seq, target.Term)
}

// Followable: the pane still shows the same live agent.
func (s *paneEndpoint) Followable(ctx context.Context, t Turn) error {
	if _, err := s.turns.term.Observe(ctx, t.TerminalID); err != nil {
		return E(CodeTerminalNotFound, "the turn's pane is gone or its agent restarted; close the turn")
	}
	return nil
}
