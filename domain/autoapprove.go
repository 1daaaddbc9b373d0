package domain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
)

// ApprovalRule is one exact command a host lets AKK approve once on its
// behalf: the argv the prompt's command must be, word for word, optionally
// only for one agent kind and one project directory.
type ApprovalRule struct {
	Agent   string   `json:"agent,omitempty"`
	Project string   `json:"project,omitempty"`
	Argv    []string `json:"argv"`
}

// Limits of a policy.
const (
	MaxApprovalRules = 50
	MaxRuleArgs      = 32
	MaxRuleArg       = 200
)

// safeWord is one word of a plain command: no shell composition (; | &),
// redirection (< >), expansion ($ ` ~ !), glob (* ? [ ]), quoting, braces,
// parentheses, comments or whitespace.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9._+:,@%/=-]+$`)

// ruleWordProblem says why w cannot be a word of a rule, or "".
func ruleWordProblem(i int, w string) string {
	switch {
	case w == "" || len(w) > MaxRuleArg:
		return fmt.Sprintf("a word is 1 to %d characters", MaxRuleArg)
	case !safeWord.MatchString(w):
		return "a word holds only letters, digits and . _ + : , @ % / = - (no shell composition, pipes, redirections, expansion, globs, quotes or spaces)"
	case strings.HasPrefix(w, "/"):
		return "an absolute path is outside the project"
	case w == ".." || strings.HasPrefix(w, "../") || strings.HasSuffix(w, "/..") || strings.Contains(w, "/../"):
		return "a path that leaves the project is not allowed"
	case i == 0 && strings.Contains(w, "="):
		return "the command may not start with an environment assignment"
	}
	return ""
}

// validateRules checks a whole policy; a rejected policy changes nothing.
func validateRules(rules []ApprovalRule) error {
	if len(rules) > MaxApprovalRules {
		return Invalid(fmt.Sprintf("at most %d rules", MaxApprovalRules), FieldError{Field: "rules", Message: "too many"})
	}
	seen := map[string]bool{}
	for i, r := range rules {
		f := fmt.Sprintf("rules[%d]", i)
		if r.Agent != "" && r.Agent != string(AgentClaude) && r.Agent != string(AgentCodex) {
			return Invalid("agent is claude or codex", FieldError{Field: f + ".agent", Message: "claude or codex"})
		}
		if r.Project != "" && (!strings.HasPrefix(r.Project, "/") || len(r.Project) > 4096 || strings.ContainsAny(r.Project, "\x00\n")) {
			return Invalid("project is an absolute directory", FieldError{Field: f + ".project", Message: "an absolute path"})
		}
		if len(r.Argv) == 0 || len(r.Argv) > MaxRuleArgs {
			return Invalid(fmt.Sprintf("argv has 1 to %d words", MaxRuleArgs), FieldError{Field: f + ".argv", Message: "1 to 32 words"})
		}
		for k, w := range r.Argv {
			if why := ruleWordProblem(k, w); why != "" {
				return Invalid(why, FieldError{Field: fmt.Sprintf("%s.argv[%d]", f, k), Message: why})
			}
		}
		key := r.Agent + "\x00" + r.Project + "\x00" + strings.Join(r.Argv, "\x00")
		if seen[key] {
			return Invalid("a rule is given twice", FieldError{Field: f, Message: "duplicate"})
		}
		seen[key] = true
	}
	return nil
}

// plainArgv splits a command read whole from the prompt into its words, only
// when it is a plain command: safe words separated by single spaces. Any
// shell syntax, quoting or odd spacing is not plain.
func plainArgv(cmd string) ([]string, bool) {
	words := strings.Split(cmd, " ")
	for i, w := range words {
		if ruleWordProblem(i, w) != "" {
			return nil, false
		}
	}
	return words, true
}

// matchRule is the index of the rule that approves prompt pr on term, or -1.
// Only a shell-command prompt whose command the profile read whole and
// which is exactly a rule's argv matches.
func matchRule(rules []ApprovalRule, pr ApprovalPrompt, term Terminal) int {
	if !pr.Present || !pr.Answerable || pr.Kind != "shell_command" || pr.Command == "" || !slices.Contains(pr.Decisions, ApproveOnce) {
		return -1
	}
	argv, ok := plainArgv(pr.Command)
	if !ok {
		return -1
	}
	for i, r := range rules {
		if (r.Agent == "" || r.Agent == string(term.Agent.Kind)) && (r.Project == "" || r.Project == term.Project) &&
			slices.Equal(r.Argv, argv) {
			return i
		}
	}
	return -1
}

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
	seen, err := s.endpoints.of(t.Endpoint).readPrompt(ctx, t)
	if err != nil || !seen.pr.Present {
		return ApprovalPrompt{}, -1
	}
	facts := seen.term
	if seen.ruleFacts != nil {
		facts = seen.ruleFacts(ctx)
	}
	return seen.pr, matchRule(rules, seen.pr, facts)
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
			next.State, next.FailureReason = TurnResponseUncertain, a.unproven
			return next, "turn.response_uncertain", true, ActionResult{Outcome: OutcomeUncertain, DoNotRetry: true}
		}
		if next.State == TurnAwaitingApproval {
			next.State = TurnWorking
		}
		return next, "turn.approval_auto_approved", true, ActionResult{Outcome: OutcomeDone}
	})
	if err != nil {
		slog.Error("auto-approval: record the answer", "turn_id", t.ID, "err", err)
	}
	return true
}
