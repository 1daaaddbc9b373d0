package handlers

import (
	"context"

	"akk/domain"
)

func approvalOut(v *domain.ApprovalView) *Approval {
	if v == nil {
		return nil
	}
	out := &Approval{PromptKind: v.PromptKind, Tool: optString(v.Tool), CommandExcerpt: optString(v.CommandExcerpt),
		ManualRequired: v.ManualRequired, Reason: optString(v.Reason), Decisions: []ApprovalDecisions{}}
	for _, d := range v.Decisions {
		out.Decisions = append(out.Decisions, ApprovalDecisions(d))
	}
	if !v.ExpiresAt.IsZero() {
		out.ExpiresAt = &v.ExpiresAt
	}
	out.WaitingSince = optTime(v.WaitingSince)
	return out
}

// ApproveTurn answers a Turn's permission prompt.
func (s *Server) ApproveTurn(ctx context.Context, req ApproveTurnRequestObject) (ApproveTurnResponseObject, error) {
	r, err := s.Service.Approve(ctx, req.TurnId, domain.ApprovalDecision(req.Body.Decision))
	if err != nil {
		return nil, err
	}
	return ApproveTurn200JSONResponse(actionOut(r)), nil
}

// ApproveTerminal answers the permission prompt of a pane no Turn holds.
func (s *Server) ApproveTerminal(ctx context.Context, req ApproveTerminalRequestObject) (ApproveTerminalResponseObject, error) {
	r, err := s.Service.ApproveTerminal(ctx, req.TerminalId, domain.ApprovalDecision(req.Body.Decision))
	if err != nil {
		return nil, err
	}
	return ApproveTerminal200JSONResponse{TerminalId: req.TerminalId, Outcome: Outcome(r.Outcome), DoNotRetry: r.DoNotRetry}, nil
}
