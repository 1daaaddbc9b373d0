package codex

import (
	"regexp"

	"akk/terminaldrivers/agent"
)

// commandApproval is the permission prompt grammar of the profiled
// versions. Each draws "Would you like to run the following
// command?", the environment, the reason and "$ <command>", then the menu
// "› 1. Yes, proceed (y) / 2. Yes, and don't ask again for commands that
// start with `…` (p) / 3. No, and tell Codex what to do differently (esc)"
// and the footer "Press enter to confirm or esc to cancel" as the last row.
//
// Keys (measured on every profiled version): a row's digit selects and submits it at
// once. The native No aborts the turn ("You canceled the request to run …",
// "Conversation interrupted"), exactly as Escape, n, or Down, Down, Enter
// do; its digit is the key that can do no harm if the prompt vanished a
// moment before (it types one character into the composer, where Escape
// would interrupt a running turn).
var commandApproval = agent.ApprovalGrammar{
	Title:   regexp.MustCompile(`^  (Would you like to|Do you want to) `),
	Footers: []string{"Press enter to confirm or esc to cancel"},
	Cursor:  "›",
	Shapes: []agent.ApprovalShape{{
		Title:         "Would you like to run the following command?",
		Kind:          "shell_command",
		Tool:          "exec_command",
		CommandPrefix: "$ ",
		Once:          "Yes, proceed (y)",
		Reject:        "No, and tell Codex what to do differently (esc)",
		Persistent: []*regexp.Regexp{
			regexp.MustCompile("^Yes, and don't ask again for commands that start with `.*` \\(p\\)$"),
			regexp.MustCompile(`^Yes, and don't ask again for this command \(p\)$`),
		},
		Keys: agent.KeyRowNumber,
	}},
}

// ApprovalGrammar implements agent.ApprovalProfile.
func (p Profile) ApprovalGrammar() (agent.ApprovalGrammar, bool) {
	return p.Approval, p.Approval.Title != nil && len(p.Approval.Shapes) > 0
}
