package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	"akk/domain"
)

// GetTurnInteraction projects a Turn's questionnaire step and offers it to
// the caller's conversation.
func (s *Server) GetTurnInteraction(ctx context.Context, req GetTurnInteractionRequestObject) (GetTurnInteractionResponseObject, error) {
	in, err := s.Service.TurnInteraction(ctx, req.TurnId)
	if err != nil {
		return nil, err
	}
	out, err := interactionOut(in)
	if err != nil {
		return nil, err
	}
	return GetTurnInteraction200JSONResponse(out), nil
}

// interactionOut is the contract's Interaction: the domain projection
// carries the contract's JSON field names, so the generated type is filled
// from the same bytes.
func interactionOut(in domain.Interaction) (Interaction, error) {
	var out Interaction
	b, err := json.Marshal(in)
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("project interaction: %w", err)
	}
	return out, nil
}

// RespondTurnInteraction answers the current questionnaire step.
func (s *Server) RespondTurnInteraction(ctx context.Context, req RespondTurnInteractionRequestObject) (RespondTurnInteractionResponseObject, error) {
	b := req.Body
	in := domain.RespondInteractionInput{InteractionID: b.InteractionId}
	if b.TurnId != nil {
		in.TurnID = *b.TurnId
	}
	if b.DeliveryMode != nil {
		in.DeliveryMode = string(*b.DeliveryMode)
	}
	for _, a := range b.Answers {
		ans := domain.InteractionAnswer{QuestionID: a.QuestionId, ResponseKind: string(a.ResponseKind), Text: a.Text}
		if a.SelectedOptionIds != nil {
			ans.SelectedOptionIDs = *a.SelectedOptionIds
		}
		in.Answers = append(in.Answers, ans)
	}
	r, err := s.Service.RespondInteraction(ctx, req.TurnId, in)
	if err != nil {
		return nil, err
	}
	return RespondTurnInteraction200JSONResponse(actionOut(r)), nil
}
