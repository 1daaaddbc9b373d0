package domain

import (
	"fmt"
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
