package domain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// ApprovalCases are permission prompts: their offers, their answers by
// hand, and by a host's policy (auto-approval). They hold only their
// ports.
type ApprovalCases struct {
	basics
	*inputGate
	*answerMarks
	approvals ApprovalTerminal // the panes' (UsePanes)
	turns     *turns           // the panes' locks, observer and redactor (UsePanes)
	endpoints *endpointRegistry
	writer    turnWriter
}

// ownedTurn is the caller's Turn id, once Turns are configured.
func (s *ApprovalCases) ownedTurn(ctx context.Context, id string) (Turn, Principal, error) {
	return s.ownedTurnIn(ctx, s.turns, id)
}

// redactedExcerpt is text redacted and bounded to n code points.
func (s *ApprovalCases) redactedExcerpt(text string, n int) string {
	var r Redactor
	if s.turns != nil {
		r = s.turns.redact
	}
	return boundText(r, text, n)
}

// offerApproval shows the prompt on term to p and records the offer. It
// returns nil when the screen shows no permission prompt.
func (s *ApprovalCases) offerApproval(ctx context.Context, p Principal, term Terminal, turnID string) (*ApprovalView, error) {
	if s.approvals == nil {
		return nil, nil
	}
	pr, err := s.approvals.Prompt(ctx, term)
	if err != nil {
		return nil, fmt.Errorf("read prompt: %w", err)
	}
	return s.offerRead(ctx, p, term.ID, turnID, PromptRead{Prompt: pr, Term: term})
}

// offerRead offers p the prompt an endpoint read (nil when none is shown):
// its decisions for OfferTTL, unless AKK cannot answer it or answered this
// very occurrence already (then it is shown, to be answered where it is).
func (s *ApprovalCases) offerRead(ctx context.Context, p Principal, endpointID, turnID string, seen PromptRead) (*ApprovalView, error) {
	pr := seen.Prompt
	if !pr.Present {
		return nil, nil
	}
	v := &ApprovalView{PromptKind: pr.Kind, Tool: pr.Tool, CommandExcerpt: s.redactedExcerpt(pr.CommandExcerpt, 400)}
	if !pr.Answerable || len(pr.Decisions) == 0 {
		v.ManualRequired, v.Reason = true, pr.Reason
		if v.Reason == "" {
			v.Reason = "this prompt's shape is not one AKK can answer; answer it " + seen.where()
		}
		return v, nil
	}
	now := s.clock.Now().UTC()
	consumed, err := s.insertApprovalOffer(ctx, p, endpointID, turnID, pr, now)
	if err != nil {
		return nil, err
	}
	if consumed {
		// AKK answered this exact prompt already and it is still shown.
		v.ManualRequired, v.Reason = true, "AKK already answered this exact prompt and it is still shown; answer it "+seen.where()
		return v, nil
	}
	v.Decisions, v.ExpiresAt = pr.Decisions, now.Add(OfferTTL)
	return v, nil
}

// insertApprovalOffer records an offer of prompt pr to p, unless AKK
// answered this occurrence of it already (consumed).
func (s *ApprovalCases) insertApprovalOffer(ctx context.Context, p Principal, terminalID, turnID string, pr ApprovalPrompt, now time.Time) (consumed bool, err error) {
	err = s.store.InTx(ctx, func(tx Tx) error {
		if consumed, err = fenceConsumed(ctx, tx, pr.Fingerprint); err != nil || consumed {
			return err
		}
		return tx.InsertOffer(ctx, Offer{ID: s.ids.New("offer"), Kind: "approval", TurnID: turnID, TerminalID: terminalID,
			HostID: p.HostID, Conversation: p.Conversation, Fingerprint: pr.Fingerprint, Decisions: pr.Decisions,
			CreatedAt: now, ExpiresAt: now.Add(OfferTTL)})
	})
	return consumed, err
}

// TurnApproval returns the prompt of a Turn awaiting approval, as a fresh
// offer to the caller (nil when none is shown).
func (s *ApprovalCases) TurnApproval(ctx context.Context, t Turn) (*ApprovalView, error) {
	if t.State != TurnAwaitingApproval || s.turns == nil || s.endpoints.of(t.Endpoint).Configured(UseApprovals) != nil {
		return nil, nil
	}
	p, _ := PrincipalFrom(ctx)
	return s.offerOf(ctx, p, t)
}

// offerOf offers p the approval t waits on, as its endpoint reads it now:
// nil when none is shown or the endpoint is gone (the status shows the
// state), an unanswerable view when it cannot be read.
func (s *ApprovalCases) offerOf(ctx context.Context, p Principal, t Turn) (*ApprovalView, error) {
	seen, err := s.endpoints.of(t.Endpoint).ReadPrompt(ctx, t)
	if ErrorCode(err) == CodeTerminalNotFound {
		return nil, nil
	}
	if err == nil {
		var av *ApprovalView
		if av, err = s.offerRead(ctx, p, t.TerminalID, t.ID, seen); err == nil {
			return av, nil
		}
	}
	return unreadablePrompt(err), nil
}

// Approve answers the permission prompt of a Turn awaiting approval.
func (s *ApprovalCases) Approve(ctx context.Context, turnID string, d ApprovalDecision) (ActionResult, error) {
	t, p, err := s.ownedTurn(ctx, turnID)
	if err != nil {
		return ActionResult{}, err
	}
	if err := checkDecision(d); err != nil {
		return ActionResult{}, err
	}
	if err := s.endpoints.of(t.Endpoint).Configured(UseApprovals); err != nil {
		return ActionResult{}, err
	}
	unlock := s.turns.lockTerminal(t.TerminalID)
	defer unlock()
	if t, err = s.store.Turn(ctx, turnID); err != nil {
		return ActionResult{}, err
	}
	if t.State != TurnAwaitingApproval {
		return ActionResult{}, stateConflict(t, "approval")
	}
	return s.approveShown(ctx, p, t, d)
}

// approveShown answers the prompt t's endpoint shows for the host, and
// records what the answer did.
func (s *ApprovalCases) approveShown(ctx context.Context, p Principal, t Turn, d ApprovalDecision) (ActionResult, error) {
	stage, a, err := s.answerFenced(ctx, p, t, d)
	if err != nil {
		return ActionResult{Outcome: OutcomeRejectedBeforeInput}, err
	}
	answeredAt := t.Revision
	return s.recordAnswer(ctx, t, func(next Turn) (Turn, string, bool, ActionResult) {
		switch {
		case stage != AnswerVerified:
			next.State, next.FailureReason = TurnResponseUncertain, a.unproven()
			return next, "turn.response_uncertain", true, ActionResult{Outcome: OutcomeUncertain, DoNotRetry: true}
		case d == Reject && a.rejectWaits() && next.State == TurnWaitingForHost:
			// The monitor saw the agent stop first and announced it already.
			return next, "", false, ActionResult{Outcome: OutcomeDone}
		case d == Reject && a.rejectWaits():
			next.State, next.FailureReason = TurnWaitingForHost, "the command was rejected; the agent waits for instructions"
			return next, "turn.waiting_for_host", true, ActionResult{Outcome: OutcomeDone}
		}
		if next.State == TurnAwaitingApproval && !(next.Revision != answeredAt && s.waitsOnAnother(ctx, next, a.Prompt.Fingerprint)) {
			next.State = TurnWorking
		}
		return next, "turn.approval_answered", false, ActionResult{Outcome: OutcomeDone}
	})
}

// waitsOnAnother reports whether t, changed by its monitor since a prompt
// was answered, waits on another prompt now: the agent asked its next one
// as the answer was proven (Claude Code's hook holds its next request at
// once with a fast model), and the monitor announced it. Recording the
// answer then leaves that wait as it is (made working, the next look
// announced the same prompt again). No input.
func (s *ApprovalCases) waitsOnAnother(ctx context.Context, t Turn, answered string) bool {
	now, err := s.endpoints.of(t.Endpoint).ReadPrompt(ctx, t)
	return err == nil && now.Prompt.Present && now.Prompt.Fingerprint != answered
}

// recordAnswer writes what an answer to a prompt or step did to the Turn
// (recordAnswerBy).
func (s *ApprovalCases) recordAnswer(ctx context.Context, t Turn, decide func(Turn) (Turn, string, bool, ActionResult)) (ActionResult, error) {
	return recordAnswerBy(ctx, s.basics, s.writer, t, nil, decide)
}

// recordAnswerWith is recordAnswer with extra event data.
func (s *ApprovalCases) recordAnswerWith(ctx context.Context, t Turn, extra map[string]any, decide func(Turn) (Turn, string, bool, ActionResult)) (ActionResult, error) {
	return recordAnswerBy(ctx, s.basics, s.writer, t, extra, decide)
}

// turnWriter is what a use case that moves a Turn needs of the Turns: the
// change stored with its event, compare-and-swap (transitionWith), and
// the Turn followed again.
type turnWriter interface {
	transitionWith(ctx context.Context, t Turn, typ string, webhook bool, extra map[string]any) (Turn, error)
	startMonitor(id string)
}

// recordAnswerBy writes what an answer to a prompt or step did to the
// Turn, with extra event data, retrying when the monitor changed the Turn
// meanwhile (decide is applied to the fresh record), and resumes
// monitoring. No input happens here.
func recordAnswerBy(ctx context.Context, b basics, w turnWriter, t Turn, extra map[string]any, decide func(Turn) (Turn, string, bool, ActionResult)) (ActionResult, error) {
	ctx = context.WithoutCancel(ctx)
	for attempt := 0; attempt < 5; attempt++ {
		next, typ, webhook, res := decide(t)
		stored, err := w.transitionWith(ctx, next, typ, webhook, extra)
		if errors.Is(err, ErrRevisionConflict) {
			if t, err = b.store.Turn(ctx, t.ID); err != nil {
				return ActionResult{}, err
			}
			continue
		}
		if err != nil {
			return ActionResult{}, err
		}
		res.Turn = stored
		if stored.State.Monitored() {
			w.startMonitor(stored.ID)
		}
		return res, nil
	}
	return ActionResult{}, fmt.Errorf("answer to turn %s: the turn kept changing", t.ID)
}

// ApproveTerminal answers the permission prompt of a pane no Turn holds.
func (s *ApprovalCases) ApproveTerminal(ctx context.Context, terminalID string, d ApprovalDecision) (ActionResult, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return ActionResult{}, err
	}
	if err := checkDecision(d); err != nil {
		return ActionResult{}, err
	}
	if s.approvals == nil || s.turns == nil {
		return ActionResult{}, E(CodeUnavailable, "approvals are not configured")
	}
	unlock := s.turns.lockTerminal(terminalID)
	defer unlock()
	if held, err := s.holdingTurn(ctx, terminalID); err == nil {
		if p.CanSeeHost(held.HostID) {
			return ActionResult{}, E(CodeConflictActiveTurn, "turn "+held.ID+" holds this terminal; answer through that Turn's approval (its approve actions)")
		}
		return ActionResult{}, E(CodeConflictActiveTurn, "a Turn of another controller holds this terminal")
	} else if !errors.Is(err, ErrNotFound) {
		return ActionResult{}, err
	}
	stage, _, err := s.answerFenced(ctx, p, Turn{TerminalID: terminalID, Endpoint: ParseEndpoint(terminalID)}, d)
	if err != nil {
		return ActionResult{Outcome: OutcomeRejectedBeforeInput}, err
	}
	ctx = context.WithoutCancel(ctx)
	res := ActionResult{Outcome: OutcomeDone}
	typ := "terminal.approval_answered"
	if stage != AnswerVerified {
		res = ActionResult{Outcome: OutcomeUncertain, DoNotRetry: true}
		typ = "terminal.approval_uncertain"
	}
	err = s.store.InTx(ctx, func(tx Tx) error {
		_, err := s.emitLocked(ctx, tx, Event{Type: typ, HostID: p.HostID, Conversation: p.Conversation, Subject: terminalID,
			Data: map[string]any{"terminal_id": terminalID, "decision": string(d), "outcome": string(res.Outcome)}}, false)
		return err
	})
	return res, err
}

// liveApprovalOffer is p's live offer of the prompt of terminalID (and
// turnID), if it offers d.
func (s *ApprovalCases) liveApprovalOffer(ctx context.Context, p Principal, terminalID, turnID string, d ApprovalDecision) (Offer, error) {
	var offer Offer
	err := s.store.InTx(ctx, func(tx Tx) error {
		var err error
		offer, err = tx.LiveOffer(ctx, "approval", terminalID, turnID, p.HostID, p.Conversation, s.clock.Now().UTC())
		return err
	})
	if errors.Is(err, ErrNotFound) {
		return Offer{}, E(CodeOfferExpired, "no live offer for this prompt: read the status (GET) first, from the same conversation, and answer within 5 minutes")
	}
	if err != nil {
		return Offer{}, err
	}
	if !slices.Contains(offer.Decisions, d) {
		return Offer{}, E(CodeDecisionUnavailable, "this prompt does not offer "+string(d))
	}
	return offer, nil
}

// fenceApproval durably fences the offered prompt before any input: a
// replay or a restart can never answer the same prompt twice. It returns
// the occurrence's fence key.
func (s *ApprovalCases) fenceApproval(ctx context.Context, offer Offer) (string, error) {
	var key string
	err := s.store.InTx(ctx, func(tx Tx) error {
		var err error
		key, err = consumeFence(ctx, tx, offer.ID, offer.Fingerprint, s.clock.Now().UTC())
		return err
	})
	if errors.Is(err, ErrFingerprintConsumed) {
		return "", E(CodePromptAlreadyAnswered, "this exact prompt was answered already")
	}
	if err != nil {
		return "", err
	}
	Failpoint("approval.reserved")
	return key, nil
}

// answerFenced is the one fenced answer to a permission prompt, on any
// endpoint, for a Turn or a pane no Turn holds (t names only the pane):
// a live offer of this caller, the same prompt shown now, its fingerprint
// fenced durably, then one answer. The caller holds the endpoint's lock.
// An error means nothing was sent.
func (s *ApprovalCases) answerFenced(ctx context.Context, p Principal, t Turn, d ApprovalDecision) (AnswerStage, PromptRead, error) {
	ep := s.endpoints.of(t.Endpoint)
	offer, err := s.liveApprovalOffer(ctx, p, t.TerminalID, t.ID, d)
	if err != nil {
		return AnswerNothing, PromptRead{}, s.manualOr(ctx, t.TerminalID, err)
	}
	seen, err := ep.ReadPrompt(ctx, t)
	if err != nil {
		return AnswerNothing, PromptRead{}, err
	}
	if seen.Prompt.Present && !seen.Prompt.Answerable {
		return AnswerNothing, seen, E(CodeManualRequired, "the prompt shown now is not one AKK answers; answer it "+seen.where()+" (nothing was sent)")
	}
	if !seen.Prompt.Present || seen.Prompt.Fingerprint != offer.Fingerprint {
		return AnswerNothing, seen, E(CodePromptChanged, "the prompt shown now is not the one offered; read the status again")
	}
	key, err := s.fenceApproval(ctx, offer)
	if err != nil {
		return AnswerNothing, seen, err
	}
	if t.ID != "" {
		defer s.answerTurn(t.ID)()
	}
	seq, done := s.keySequence(ctx)
	stage, err := ep.SendAnswer(seq, t, seen, offer.Fingerprint, d)
	done()
	if stage == AnswerVerified {
		if err := s.provenFence(ctx, key); err != nil {
			// The fence stays: the same prompt is not answered again.
			slog.Warn("record a proven answer", "err", err)
		}
	}
	if stage != "" && stage != AnswerNothing {
		Failpoint("approval.sent")
	}
	if stage == "" || stage == AnswerNothing {
		if errors.Is(err, ErrDecisionUnavailable) {
			return AnswerNothing, seen, E(CodeDecisionUnavailable, "the profile cannot prove a key plan for "+string(d)+" here")
		}
		msg := "the prompt changed or ended before anything was sent"
		if err != nil && !errors.Is(err, ErrPromptChanged) {
			msg = "nothing was sent: " + err.Error()
		}
		return AnswerNothing, seen, &Error{Code: CodePromptChanged, Message: msg, Err: err}
	}
	return stage, seen, nil
}

// manualOr is err, unless the pane shows a prompt AKK does not answer (no
// offer is ever made of it): then manual_required, so a host that read the
// status is not sent back to read it again.
func (s *ApprovalCases) manualOr(ctx context.Context, terminalID string, err error) error {
	var de *Error
	if !errors.As(err, &de) || de.Code != CodeOfferExpired {
		return err
	}
	term, oerr := s.turns.term.Observe(ctx, terminalID)
	if oerr != nil {
		return err
	}
	pr, perr := s.approvals.Prompt(ctx, term)
	if perr == nil && pr.Present && !pr.Answerable {
		reason := pr.Reason
		if reason == "" {
			reason = "this prompt's shape is not one AKK can answer"
		}
		return E(CodeManualRequired, reason+"; answer it in the pane (nothing was sent)")
	}
	if perr != nil {
		// The status shows such a prompt as unreadable, never answerable.
		return E(CodeManualRequired, "AKK cannot read the prompt on this pane; answer it in the pane (nothing was sent)")
	}
	return err
}

// fenceKey is the fence of the current occurrence of the prompt base: an
// answer AKK proved (the prompt left the screen) ends an occurrence, so the
// same prompt shown again later is a new one, answerable once more; an
// answer not proven keeps its occurrence fenced, so the same prompt still
// shown is never answered twice. The first occurrence's key is the base
// itself.
func fenceKey(ctx context.Context, tx Tx, base string) (string, error) {
	n, err := tx.ProvenOccurrences(ctx, base)
	if err != nil || n == 0 {
		return base, err
	}
	return fmt.Sprintf("%s#%d", base, n), nil
}

// consumeFence fences the current occurrence of base for the offer and
// returns its key.
func consumeFence(ctx context.Context, tx Tx, offerID, base string, now time.Time) (string, error) {
	key, err := fenceKey(ctx, tx, base)
	if err != nil {
		return "", err
	}
	return key, tx.ConsumeOffer(ctx, offerID, base, key, now)
}

// fenceConsumed reports whether the current occurrence of base was answered.
func fenceConsumed(ctx context.Context, tx Tx, base string) (bool, error) {
	key, err := fenceKey(ctx, tx, base)
	if err != nil {
		return false, err
	}
	return tx.FingerprintConsumed(ctx, key)
}
