package domain

import (
	"context"
	"slices"
	"strings"
)

// checkBackendModel checks a Send's model and effort against the thread's
// daemon's catalogue, read now: the model listed, the effort one the
// catalogue lists for it (the chosen model, else the one the listing just
// read from the thread).
func (s *ThreadCases) checkBackendModel(ctx context.Context, tt *threadTransport, th BackendThread, opts BackendTurnOptions) error {
	model := th.Model
	if opts.Model != "" {
		model = opts.Model
	}
	if model == "" {
		return Invalid("the daemon names no model for this thread, so no effort can be checked; nothing was sent",
			FieldError{Field: "model", Message: "name one of the thread's model_options with the effort"})
	}
	models, err := tt.calls.Catalogue(ctx, th)
	if err != nil {
		return &Error{Code: CodeUnavailable, Message: "the thread's daemon did not give its models; nothing was sent", Err: err}
	}
	i := slices.IndexFunc(models, func(m ModelOption) bool { return m.Model == model })
	if i < 0 {
		return Invalid("the daemon's catalogue lists no model "+model+"; nothing was sent",
			FieldError{Field: "model", Message: "one of the thread's model_options"})
	}
	if opts.Effort != "" && !slices.Contains(models[i].Efforts, opts.Effort) {
		return Invalid("the daemon's catalogue lists no effort "+opts.Effort+" for "+model+"; nothing was sent",
			FieldError{Field: "reasoning_effort", Message: "one of " + strings.Join(models[i].Efforts, ", ")})
	}
	return nil
}
