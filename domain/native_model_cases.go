package domain

import (
	"context"
	"errors"
	"slices"
)

func (s *NativeCases) modelControls() (ModelControls, error) {
	mc, ok := s.native.(ModelControls)
	if !ok {
		return nil, E(CodeUnavailable, "model controls are not configured")
	}
	return mc, nil
}

// Models reads a terminal's model catalogue and the model and effort in
// effect (model_options).
func (s *NativeCases) Models(ctx context.Context, terminalID string) (ModelsResult, error) {
	if _, err := requirePrincipal(ctx); err != nil {
		return ModelsResult{}, err
	}
	r, read, err := s.endpoints.of(ParseEndpoint(terminalID)).Models(ctx, terminalID)
	if err != nil || read {
		return r, err
	}
	return s.paneModels(ctx, terminalID)
}

// SetModel consumes the caller's catalogue of the pane once and sets the
// model and effort it advertised (set_model).
func (s *NativeCases) SetModel(ctx context.Context, terminalID, model, effort string) (ModelsResult, error) {
	if model == "" || effort == "" || len(model) > 80 || len(effort) > 40 {
		return ModelsResult{}, Invalid("model and reasoning_effort are both required", FieldError{Field: "reasoning_effort", Message: "from the models catalogue"})
	}
	p, err := requirePrincipal(ctx)
	if err != nil {
		return ModelsResult{}, err
	}
	key := catalogKey{p.HostID, p.Conversation, terminalID}
	cat, ok := s.catalogs.take(key) // consumed by this attempt, whatever it does
	if !ok || s.clock.Now().UTC().Sub(cat.at) > ModelCatalogTTL {
		return ModelsResult{}, E(CodeOfferExpired, "no live model catalogue of this conversation for this terminal: read the models first (GET), from the same conversation, and choose within 5 minutes")
	}
	var efforts []string
	known := false
	for _, m := range cat.state.Models {
		if m.Model == model {
			known, efforts = true, m.Efforts
		}
	}
	if !known {
		return ModelsResult{}, E(CodeValidationFailed, "model "+model+" is not in the catalogue")
	}
	if !slices.Contains(efforts, effort) {
		return ModelsResult{}, E(CodeValidationFailed, "the catalogue advertises no effort "+effort+" for "+model+" (efforts are known for the model in effect)")
	}
	if model != cat.state.Model {
		return ModelsResult{}, E(CodeValidationFailed, "only the effort of the model in effect ("+cat.state.Model+") can be set here")
	}
	p, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return ModelsResult{}, err
	}
	defer unlock()
	if term.Process != cat.inc {
		return ModelsResult{}, E(CodeOfferExpired, "the pane's agent changed since the catalogue was read; read the models again")
	}
	if effort == cat.state.Effort {
		return ModelsResult{TerminalID: term.ID, Outcome: "already_effective", Effective: &ModelChoice{model, effort}, Scope: cat.state.Scope}, nil
	}
	mc, err := s.modelControls()
	if err != nil {
		return ModelsResult{}, err
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := mc.SetModel(seq, term, model, effort)
	if rerr := refusedBeforeInput(stage, err, "the model plan"); rerr != nil {
		return ModelsResult{}, rerr
	}
	if err != nil || stage != AnswerVerified || st.Model != model || st.Effort != effort {
		s.noteNativeUncertain(seq, p, term.ID, "set_model", err)
		return ModelsResult{TerminalID: term.ID, Outcome: string(OutcomeUncertain), DoNotRetry: true, Scope: cat.state.Scope, Detail: s.why(err)}, nil
	}
	_ = s.store.InTx(seq, func(tx Tx) error {
		_, err := s.emitLocked(seq, tx, Event{Type: "terminal.model_changed", HostID: p.HostID, Conversation: p.Conversation, Subject: term.ID,
			Data: map[string]any{"terminal_id": term.ID, "model": model, "reasoning_effort": effort, "scope": cat.state.Scope}}, false)
		return err
	})
	return ModelsResult{TerminalID: term.ID, Outcome: "changed", Effective: &ModelChoice{st.Model, st.Effort}, Scope: cat.state.Scope}, nil
}

// RepairModel clears an exact model-control residue (repair_model_control):
// an open model or effort menu is closed with Escape, a bare model command
// left in the composer is cleared with the line-clear key, each step
// proven, until the idle empty composer shows. Never Enter, never a model.
func (s *NativeCases) RepairModel(ctx context.Context, terminalID string) (RepairResult, error) {
	mr, ok := s.native.(ModelRepairer)
	if !ok {
		return RepairResult{}, E(CodeUnavailable, "model repair is not configured")
	}
	p, term, unlock, err := s.nativeGate(ctx, terminalID, false)
	if err != nil {
		return RepairResult{}, err
	}
	defer unlock()
	seq, done := s.keySequence(ctx)
	defer done()
	stage, err := mr.RepairModel(seq, term)
	if errors.Is(err, ErrNothingToRepair) {
		return RepairResult{}, &Error{Code: CodeConflict, Message: "the pane shows no model picker or model command to clear; nothing was sent", Err: err}
	}
	if rerr := refusedBeforeInput(stage, err, "the repair"); rerr != nil {
		return RepairResult{}, rerr
	}
	if err != nil || stage != AnswerVerified {
		s.noteNativeUncertain(seq, p, term.ID, "repair_model_control", err)
		return RepairResult{TerminalID: term.ID, Outcome: OutcomeUncertain, DoNotRetry: true, Detail: s.why(err)}, nil
	}
	return RepairResult{TerminalID: term.ID, Outcome: OutcomeDone}, nil
}

// paneModels reads a pane's model catalogue through its native controls and the model and effort in
// effect. The catalogue is the authority for one set-model by the same
// controller conversation within 5 minutes.
func (s *NativeCases) paneModels(ctx context.Context, terminalID string) (ModelsResult, error) {
	p, term, unlock, err := s.nativeReady(ctx, terminalID)
	if err != nil {
		return ModelsResult{}, err
	}
	defer unlock()
	mc, err := s.modelControls()
	if err != nil {
		return ModelsResult{}, err
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := mc.Models(seq, term)
	if rerr := refusedBeforeInput(stage, err, "the model plan"); rerr != nil {
		return ModelsResult{}, rerr
	}
	if err != nil || stage != AnswerVerified {
		s.noteNativeUncertain(seq, p, term.ID, "model_options", err)
		return ModelsResult{TerminalID: term.ID, Outcome: string(OutcomeUncertain), DoNotRetry: true, Detail: s.why(err)}, nil
	}
	now := s.clock.Now().UTC()
	s.catalogs.keep(catalogKey{p.HostID, p.Conversation, term.ID}, catalog{state: st, at: now, inc: term.Process})
	return ModelsResult{TerminalID: term.ID, Outcome: string(OutcomeDone), Effective: &ModelChoice{st.Model, st.Effort},
		Models: st.Models, Scope: st.Scope, ExpiresAt: now.Add(ModelCatalogTTL)}, nil
}
