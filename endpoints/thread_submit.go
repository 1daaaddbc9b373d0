package endpoints

import (
	"context"
	"slices"
	"strings"

	"akk/domain"
)

// SendTarget is the thread a Send names, as its daemon lists it now.
func (s *Thread) SendTarget(ctx context.Context, id string) (domain.EndpointTarget, error) {
	th, err := s.thread(ctx, id)
	return domain.EndpointTarget{Thread: th}, err
}

// PrepareSubmit checks a Send's model and effort against the thread's
// daemon's catalogue, read now: the model listed, the effort one the
// catalogue lists for it (the chosen model, else the one the listing just
// read from the thread). The daemon keeps the record: no mark.
func (s *Thread) PrepareSubmit(ctx context.Context, target domain.EndpointTarget, opts domain.BackendTurnOptions) (domain.DurableMark, error) {
	if opts == (domain.BackendTurnOptions{}) {
		return "", nil
	}
	th := target.Thread
	model := th.Model
	if opts.Model != "" {
		model = opts.Model
	}
	if model == "" {
		return "", domain.Invalid("the daemon names no model for this thread, so no effort can be checked; nothing was sent",
			domain.FieldError{Field: "model", Message: "name one of the thread's model_options with the effort"})
	}
	models, err := s.calls.Catalogue(ctx, th)
	if err != nil {
		return "", &domain.Error{Code: domain.CodeUnavailable, Message: "the thread's daemon did not give its models; nothing was sent", Err: err}
	}
	i := slices.IndexFunc(models, func(m domain.ModelOption) bool { return m.Model == model })
	if i < 0 {
		return "", domain.Invalid("the daemon's catalogue lists no model "+model+"; nothing was sent",
			domain.FieldError{Field: "model", Message: "one of the thread's model_options"})
	}
	if opts.Effort != "" && !slices.Contains(models[i].Efforts, opts.Effort) {
		return "", domain.Invalid("the daemon's catalogue lists no effort "+opts.Effort+" for "+model+"; nothing was sent",
			domain.FieldError{Field: "reasoning_effort", Message: "one of " + strings.Join(models[i].Efforts, ", ")})
	}
	return "", nil
}

// Submit starts the turn through the thread's daemon: one structured
// start, with t's id as the message's, never retried. A start the daemon
// refused is thread_not_idle.
func (s *Thread) Submit(seq context.Context, t domain.Turn, target domain.EndpointTarget, request string, opts domain.BackendTurnOptions) (string, domain.SubmitStage, error) {
	nativeTurn, stage, err := s.calls.Start(seq, target.Thread, request, t.ID, opts)
	if stage == "" || stage == domain.SubmitNothing {
		msg := "the daemon refused the turn; nothing was sent"
		if err != nil {
			msg += ": " + err.Error()
		}
		return "", stage, &domain.Error{Code: domain.CodeThreadNotIdle, Message: msg, Err: err}
	}
	return nativeTurn, stage, err
}
