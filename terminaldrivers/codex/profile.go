package codex

import (
	"regexp"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// Profile is one Codex version's screen grammar and process shape. Codex
// draws its composer ("› ") near the bottom with the session status line
// ("<model> <effort> · <cwd>") under it once the session is ready; prompts
// and questionnaires replace the composer and end with a key hint row.
type Profile struct {
	Version string

	// RolloutInProcess: the TUI process itself holds its rollout open, so
	// an open rollout proves the thread and none proves there is none yet.
	// When false, a managed app-server daemon holds the rollouts.
	RolloutInProcess bool

	Composer string
	// Status matches the session status line under the composer.
	Status *regexp.Regexp
	// Busy marks a running turn in the rows above the composer.
	Busy string
	// TitleBusy matches the pane title while a turn runs (a spinner). It
	// is the only sign of a running turn while a reply streams: Codex
	// 0.169.0 then hides its busy row.
	TitleBusy *regexp.Regexp
	// StartupDialogs are texts of dialogs shown before the composer.
	StartupDialogs []string
	// ApprovalQuestion, ApprovalFirstOption and ApprovalHint identify an
	// approval prompt.
	ApprovalQuestion    *regexp.Regexp
	ApprovalFirstOption *regexp.Regexp
	ApprovalHint        string
	// Question and QuestionHint identify a request_user_input questionnaire.
	Question     *regexp.Regexp
	QuestionHint string

	// Turn is how a Turn is typed, read back and followed in the rollout
	// (see turn.go).
	Turn agent.TurnRules

	// Approval is the permission prompt grammar and its key plans
	// (approval.go); Questions the request_user_input grammar and its key
	// plans (interaction.go). A zero value is a version AKK does not answer
	// prompts on: they are shown as manual_required.
	Approval  agent.ApprovalGrammar
	Questions QuestionGrammar

	// MenuHint is in the key hint row that ends a menu of the agent's own.
	MenuHint string
	// UnmarkedRows, when set, is how many rows a menu shows at most on a
	// version that draws no scroll markers (0.153.4 to 0.155.1 show eight
	// rows of a longer list with nothing to say so): a window that full
	// cannot be proven whole.
	UnmarkedRows int

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
	return domain.Agent{Kind: domain.AgentCodex, Version: p.Version, Profile: "codex-" + p.Version, ThreadProbe: true}
}

// Classify implements agent.Profile.
func (p Profile) Classify(c screen.Capture) agent.Reading {
	bottom := c.Bottom()
	if bottom == 0 {
		return agent.Reading{State: domain.ScreenUnknown, Reason: "blank screen"}
	}
	tail := c.Slice(max(0, bottom-25), bottom)
	for _, d := range p.StartupDialogs {
		if tail.Contains(d) {
			return agent.Reading{State: domain.ScreenStartupDialog, Region: tail, Reason: "startup dialog"}
		}
	}
	if r, ok := p.prompt(c, bottom); ok {
		return r
	}
	if r, ok := p.questionStep(c); ok {
		return r
	}
	r := p.composer(c, bottom)
	if a := p.Questions.Async; a != nil {
		r.AsyncQuestion = a.Collapsed(c).Found
	}
	return r
}

// prompt recognises an approval prompt or a questionnaire: a heading row,
// then options, then the key hint as the last row.
func (p Profile) prompt(c screen.Capture, bottom int) (agent.Reading, bool) {
	last := c.Lines[bottom-1].Text
	// The heading may sit far above the hint when the command is long.
	from := 0
	switch {
	case strings.Contains(last, p.ApprovalHint):
		start := c.LastIndex(from, bottom, p.ApprovalQuestion.MatchString)
		if start < 0 {
			return agent.Reading{}, false
		}
		region := c.Slice(start, bottom)
		for _, l := range region.Lines {
			if p.ApprovalFirstOption.MatchString(l) {
				return agent.Reading{State: domain.ScreenAwaitingApproval, Region: region, Reason: "approval prompt"}, true
			}
		}
	case strings.Contains(last, p.QuestionHint):
		start := c.LastIndex(from, bottom, p.Question.MatchString)
		if start < 0 {
			return agent.Reading{}, false
		}
		return agent.Reading{State: domain.ScreenAwaitingInteraction, Region: c.Slice(start, bottom), Reason: "questionnaire"}, true
	}
	return agent.Reading{}, false
}

// composer reads the composer and the rows around it: the status line
// under it proves the session ready, a busy row above it a running turn.
func (p Profile) composer(c screen.Capture, bottom int) agent.Reading {
	status := c.LastIndex(max(0, bottom-3), bottom, p.Status.MatchString)
	if status < 0 {
		return agent.Reading{State: domain.ScreenUnknown, Reason: "no session status line"}
	}
	// A tall draft pushes the composer's first row far up (composerReach).
	at := c.LastIndex(max(0, status-composerReach), status, func(s string) bool { return strings.HasPrefix(s, p.Composer) })
	if at < 0 {
		return agent.Reading{State: domain.ScreenUnknown, Reason: "no composer above the status line"}
	}
	region := c.Slice(at, status+1)
	line := c.Lines[at]
	rest := strings.TrimPrefix(line.Text, p.Composer)
	// The placeholder is drawn dim; typed text is not. Rows between the
	// composer and the status line are the draft's continuation.
	empty := screen.Blank(rest) || line.Dim(len(p.Composer))
	for i := at + 1; i < status; i++ {
		if t := c.Lines[i].Text; !screen.Blank(t) {
			empty = false
			if !strings.HasPrefix(t, "  ") {
				// Not a draft's indented continuation: the "›" row above
				// is not the composer.
				return agent.Reading{State: domain.ScreenUnknown, Reason: "unindented rows between the composer and the status line"}
			}
		}
	}
	if p.TitleBusy != nil && p.TitleBusy.MatchString(c.Title) {
		return agent.Reading{State: domain.ScreenWorking, ComposerEmpty: empty, Region: region, Reason: "title spinner"}
	}
	for i := max(0, at-6); i < at; i++ {
		if strings.Contains(c.Lines[i].Text, p.Busy) {
			return agent.Reading{State: domain.ScreenWorking, ComposerEmpty: empty, Region: c.Slice(i, status+1), Reason: "busy row"}
		}
	}
	return agent.Reading{State: domain.ScreenIdle, ComposerEmpty: empty, Region: region, Reason: "composer and status line"}
}
