package claude

import (
	"regexp"

	"akk/terminaldrivers/agent"
)

// bashApproval is the permission prompt grammar every profiled version
// shares but for how it sets the command apart. Each draws a Bash prompt
// under a full-width rule: "Bash command", the command, "Do you want to
// proceed?", the menu "❯ 1. Yes / 2. Yes, and always allow … / 3. Yes, and
// switch to auto mode … / 4. No" and the footer "Esc to cancel · Tab to
// amend" ("Esc to cancel" while a person has a persistent row highlighted).
// Newer versions set the command apart between two dashed rules
// (commandRule '╌'); older ones indent it above the tool's description,
// which the excerpt then includes (commandRule 0).
//
// Keys (measured on every profiled version): a row's digit selects and
// submits it at once, wherever the highlight is. Escape also dismisses the
// prompt but is not the native No, and the persistent rows are never sent.
func bashApproval(commandRule rune) agent.ApprovalGrammar {
	return agent.ApprovalGrammar{
		Frame:   approvalFrame,
		Title:   approvalTitle,
		Footers: approvalFooters,
		Cursor:  "❯",
		Shapes:  []agent.ApprovalShape{bashShape(commandRule)},
	}
}

var (
	// The footer drops "Tab to amend" while a persistent row is highlighted.
	approvalFooters = []string{"Esc to cancel · Tab to amend", "Esc to cancel"}
	approvalFrame   = regexp.MustCompile(`^─{20,}\s*$`)
	// approvalTitle is the first row of any permission prompt: a few
	// capitalised words ("Bash command", "Edit file", "Fetch").
	approvalTitle = regexp.MustCompile(`^ [A-Z][A-Za-z]*( [A-Za-z]+){0,3}\s*$`)
	// 2.1.267 indents the command and the description under it by three;
	// the tip above them by one.
	bashRows       = regexp.MustCompile(`^   \S`)
	bashPersistent = []*regexp.Regexp{
		regexp.MustCompile(`^Yes, and always allow `),
		regexp.MustCompile(`^Yes, and don't ask again for `),
		regexp.MustCompile(`^Yes, and switch to auto mode( ·|$)`),
	}
)

func bashShape(commandRule rune) agent.ApprovalShape {
	return agent.ApprovalShape{
		Title:         "Bash command",
		Kind:          "shell_command",
		Tool:          "Bash",
		Question:      "Do you want to proceed?",
		CommandRule:   commandRule,
		CommandRows:   bashRows,
		CommandMargin: "│ ",
		Once:          "Yes",
		Reject:        "No",
		Persistent:    bashPersistent,
		Keys:          agent.KeyRowNumber,
	}
}

// ApprovalGrammar implements agent.ApprovalProfile.
func (p Profile) ApprovalGrammar() (agent.ApprovalGrammar, bool) {
	return p.Approval, p.Approval.Frame != nil && len(p.Approval.Shapes) > 0
}
