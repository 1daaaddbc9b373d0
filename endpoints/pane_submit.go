package endpoints

import (
	"context"

	"akk/domain"
)

// SendTarget observes the pane a Send goes to.
func (s *Pane) SendTarget(ctx context.Context, id string) (domain.EndpointTarget, error) {
	term, err := s.observe(ctx, id, "no terminal "+id+" (the pane closed or its agent restarted; list again)")
	return domain.EndpointTarget{Term: term}, err
}

// PrepareSubmit checks that a draft in the pane's composer can be cleared
// (the user-explicit path) and reads the mark the agent's record is read
// from. A pane takes no model with its request (set_model sets it).
func (s *Pane) PrepareSubmit(ctx context.Context, target domain.EndpointTarget, opts domain.BackendTurnOptions) (domain.DurableMark, error) {
	if opts != (domain.BackendTurnOptions{}) {
		return "", domain.Invalid("a pane's model is set with set_model, not with a Send",
			domain.FieldError{Field: "model", Message: "only with conversation_id"})
	}
	if _, ok := s.panes.(domain.ComposerClearer); !target.Term.ComposerEmpty && !ok {
		return "", domain.E(domain.CodeTerminalNotIdle, "the composer holds text and this terminal cannot clear it")
	}
	mark, err := s.panes.Mark(ctx, target.Term)
	if err != nil {
		return "", &domain.Error{Code: domain.CodeUnavailable, Message: "could not read the agent's durable record", Err: err}
	}
	return mark, nil
}

// Submit types the request as one key sequence: on the user-explicit path
// a draft goes first, with the profile's one native clear (Claude Code's
// stash keeps it for the person). It returns the furthest stage reached.
func (s *Pane) Submit(seq context.Context, _ domain.Turn, target domain.EndpointTarget, request string, _ domain.BackendTurnOptions) (string, domain.SubmitStage, error) {
	term := target.Term
	stage, err := domain.SubmitNothing, error(nil)
	if !term.ComposerEmpty {
		clearer, ok := s.panes.(domain.ComposerClearer)
		if !ok {
			return "", domain.SubmitNothing, domain.E(domain.CodeTerminalNotIdle, "the composer holds text and this terminal cannot clear it")
		}
		var pressed bool
		if pressed, err = clearer.ClearComposer(seq, term); pressed {
			stage = domain.SubmitCleared
		}
		if err != nil {
			return "", stage, err
		}
		domain.Failpoint("send.cleared")
	}
	st, err := s.panes.Submit(seq, term, request)
	if st != domain.SubmitNothing || stage == domain.SubmitNothing {
		stage = st
	}
	return "", stage, err
}
