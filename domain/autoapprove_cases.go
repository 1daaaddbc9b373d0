package domain

import (
	"context"
	"errors"
	"log/slog"
)

// policyHost checks that the caller may read or change hostID's policy:
// the operator, or that host itself.
func (s *ApprovalCases) policyHost(ctx context.Context, hostID string) (Principal, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return p, err
	}
	if !p.CanSeeHost(hostID) {
		return p, E(CodeForbidden, "a host reads and sets only its own approval policy")
	}
	if _, err := s.store.Host(ctx, hostID); errors.Is(err, ErrNotFound) {
		return p, E(CodeHostNotFound, "no host "+hostID)
	} else if err != nil {
		return p, err
	}
	return p, nil
}

// ApprovalPolicy returns the host's exact-command auto-approval rules.
func (s *ApprovalCases) ApprovalPolicy(ctx context.Context, hostID string) ([]ApprovalRule, error) {
	if _, err := s.policyHost(ctx, hostID); err != nil {
		return nil, err
	}
	return s.readPolicy(ctx, hostID)
}

// readPolicy reads the host's rules from the store.
func (s *ApprovalCases) readPolicy(ctx context.Context, hostID string) (rules []ApprovalRule, err error) {
	err = s.store.InTx(ctx, func(tx Tx) error {
		rules, err = tx.ApprovalPolicy(ctx, hostID)
		return err
	})
	return rules, err
}

// SetApprovalPolicy replaces the host's rules (none turns auto-approval
// off), audited as a host.approval_policy_changed event.
func (s *ApprovalCases) SetApprovalPolicy(ctx context.Context, hostID string, rules []ApprovalRule) ([]ApprovalRule, error) {
	p, err := s.policyHost(ctx, hostID)
	if err != nil {
		return nil, err
	}
	if err := validateRules(rules); err != nil {
		return nil, err
	}
	if rules == nil {
		rules = []ApprovalRule{}
	}
	now := s.clock.Now().UTC()
	err = s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.PutApprovalPolicy(ctx, hostID, rules, now); err != nil {
			return err
		}
		by := "operator"
		if !p.Operator {
			by = "host"
		}
		_, err := tx.AppendEvent(ctx, Event{Type: "host.approval_policy_changed", HostID: hostID, Subject: hostID, CreatedAt: now,
			Data: map[string]any{"host_id": hostID, "rules": rules, "changed_by": by}})
		return err
	})
	if err != nil {
		return nil, err
	}
	return rules, nil
}

// hostRules are the host's auto-approval rules; none when it has no
// policy or it cannot be read (then nothing is auto-approved).
func (s *ApprovalCases) hostRules(ctx context.Context, hostID string) []ApprovalRule {
	rules, err := s.readPolicy(ctx, hostID)
	if err != nil {
		return nil
	}
	return rules
}

// autoRule is the host's rule that names exactly the prompt t's endpoint
// shows now, and that prompt (-1: none; see matchRule). No input; the
// endpoint is read only when the host has rules.
func (s *ApprovalCases) autoRule(ctx context.Context, t Turn) (ApprovalPrompt, int) {
	rules := s.hostRules(ctx, t.HostID)
	if len(rules) == 0 {
		return ApprovalPrompt{}, -1
	}
	seen, err := s.endpoints.of(t.Endpoint).ReadPrompt(ctx, t)
	if err != nil || !seen.Prompt.Present {
		return ApprovalPrompt{}, -1
	}
	facts := seen.Term
	if seen.RuleFacts != nil {
		facts = seen.RuleFacts(ctx)
	}
	return seen.Prompt, matchRule(rules, seen.Prompt, facts)
}

// autoApprove answers the permission prompt of t (awaiting approval) once,
// as its host's policy allows, on any endpoint: under the endpoint's lock,
// the prompt shown now must match a rule exactly; then the same fenced
// path as a host's approve_once, recorded as turn.approval_auto_approved
// (or response_uncertain). done is false when nothing was sent: the
// prompt is then the host's to answer.
func (s *ApprovalCases) autoApprove(ctx context.Context, t Turn) (done bool) {
	unlock := s.turns.lockTerminal(t.TerminalID)
	defer unlock()
	t, err := s.store.Turn(ctx, t.ID)
	if err != nil || t.State != TurnAwaitingApproval {
		return false
	}
	pr, rule := s.autoRule(ctx, t)
	if rule < 0 {
		return false
	}
	p := Principal{HostID: t.HostID, Conversation: t.Conversation}
	if consumed, err := s.insertApprovalOffer(ctx, p, t.TerminalID, t.ID, pr, s.clock.Now().UTC()); err != nil || consumed {
		return false
	}
	stage, a, err := s.answerFenced(ctx, p, t, ApproveOnce)
	if err != nil {
		slog.Info("auto-approval: nothing sent", "turn_id", t.ID, "err", err)
		return false
	}
	// The command the rule matched (a rule names one plain command line),
	// redacted: an adapter's excerpt may be raw.
	excerpt := pr.Command
	if excerpt == "" {
		excerpt = pr.CommandExcerpt
	}
	excerpt = boundText(s.turns.redact, excerpt, 400)
	extra := map[string]any{"decision": string(ApproveOnce), "rule": rule, "command_excerpt": excerpt}
	_, err = s.recordAnswerWith(ctx, t, extra, func(next Turn) (Turn, string, bool, ActionResult) {
		if stage != AnswerVerified {
			next.State, next.FailureReason = TurnResponseUncertain, a.unproven()
			return next, "turn.response_uncertain", true, ActionResult{Outcome: OutcomeUncertain, DoNotRetry: true}
		}
		if next.State == TurnAwaitingApproval && !(next.Revision != t.Revision && s.waitsOnAnother(ctx, next, a.Prompt.Fingerprint)) {
			next.State = TurnWorking
		}
		return next, "turn.approval_auto_approved", true, ActionResult{Outcome: OutcomeDone}
	})
	if err != nil {
		slog.Error("auto-approval: record the answer", "turn_id", t.ID, "err", err)
	}
	return true
}
