// Package endpoints implements the domain's Endpoint port for the two
// kinds of transport: a pane (Pane, over any domain.PaneTransport: the
// pane adapter's, or a test's) and a thread (Thread, over any
// domain.ThreadTransport: Codex's app-server, or a test's). Each reads,
// answers, interrupts and follows through its transport's port alone;
// what those mean for a Turn or a Watch is the domain's.
package endpoints

import (
	"context"
	"errors"
	"log/slog"

	"akk/domain"
)

// Pane is an agent's terminal pane as an endpoint: driven by keys,
// followed through its screen and its agent's record.
type Pane struct {
	panes domain.PaneTransport
	cfg   domain.TurnConfig
	clock domain.Clock
}

var _ domain.Endpoint = (*Pane)(nil)

// NewPane is the endpoint of the panes p reaches; cfg is the Turns'
// timing its observers follow, on clock.
func NewPane(p domain.PaneTransport, cfg domain.TurnConfig, clock domain.Clock) *Pane {
	return &Pane{panes: p, cfg: cfg.Defaulted(), clock: clock}
}

// observe observes the pane id names; gone says how its absence is put.
func (s *Pane) observe(ctx context.Context, id, gone string) (domain.Terminal, error) {
	term, err := s.panes.Observe(ctx, id)
	if errors.Is(err, domain.ErrTerminalGone) {
		return domain.Terminal{}, domain.E(domain.CodeTerminalNotFound, gone)
	}
	if err != nil {
		return domain.Terminal{}, &domain.Error{Code: domain.CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	return term, nil
}

// ReadRecord reads the pane's agent's record from mark.
func (s *Pane) ReadRecord(ctx context.Context, terminalID string, mark domain.DurableMark, request string) (domain.TurnProgress, bool, error) {
	term, err := s.panes.Observe(ctx, terminalID)
	if err != nil {
		return domain.TurnProgress{}, false, domain.E(domain.CodeTerminalNotFound, "the pane is gone or its agent restarted; its record cannot be read")
	}
	p, err := s.panes.Progress(ctx, term, mark, request)
	if err != nil {
		return domain.TurnProgress{}, false, &domain.Error{Code: domain.CodeUnavailable, Message: "could not read the agent's record", Err: err}
	}
	return p, true, nil
}

// CurrentStep reads the questionnaire step the pane shows now.
func (s *Pane) CurrentStep(ctx context.Context, t domain.Turn) (domain.AgentKind, domain.Terminal, domain.InteractionStep, error) {
	term, err := s.observe(ctx, t.TerminalID, "the turn's pane is gone or its agent restarted")
	if err != nil {
		return "", domain.Terminal{}, domain.InteractionStep{}, err
	}
	st, err := s.panes.Step(ctx, term)
	if err != nil {
		return "", domain.Terminal{}, domain.InteractionStep{}, &domain.Error{Code: domain.CodeUnavailable, Message: "could not read the questionnaire", Err: err}
	}
	if !st.Present {
		return "", domain.Terminal{}, domain.InteractionStep{}, domain.E(domain.CodeNoInteraction, "the pane shows no questionnaire step now")
	}
	return term.Agent.Kind, term, st, nil
}

// DeliverAnswers gives a reserved step its answers as one key sequence
// into the pane.
func (s *Pane) DeliverAnswers(seq context.Context, _ domain.Turn, term domain.Terminal, fingerprint string, answers []domain.StepAnswer) (domain.AnswerStage, error) {
	return s.panes.AnswerStep(seq, term, fingerprint, answers)
}

// TurnSource follows the Turn through the pane's observer: its looks at
// the screen and its reads of the agent's record. A Turn that waited on a
// prompt or step when this monitor began (a daemon's restart) waits until
// a look shows it.
func (s *Pane) TurnSource(_ context.Context, t domain.Turn) (domain.TurnSource, bool, string) {
	f := domain.PaneFollow{TerminalID: t.TerminalID, Kind: "turn", Mark: t.Mark, Record: true}
	src := &paneTurnSource{log: slog.With("turn_id", t.ID), panes: s.panes, obs: s.panes.PaneObserver(f, s.clock, s.cfg)}
	return src, t.State == domain.TurnAwaitingApproval || t.State == domain.TurnAwaitingInteraction, ""
}

// WatchSource follows the Watch through the pane's observer: its looks at
// the screen and, for an exact Watch, its reads of the agent's record.
func (s *Pane) WatchSource(_ context.Context, w domain.Watch) (domain.WatchSource, string) {
	exact := w.Mode == domain.WatchModeExact
	f := domain.PaneFollow{TerminalID: w.TerminalID, Kind: "watch", Mark: w.Mark, Record: exact}
	return &paneWatchSource{log: slog.With("watch_id", w.ID), exact: exact, obs: s.panes.PaneObserver(f, s.clock, s.cfg)}, ""
}

// WatchTarget is the pane id names, working or awaiting approval.
func (s *Pane) WatchTarget(ctx context.Context, id string) (domain.WatchAnchor, error) {
	term, err := s.observe(ctx, id, "no terminal "+id)
	if err != nil {
		return domain.WatchAnchor{}, err
	}
	if !term.Watchable() {
		return domain.WatchAnchor{}, domain.E(domain.CodeNothingToWatch, "the pane is "+string(term.ScreenState)+"; a Watch follows a task that is working or awaiting approval")
	}
	return domain.WatchAnchor{Ref: domain.EndpointRef{Kind: domain.EndpointPane, ID: term.ID}, What: "terminal", Term: term}, nil
}

// AnchorWatch anchors on the task the pane runs now: exactly when the
// agent's record names it, else on its activity from the record's end.
func (s *Pane) AnchorWatch(ctx context.Context, a domain.WatchAnchor) (domain.WatchAnchor, error) {
	var err error
	a.Mark, a.Exact, err = s.panes.AnchorWatch(ctx, a.Term)
	if err != nil {
		return domain.WatchAnchor{}, &domain.Error{Code: domain.CodeUnavailable, Message: "could not read the agent's record", Err: err}
	}
	return a, nil
}

// WatchedLive checks that the watched pane still runs the same agent.
func (s *Pane) WatchedLive(ctx context.Context, w domain.Watch) error {
	if _, err := s.panes.Observe(ctx, w.TerminalID); err != nil {
		return domain.E(domain.CodeTerminalNotFound, "the watched pane is gone or its agent restarted")
	}
	return nil
}

// Models: a pane has no catalogue to read without input; its native
// controls read it.
func (s *Pane) Models(context.Context, string) (domain.ModelsResult, bool, error) {
	return domain.ModelsResult{}, false, nil
}

// Configured: a pane answers prompts and steps.
func (s *Pane) Configured(domain.EndpointUse) error { return nil }

// ReadPrompt reads the permission prompt on the pane now: its hook's,
// when Claude Code's PermissionRequest hook holds it, else the screen's.
func (s *Pane) ReadPrompt(ctx context.Context, t domain.Turn) (domain.PromptRead, error) {
	term, err := s.observe(ctx, t.TerminalID, "the pane is gone or its agent restarted")
	if err != nil {
		return domain.PromptRead{}, err
	}
	pr, err := s.panes.Prompt(ctx, term)
	if err != nil {
		return domain.PromptRead{}, &domain.Error{Code: domain.CodeUnavailable, Message: "could not read the prompt", Err: err}
	}
	return domain.PromptRead{Prompt: pr, Term: term}, nil
}

// SendAnswer answers the pane's prompt with its key plan (or its hook).
func (s *Pane) SendAnswer(seq context.Context, _ domain.Turn, seen domain.PromptRead, fingerprint string, d domain.ApprovalDecision) (domain.AnswerStage, error) {
	return s.panes.Answer(seq, seen.Term, fingerprint, d)
}

// Interruptible checks that the pane shows a running turn.
func (s *Pane) Interruptible(ctx context.Context, t domain.Turn) (domain.EndpointTarget, error) {
	term, err := s.observe(ctx, t.TerminalID, "the turn's pane is gone or its agent restarted")
	if err != nil {
		return domain.EndpointTarget{}, err
	}
	switch term.ScreenState {
	case domain.ScreenIdle, domain.ScreenUnknown, domain.ScreenStartupDialog:
		return domain.EndpointTarget{}, domain.E(domain.CodeTerminalNotIdle, "the pane shows "+string(term.ScreenState)+", not a running turn; nothing was sent")
	}
	return domain.EndpointTarget{Term: term}, nil
}

// Interrupt presses the pane's interrupt key.
func (s *Pane) Interrupt(seq context.Context, _ domain.Turn, target domain.EndpointTarget) error {
	return s.panes.Interrupt(seq, target.Term)
}

// Followable: the pane still shows the same live agent.
func (s *Pane) Followable(ctx context.Context, t domain.Turn) error {
	if _, err := s.panes.Observe(ctx, t.TerminalID); err != nil {
		return domain.E(domain.CodeTerminalNotFound, "the turn's pane is gone or its agent restarted; close the turn")
	}
	return nil
}
