package domain

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
)

// InteractionCases are questionnaires and async questions: their offers,
// with ids opaque to a host, and their answers. They hold only their
// ports.
type InteractionCases struct {
	basics
	*inputGate
	*answerMarks
	turns     *turns // the panes' locks and redactor (UsePanes)
	endpoints *endpointRegistry
	writer    turnWriter

	saltOnce sync.Mutex
	salt     []byte
}

// ownedTurn is the caller's Turn id, once Turns are configured.
func (s *InteractionCases) ownedTurn(ctx context.Context, id string) (Turn, Principal, error) {
	return s.ownedTurnIn(ctx, s.turns, id)
}

// idSalt keys the opaque ids. It is kept in the store so ids stay the same
// across restarts for the same prompt.
func (s *InteractionCases) idSalt(ctx context.Context) ([]byte, error) {
	s.saltOnce.Lock()
	defer s.saltOnce.Unlock()
	if s.salt != nil {
		return s.salt, nil
	}
	v, err := s.store.Setting(ctx, "interaction_id_salt")
	if err != nil {
		return nil, err
	}
	if v == "" {
		v = hex.EncodeToString(s.ids.Secret(32))
		if err := s.store.InTx(ctx, func(tx Tx) error { return tx.PutSetting(ctx, "interaction_id_salt", v) }); err != nil {
			return nil, err
		}
	}
	s.salt = []byte(v)
	return s.salt, nil
}

// redactText hides secrets in screen-derived text a projection carries
// (questionnaire headers, prompts and labels), as everywhere else.
func (s *InteractionCases) redactText(text string) string { return s.turns.redactText(text) }

// stepKey is the fence key of the occurrence of st now shown in t.
func (s *InteractionCases) stepKey(ctx context.Context, t Turn, st InteractionStep) (key string, err error) {
	err = s.store.InTx(ctx, func(tx Tx) error {
		key, err = fenceKey(ctx, tx, stepFence(t, st.Fingerprint))
		return err
	})
	return key, err
}

// project turns a step into its public projection and private mapping; fp
// is the fence key of the step's occurrence.
func (s *InteractionCases) project(ctx context.Context, t Turn, agent AgentKind, st InteractionStep, fp string) (Interaction, idMapping, error) {
	salt, err := s.idSalt(ctx)
	if err != nil {
		return Interaction{}, idMapping{}, err
	}
	// One id per step and occurrence: the same step in another Turn, or
	// asked again, is another interaction.
	in := Interaction{Schema: InteractionSchema, Version: 1, InteractionID: opaque(salt, "int_", fp), TurnID: t.ID,
		Agent: string(agent), Kind: st.Kind, State: "pending", Step: InteractionStepIndex{st.Index, st.Total},
		Questions: []InteractionQuestion{}, Capabilities: InteractionCaps{BatchResponse: st.BatchResponse},
		FreeTextLimit: st.FreeTextLimit, DeliveryModes: st.DeliveryModes}
	m := idMapping{Questions: map[string]string{}, Kinds: map[string]string{}, Required: map[string]bool{},
		Options: map[string]map[string]string{}, Texts: map[string]bool{}, Limit: st.FreeTextLimit, Delivery: st.DeliveryModes}
	for _, q := range st.Questions {
		qid := opaque(salt, "q_", fp, q.Key)
		pq := InteractionQuestion{QuestionID: qid, Header: s.redactText(q.Header), Prompt: s.redactText(q.Prompt), Required: q.Required,
			ResponseKind: q.ResponseKind, Options: []InteractionOption{}}
		m.Questions[qid], m.Kinds[qid], m.Required[qid] = q.Key, q.ResponseKind, q.Required
		m.Options[qid] = map[string]string{}
		for _, o := range q.Options {
			oid := opaque(salt, "opt_", fp, q.Key, o.Key)
			pq.Options = append(pq.Options, InteractionOption{OptionID: oid, Label: s.redactText(o.Label), FreeText: o.TakesText})
			m.Options[qid][oid] = o.Key
			if o.TakesText {
				m.Texts[oid] = true
				in.Capabilities.FreeText = true
			}
		}
		if q.ResponseKind == FreeText {
			in.Capabilities.FreeText = true
		}
		if q.ResponseKind == MultiSelect {
			in.Capabilities.MultiSelect = true
		}
		in.Questions = append(in.Questions, pq)
	}
	if !st.Answerable {
		in.ManualRequired, in.Reason, in.State = true, st.Reason, "manual_required"
		if in.Reason == "" {
			in.Reason = "this step is not one AKK can answer; answer it in the pane"
		}
	}
	return in, m, nil
}

// TurnInteraction projects the questionnaire step of a Turn awaiting an
// interaction and offers it to the caller's conversation.
func (s *InteractionCases) TurnInteraction(ctx context.Context, turnID string) (Interaction, error) {
	t, p, err := s.ownedTurn(ctx, turnID)
	if err != nil {
		return Interaction{}, err
	}
	if err := s.endpoints.of(t.Endpoint).Configured(UseInteractions); err != nil {
		return Interaction{}, err
	}
	// An async question is asked while the Turn works on.
	if t.State != TurnAwaitingInteraction && t.State != TurnWorking {
		return Interaction{}, E(CodeNoInteraction, "turn "+t.ID+" is "+string(t.State)+"; it shows no questionnaire")
	}
	agent, _, st, err := s.currentStep(ctx, t)
	if err != nil {
		return Interaction{}, err
	}
	key, err := s.stepKey(ctx, t, st)
	if err != nil {
		return Interaction{}, err
	}
	in, m, err := s.project(ctx, t, agent, st, key)
	if err != nil {
		return Interaction{}, err
	}
	if in.ManualRequired {
		return in, nil
	}
	payload, _ := json.Marshal(m)
	now := s.clock.Now().UTC()
	var consumed bool
	err = s.store.InTx(ctx, func(tx Tx) error {
		var err error
		if consumed, err = tx.FingerprintConsumed(ctx, key); err != nil || consumed {
			return err
		}
		return tx.InsertOffer(ctx, Offer{ID: s.ids.New("offer"), Kind: "interaction", TurnID: t.ID, TerminalID: t.TerminalID,
			HostID: p.HostID, Conversation: p.Conversation, Fingerprint: st.Fingerprint, PublicID: in.InteractionID,
			Payload: string(payload), CreatedAt: now, ExpiresAt: now.Add(OfferTTL)})
	})
	if err == nil && !consumed {
		exp := now.Add(OfferTTL)
		in.ExpiresAt = &exp
	}
	if err != nil {
		return Interaction{}, err
	}
	if consumed {
		in.ManualRequired, in.State = true, "manual_required"
		in.Reason = "AKK already answered this exact step and it is still shown; answer it in the pane"
	}
	return in, nil
}

// interactionOffer is the live offer that showed interaction id to the
// caller's conversation, with its id mapping.
func (s *InteractionCases) interactionOffer(ctx context.Context, p Principal, t Turn, id string) (Offer, idMapping, error) {
	var offer Offer
	err := s.store.InTx(ctx, func(tx Tx) error {
		var err error
		offer, err = tx.OfferByPublicID(ctx, "interaction", t.TerminalID, t.ID, p.HostID, p.Conversation, id)
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return Offer{}, idMapping{}, E(CodeOfferExpired, "interaction "+id+" was not shown to this conversation, or was answered: GET the interaction again")
	}
	if err != nil {
		return Offer{}, idMapping{}, err
	}
	if !s.clock.Now().Before(offer.ExpiresAt) {
		return Offer{}, idMapping{}, E(CodeOfferExpired, "the offer of interaction "+id+" expired: GET the interaction again")
	}
	var m idMapping
	if err := json.Unmarshal([]byte(offer.Payload), &m); err != nil {
		return Offer{}, idMapping{}, fmt.Errorf("offer %s: %w", offer.ID, err)
	}
	return offer, m, nil
}

// RespondInteraction answers the current questionnaire step of a Turn:
// owner, offer, live fingerprint, closed key plan, one bounded step.
func (s *InteractionCases) RespondInteraction(ctx context.Context, turnID string, in RespondInteractionInput) (ActionResult, error) {
	t, p, err := s.ownedTurn(ctx, turnID)
	if err != nil {
		return ActionResult{}, err
	}
	if in.TurnID != "" && in.TurnID != turnID {
		return ActionResult{}, Invalid("turn_id does not match the path", FieldError{Field: "turn_id", Message: "must be " + turnID})
	}
	if err := s.endpoints.of(t.Endpoint).Configured(UseInteractions); err != nil {
		return ActionResult{}, err
	}
	unlock := s.turns.lockTerminal(t.TerminalID)
	defer unlock()
	if t, err = s.store.Turn(ctx, turnID); err != nil {
		return ActionResult{}, err
	}
	if t.State != TurnAwaitingInteraction && t.State != TurnWorking {
		return ActionResult{}, stateConflict(t, "an interaction response")
	}
	offer, m, err := s.interactionOffer(ctx, p, t, in.InteractionID)
	if err != nil {
		return ActionResult{}, err
	}
	answers, err := m.resolve(in)
	if err != nil {
		return ActionResult{}, err
	}
	_, term, st, err := s.currentStep(ctx, t)
	if ErrorCode(err) == CodeNoInteraction {
		return ActionResult{}, E(CodePromptChanged, "the step is gone; GET the interaction again")
	}
	if err != nil {
		return ActionResult{}, err
	}
	if st.Fingerprint != offer.Fingerprint {
		return ActionResult{}, E(CodePromptChanged, "the step on screen is not the one offered; GET the interaction again")
	}
	key, err := s.reserveStepAnswer(ctx, t, offer, in.InteractionID, len(answers))
	if err != nil {
		return ActionResult{}, err
	}
	defer s.answerTurn(t.ID)()
	Failpoint("interaction.reserved")
	seq, done := s.keySequence(ctx)
	stage, aerr := s.endpoints.of(t.Endpoint).DeliverAnswers(seq, t, term, offer.Fingerprint, answers)
	done()
	if stage == AnswerVerified {
		if err := s.provenFence(ctx, key); err != nil {
			slog.Warn("record a proven answer", "err", err) // the fence stays
		}
	}
	if stage != "" && stage != AnswerNothing {
		Failpoint("interaction.sent")
	}
	if stage == "" || stage == AnswerNothing {
		if errors.Is(aerr, ErrDecisionUnavailable) {
			return ActionResult{Outcome: OutcomeRejectedBeforeInput}, E(CodeManualRequired, "the profile cannot type this answer exactly; answer it in the pane")
		}
		return ActionResult{Outcome: OutcomeRejectedBeforeInput}, &Error{Code: CodePromptChanged, Message: "the step changed before any key was sent", Err: aerr}
	}
	return s.recordStepAnswer(ctx, t, stage, st.Kind == KindAsyncQuestion)
}

// reserveStepAnswer fences the offered step durably before any key, with
// an audit event that holds no answer's content; it returns the fence.
func (s *InteractionCases) reserveStepAnswer(ctx context.Context, t Turn, offer Offer, interactionID string, n int) (string, error) {
	now := s.clock.Now().UTC()
	var key string
	err := s.store.InTx(ctx, func(tx Tx) error {
		var err error
		if key, err = consumeFence(ctx, tx, offer.ID, stepFence(t, offer.Fingerprint), now); err != nil {
			return err
		}
		_, err = s.emitLocked(ctx, tx, Event{Type: "turn.interaction_answering", HostID: t.HostID, Conversation: t.Conversation,
			Subject: t.ID, Data: map[string]any{"turn_id": t.ID, "interaction_id": interactionID, "answers": n}}, false)
		return err
	})
	if errors.Is(err, ErrFingerprintConsumed) {
		return "", E(CodePromptAlreadyAnswered, "this exact step was answered already")
	}
	return key, err
}

// recordStepAnswer records what became of answers that reached the step:
// proven, or uncertain and never retried.
func (s *InteractionCases) recordStepAnswer(ctx context.Context, t Turn, stage AnswerStage, async bool) (ActionResult, error) {
	return recordAnswerBy(ctx, s.basics, s.writer, t, nil, func(next Turn) (Turn, string, bool, ActionResult) {
		if stage != AnswerVerified && async && next.State == TurnWorking {
			// The agent works on whatever became of the answer: the Turn
			// stays followed, the answer uncertain and fenced.
			return next, "turn.interaction_uncertain", true, ActionResult{Outcome: OutcomeUncertain, DoNotRetry: true}
		}
		if stage != AnswerVerified {
			next.State, next.FailureReason = TurnResponseUncertain, "keys were sent to the questionnaire but the answer is not proven"
			return next, "turn.response_uncertain", true, ActionResult{Outcome: OutcomeUncertain, DoNotRetry: true}
		}
		if next.State == TurnAwaitingInteraction {
			next.State = TurnWorking // the monitor sees the next step, if any, and announces it
		}
		return next, "turn.interaction_answered", false, ActionResult{Outcome: OutcomeDone}
	})
}

// currentStep is the questionnaire step t's endpoint shows, when t may be
// answered on it now (an async question while t works on, else any).
func (s *InteractionCases) currentStep(ctx context.Context, t Turn) (AgentKind, Terminal, InteractionStep, error) {
	agent, term, st, err := s.endpoints.of(t.Endpoint).CurrentStep(ctx, t)
	if err != nil {
		return "", Terminal{}, InteractionStep{}, err
	}
	if !answerableIn(t, st) {
		return "", Terminal{}, InteractionStep{}, E(CodeNoInteraction, "no questionnaire step of turn "+t.ID+" is shown now")
	}
	return agent, term, st, nil
}
