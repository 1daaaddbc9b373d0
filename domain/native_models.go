package domain

import (
	"context"
	"errors"
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
