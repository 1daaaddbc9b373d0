package claude

import (
	"regexp"
	"time"

	"akk/terminaldrivers/agent"
)

// The grammar every profiled version shares; each profile value below states
// its own, so a version that draws differently gets its own values.
var (
	spinner          = regexp.MustCompile(`^[·✢✳✶✻✽*]\s+\S[^·]*…`)
	approvalQuestion = regexp.MustCompile(`^\s*Do you want to (proceed|make this edit|create|allow|run)`)
	approvalOption   = regexp.MustCompile(`^\s*(❯\s*)?1\.\s+Yes\b`)
	numberedOption   = regexp.MustCompile(`^\s*(❯\s*)?1\.\s+\S`)
	startupDialogs   = []string{
		"Do you want to use this API key?",
		"Do you trust the files in this folder?",
		"Is this a project you created or one you trust",
		"Choose the text style that looks best",
	}
	// turnRules were measured on every profiled version: a bracketed paste
	// shows in the composer within about 120 ms and Enter right after it
	// submits; a tab in pasted text is recorded as four spaces.
	turnRules = agent.TurnRules{
		PasteWindow: 100 * time.Millisecond,
		// Verification ends as soon as the composer holds the text, so
		// its bound costs only a send that fails; on a busy machine a
		// send once found no paste in the composer after 2 s.
		VerifyWithin: 5 * time.Second,
		SubmitKey:    "Enter",
		InterruptKey: "Escape",
		// Claude Code's stash: the whole draft, wherever the cursor is,
		// kept for the person and put back after the next submit. (It
		// keeps one: a draft stashed earlier and not restored is replaced.)
		ClearKey:    "C-s",
		Placeholder: collapsedPaste,
		Collapses:   collapses,
		Records:     transcriptRecords,
		Parse:       ParseTranscriptLine,
		IdleSince:   sessionIdleSince,
		// Claude Code marks its session record "waiting" as it draws a
		// permission dialog or a question (measured: from 41 ms after to
		// 190 ms before it), and writes the tool call 0-230 ms either
		// side of it.
		AsksForetold: true,
		Waiting:      sessionWaiting,
		// The transcript lags the session record by up to about 250 ms.
		IdleGrace: 2 * time.Second,
	}
)

// V2_1_267 is Claude Code 2.1.267, the version the seeds describe.
var V2_1_267 = withNative(Profile{
	Version:             "2.1.267",
	Composer:            "❯",
	Busy:                "esc to interrupt",
	Spinner:             spinner,
	StartupDialogs:      startupDialogs,
	ApprovalQuestion:    approvalQuestion,
	ApprovalFirstOption: approvalOption,
	InteractionFooter:   []string{"Enter to select", "to navigate", "Esc to cancel"},
	QuestionMarks:       []string{"☐", "☒"},
	InteractionOption:   numberedOption,
	Turn:                turnRules,
	Approval:            bashApproval(0),
	Questions:           claudeQuestions("Ready to submit your answers?"),
})

// V2_1_328 is Claude Code 2.1.328. It may ask, before its composer, whether
// auto mode should become the default permission mode. It records a prompt
// that was one collapsed paste wrapped in pasted_content tags.
var V2_1_328 = withNative(Profile{
	Version:             "2.1.328",
	Composer:            "❯",
	Busy:                "esc to interrupt",
	Spinner:             spinner,
	StartupDialogs:      append([]string{"Make auto mode your default permission mode?"}, startupDialogs...),
	ApprovalQuestion:    approvalQuestion,
	ApprovalFirstOption: approvalOption,
	InteractionFooter:   []string{"Enter to select", "to navigate", "Esc to cancel"},
	QuestionMarks:       []string{"☐", "☒"},
	InteractionOption:   numberedOption,
	Turn:                unwrapping(turnRules),
	Approval:            bashApproval('╌'),
	Questions:           claudeQuestions(""),
})

// withNative is p with its native control plans.
func withNative(p Profile) Profile {
	p.Native = nativeRules(p)
	return p
}

// unwrapping is r reading collapsed pastes out of their pasted_content tags.
func unwrapping(r agent.TurnRules) agent.TurnRules {
	r.Parse = ParseTranscriptLineUnwrapping
	return r
}

// Profiles are every profiled Claude Code version, oldest first. A version
// that behaves as a neighbour is one line here, a derivation of that
// neighbour's value (its fixtures under terminaldrivers/testdata/screens
// prove it).
var Profiles = []Profile{
	V2_1_267.As("2.1.263"), // draws, records and answers as 2.1.267
	V2_1_267.As("2.1.266"), // as 2.1.267
	V2_1_267,
	V2_1_328,
	V2_1_328.As("2.1.332"), // as 2.1.328
}
