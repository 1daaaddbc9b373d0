package claude

import (
	"regexp"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// Profile is one Claude Code version's screen grammar. The screen is read
// from the bottom: Claude Code draws its composer between two full-width
// rules ("───") with a footer below, and replaces that block with a prompt
// or dialog under a single rule when it needs an answer.
type Profile struct {
	Version string

	// Composer is the prompt glyph that starts the composer's first row.
	Composer string
	// Busy marks a running turn in the footer under the composer.
	Busy string
	// Spinner matches the animated status row above the composer while a
	// turn runs ("✶ Newspapering…"); the finished row has no ellipsis.
	Spinner *regexp.Regexp
	// StartupDialogs are texts of dialogs shown before the composer.
	StartupDialogs []string
	// ApprovalQuestion and ApprovalFirstOption identify a permission prompt.
	ApprovalQuestion    *regexp.Regexp
	ApprovalFirstOption *regexp.Regexp
	// InteractionFooter marks an AskUserQuestion questionnaire, whose
	// question headers carry one of QuestionMarks ("☐ Color").
	InteractionFooter []string
	QuestionMarks     []string
	InteractionOption *regexp.Regexp

	// Turn is how a Turn is typed, read back and followed in the
	// transcript (see turn.go).
	Turn agent.TurnRules

	// Approval is the permission prompt grammar and its key plans
	// (approval.go); Questions the AskUserQuestion grammar and its key
	// plans (interaction.go). A zero value is a version AKK does not answer
	// prompts on: they are shown as manual_required.
	Approval  agent.ApprovalGrammar
	Questions QuestionGrammar

	// Native are the closed plans for the agent's own controls (its status
	// view, its new-thread command; native.go).
	Native agent.NativeRules
}

// As is p for another version that behaves the same: the one-line
// derivation of a neighbour's profile.
func (p Profile) As(version string) Profile {
	p.Version = version
	return p
}

// Agent implements agent.Profile.
func (p Profile) Agent() domain.Agent {
	return domain.Agent{Kind: domain.AgentClaude, Version: p.Version, Profile: "claude-" + p.Version}
}

const minRule = 20

func isRule(s string) bool { return screen.IsRule(s, '─', minRule) }

// Classify implements agent.Profile. Only what the grammar recognises is
// proven; everything else is unknown.
func (p Profile) Classify(c screen.Capture) agent.Reading {
	bottom := c.Bottom()
	if bottom == 0 {
		return agent.Reading{State: domain.ScreenUnknown, Reason: "blank screen"}
	}
	lower := c.LastIndex(0, bottom, isRule)
	if lower < 0 {
		if region := c.Slice(max(0, bottom-15), bottom); p.startupDialog(region) {
			return agent.Reading{State: domain.ScreenStartupDialog, Region: region, Reason: "startup dialog without rule"}
		}
		return agent.Reading{State: domain.ScreenUnknown, Reason: "no rule on screen"}
	}
	upper := c.LastIndex(0, lower, isRule)
	if upper >= 0 && upper+1 < lower && strings.HasPrefix(c.Lines[upper+1].Text, p.Composer) {
		return p.composer(c, upper, lower, bottom)
	}
	start := lower + 1
	if upper >= 0 && p.questionnaireAbove(c.Slice(upper+1, lower)) {
		// A questionnaire draws a rule between its options; it starts
		// under the rule above.
		start = upper + 1
	}
	region := c.Slice(start, bottom)
	switch {
	case p.startupDialog(region):
		return agent.Reading{State: domain.ScreenStartupDialog, Region: region, Reason: "startup dialog"}
	case p.approval(region):
		return agent.Reading{State: domain.ScreenAwaitingApproval, Region: region, Reason: "permission prompt"}
	case p.interaction(region):
		return agent.Reading{State: domain.ScreenAwaitingInteraction, Region: region, Reason: "questionnaire"}
	}
	return agent.Reading{State: domain.ScreenUnknown, Region: region, Reason: "unrecognised region under the last rule"}
}

// composer reads the composer between the rules at upper and lower.
func (p Profile) composer(c screen.Capture, upper, lower, bottom int) agent.Reading {
	region := c.Slice(upper, bottom)
	line := c.Lines[upper+1]
	first := strings.TrimPrefix(line.Text, p.Composer)
	// A suggestion in an empty composer is drawn dim; typed text is not.
	empty := lower == upper+2 && (screen.Blank(first) || line.Dim(len(p.Composer)))
	footer := c.Slice(lower+1, bottom)
	if len(footer.Lines) > 4 {
		// Something other than the footer (a menu, a list) is drawn under
		// the composer: not a state this grammar knows.
		return agent.Reading{State: domain.ScreenUnknown, ComposerEmpty: empty, Region: region, Reason: "rows under the composer"}
	}
	for _, l := range footer.Lines {
		if strings.Contains(strings.ToLower(l), p.Busy) {
			return agent.Reading{State: domain.ScreenWorking, ComposerEmpty: empty, Region: region, Reason: "busy footer"}
		}
	}
	for i := max(0, upper-4); i < upper; i++ {
		if p.Spinner.MatchString(c.Lines[i].Text) {
			return agent.Reading{State: domain.ScreenWorking, ComposerEmpty: empty, Region: region, Reason: "spinner"}
		}
	}
	return agent.Reading{State: domain.ScreenIdle, ComposerEmpty: empty, Region: region, Reason: "composer"}
}

func (p Profile) startupDialog(r screen.Region) bool {
	for _, d := range p.StartupDialogs {
		if r.Contains(d) {
			return true
		}
	}
	return false
}

func (p Profile) approval(r screen.Region) bool {
	var question, option bool
	for _, l := range r.Lines {
		question = question || p.ApprovalQuestion.MatchString(l)
		option = option || p.ApprovalFirstOption.MatchString(l)
	}
	return question && option
}

func (p Profile) questionnaireAbove(r screen.Region) bool {
	for _, m := range p.QuestionMarks {
		if r.Contains(m) {
			return true
		}
	}
	return false
}

// interaction recognises a questionnaire: its key hint row, or, on the
// review step of several questions (which has none), the question header
// marks above numbered options.
func (p Profile) interaction(r screen.Region) bool {
	footer := len(p.InteractionFooter) > 0
	for _, f := range p.InteractionFooter {
		footer = footer && r.Contains(f)
	}
	if footer {
		return true
	}
	option := false
	for _, l := range r.Lines {
		option = option || p.InteractionOption.MatchString(l)
	}
	return option && p.questionnaireAbove(r)
}
