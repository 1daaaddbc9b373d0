package codex

import (
	"regexp"
	"time"

	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/proc"
)

// The grammar every profiled version shares; each profile value states its
// own, so a version that draws differently gets its own values.
var (
	status           = regexp.MustCompile(`^\s+\S+ \S+ · \S`)
	approvalQuestion = regexp.MustCompile(`^\s*(Would you like to|Do you want to) `)
	approvalOption   = regexp.MustCompile(`^›\s*1\.\s+Yes`)
	question         = regexp.MustCompile(`^\s*Question \d+/\d+`)
	titleSpinner     = regexp.MustCompile(`^[\x{2800}-\x{28FF}]`) // braille spinner
	startupDialogs   = []string{
		"Do you trust the contents of this directory?",
		"Sign in with ChatGPT",
		"Update available!",
		"Try new model",
	}
	// turnRules were measured on every profiled version: a bracketed paste
	// shows within about 30 ms and an Enter even right after it submits
	// (the ~120 ms Enter-as-newline window applies to unbracketed bursts);
	// the wait keeps clear of it anyway.
	turnRules = agent.TurnRules{
		AsksForetold: true,
		PasteWindow:  150 * time.Millisecond,
		// Verification ends as soon as the composer holds the text, so
		// its bound costs only a send that fails; on a busy machine a
		// send once found no paste in the composer after 2 s.
		VerifyWithin: 5 * time.Second,
		// A paste that landed while the TUI still redrew the end of the
		// previous turn (a status line with a tip left behind) never
		// showed: the screen must hold still first.
		SettleGap:    150 * time.Millisecond,
		SubmitKey:    "Enter",
		InterruptKey: "Escape",
		// Kills the line before the cursor (Ctrl+Y yanks it back): one
		// row of draft only, so one press empties it.
		ClearKey:    "C-u",
		ClearRows:   1,
		Placeholder: collapsedPaste,
		Collapses:   collapses,
		Held:        Held,
		Parse:       ParseRolloutLine,
	}
)

// withRecords is turnRules with the version's way of finding its rollouts.
func withRecords(records func(proc.FS, *proc.Table, agent.Process) (agent.RecordSet, error)) agent.TurnRules {
	r := turnRules
	r.Records = records
	return r
}

// V0_155_1 is Codex 0.155.1, the version the seeds describe: a Node
// wrapper whose native child is the TUI and holds its rollout open.
var V0_155_1 = withNative(Profile{
	Version:             "0.155.1",
	RolloutInProcess:    true,
	Turn:                withRecords(rolloutsOfTUI),
	Composer:            "›",
	Status:              status,
	Busy:                "esc to interrupt",
	TitleBusy:           titleSpinner,
	StartupDialogs:      startupDialogs,
	ApprovalQuestion:    approvalQuestion,
	ApprovalFirstOption: approvalOption,
	ApprovalHint:        "Press enter to confirm or esc to cancel",
	Question:            question,
	QuestionHint:        "enter to submit", // "answer", or "all" on the last of several
	Approval:            commandApproval,
	Questions:           codexQuestions,
	MenuHint:            "esc to go back",
	UnmarkedRows:        8,
})

// V0_169_0 is Codex 0.169.0: the TUI hands threads to a managed app-server
// daemon per CODEX_HOME, which writes the rollouts and may serve several
// TUIs. It draws a key hint row under the status line.
var V0_169_0 = withNative(Profile{
	Version:             "0.169.0",
	RolloutInProcess:    false,
	Turn:                withRecords(rolloutsOfDaemon),
	Composer:            "›",
	Status:              status,
	Busy:                "esc to interrupt",
	TitleBusy:           titleSpinner,
	StartupDialogs:      startupDialogs,
	ApprovalQuestion:    approvalQuestion,
	ApprovalFirstOption: approvalOption,
	ApprovalHint:        "Press enter to confirm or esc to cancel",
	Question:            question,
	QuestionHint:        "enter to submit", // "answer", or "all" on the last of several
	Approval:            commandApproval,
	Questions:           codexQuestions,
	MenuHint:            "esc back",
})

// Profiles are every profiled Codex version, oldest first. A version that
// behaves as a neighbour is one line here, a derivation of that
// neighbour's value (its fixtures under terminaldrivers/testdata/screens
// prove it).
var Profiles = []Profile{
	// 0.153.4 and 0.154.0 run as 0.155.1: the TUI holds its rollout.
	// 0.154.0 adds the async question panel.
	V0_155_1.As("0.153.4"),
	withAsync(V0_155_1.As("0.154.0"), asyncPanel154),
	withAsync(V0_155_1, asyncPanel154),
	// 0.158.0 and later hand their threads to the managed app-server
	// daemon (measured: the TUI holds no rollout; the daemon writes them)
	// as 0.169.0 does; 0.158 and 0.159 ask "Trust this folder?".
	withAsync(trustsAsking(V0_169_0.As("0.158.0")), asyncPanel158),
	withAsync(trustsAsking(V0_169_0.As("0.159.0")), asyncPanel158),
	withAsync(trustsAsking(V0_169_0.As("0.159.2")), asyncPanel158),
	withAsync(V0_169_0, asyncPanel169),
	withAsync(V0_169_0.As("0.171.0"), asyncPanel169), // as 0.169.0
}

// trustsAsking is p recognising the "Trust this folder?" dialog of the
// 0.158 and 0.159 releases.
func trustsAsking(p Profile) Profile {
	p.StartupDialogs = append([]string{"Trust this folder?"}, p.StartupDialogs...)
	return p
}

// DaemonVersions are the profiled versions whose TUI hands its threads to
// a managed app-server daemon (its rollout is not the TUI's own).
func DaemonVersions() []string {
	var out []string
	for _, p := range Profiles {
		if !p.RolloutInProcess {
			out = append(out, p.Version)
		}
	}
	return out
}
