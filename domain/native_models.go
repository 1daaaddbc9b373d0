package domain

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// ModelOption is one model of a pane's catalogue, with the reasoning
// efforts it offers (known for the model in effect only: reading another
// model's would mean selecting it).
type ModelOption struct {
	Model   string
	Label   string
	Efforts []string
}

// ModelState is a pane's model catalogue and what is in effect.
type ModelState struct {
	Model  string
	Effort string
	Models []ModelOption
	Scope  string // "current_session" or "current_and_new_sessions"
}

// ModelControls may be implemented by NativeControls: the agent's own
// model and effort control as closed plans.
type ModelControls interface {
	// Models opens the model UI once, reads the catalogue and what is in
	// effect, closes it, and proves the idle empty composer again.
	Models(ctx context.Context, t Terminal) (ModelState, AnswerStage, error)
	// SetModel sets effort on the model in effect, one proven step at a
	// time, and reads it back.
	SetModel(ctx context.Context, t Terminal, model, effort string) (ModelState, AnswerStage, error)
}

// ModelCatalogTTL is how long a catalogue may be consumed.
const ModelCatalogTTL = 5 * time.Minute

type catalogKey struct{ host, conversation, terminal string }

type catalog struct {
	state ModelState
	at    time.Time
	inc   Incarnation
}

// catalogs are the model catalogues read and not yet consumed, by the
// conversation that read them and the terminal.
type catalogs struct {
	mu sync.Mutex
	by map[catalogKey]catalog
}

// keep keeps c under k, and drops those past ModelCatalogTTL.
func (cs *catalogs) keep(k catalogKey, c catalog) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.by == nil {
		cs.by = map[catalogKey]catalog{}
	}
	for k, old := range cs.by {
		if c.at.Sub(old.at) > ModelCatalogTTL {
			delete(cs.by, k)
		}
	}
	cs.by[k] = c
}

// take consumes the catalogue under k, whatever its use then does.
func (cs *catalogs) take(k catalogKey) (catalog, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.by[k]
	delete(cs.by, k)
	return c, ok
}

// ModelsResult is what a catalogue read or a model change did.
type ModelsResult struct {
	TerminalID string
	Outcome    string // models: done / uncertain; set: changed / already_effective / uncertain
	DoNotRetry bool
	Effective  *ModelChoice
	Models     []ModelOption
	Scope      string
	ExpiresAt  time.Time
	Detail     string
}

// ModelChoice is a model with its reasoning effort.
type ModelChoice struct{ Model, Effort string }

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
	return s.endpoints.of(ParseEndpoint(terminalID)).models(ctx, terminalID)
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

// ModelRepairer may be implemented by NativeControls: clear what a model
// control left on a pane (its picker open, or its bare command in the
// composer) and prove the idle empty composer. It never presses Enter.
type ModelRepairer interface {
	// ModelResidue reports whether t shows something RepairModel clears.
	ModelResidue(ctx context.Context, t Terminal) bool
	RepairModel(ctx context.Context, t Terminal) (AnswerStage, error)
}

// ErrBackedOut: a native control opened a surface it could not read or
// use, backed out of it and proved the pane back at its idle empty
// composer. Nothing changed; the answer is manual_required.
var ErrBackedOut = errors.New("nothing changed: AKK closed what it opened and the pane is back at its idle empty composer")

// backedOut is the manual_required answer of a control that backed out.
func backedOut(err error) error {
	if !errors.Is(err, ErrBackedOut) {
		return nil
	}
	return &Error{Code: CodeManualRequired, Message: err.Error() + "; do it in the pane", Err: err}
}

// ErrNothingToRepair: the pane shows no model residue; nothing was sent.
var ErrNothingToRepair = errors.New("no model control residue on the pane")

// RepairResult is what a model-control repair did.
type RepairResult struct {
	TerminalID string
	Outcome    Outcome
	DoNotRetry bool
	Detail     string
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

// paneModels reads a pane's model catalogue and the model and effort in
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
