// Questionnaires: the adapter's InteractionTerminal isolates the one bottom-most questionnaire step
// the agent version's profile can prove, fingerprints it with the
// terminal's process identity, and answers it once with the profile's
// closed key plan, each key's effect proven by a recapture before the next.
//
// Reading a step:
//
// Each version's grammar is a value in its driver package (claude and codex
// QuestionGrammar, agent.InteractionGrammar); adding a version is adding a
// value and its captured screens. A step is read from the bottom: its key
// hint (or, for Claude Code's review, its Cancel row) is the last row drawn,
// its frame above it, and everything between must be a known row. Every
// profiled version shows one question per step, so a step carries one
// question whose private key is "q<index>" and whose options' keys are
// "o<number>"; the domain mints the public ids.
//
//   - Claude Code 2.1.267 and 2.1.328: under a full-width rule, " ☐ Color"
//     (one question) or a row of tabs "←  ☐ Color  ☐ Size  ✔ Submit  →"
//     whose active tab, drawn on a background colour, gives the index (the
//     review is the last of Total steps); the question; "❯ 1. Red" options
//     with their descriptions under them; "Type something." (TakesText); a
//     rule; "Chat about this" (never offered); the key hint. The review
//     ("Review your answers", 2.1.267 also "Ready to submit your
//     answers?") is a confirmation with the one option "Submit answers";
//     Cancel is never offered. Checkbox options ("[ ] Red", checked
//     "[✔] Red") are a multi-select: its "[ ] Type something" box (with
//     the "Submit" row under it) is never offered, and a checked one
//     leaves the step to the person.
//   - Codex 0.155.1 and 0.169.0 (Plan mode request_user_input): "Question
//     i/N (k unanswered)", the question, "› 1. Red  warm" options ending
//     with the client's "None of the above", the key hint. That native
//     Other is offered as a choice that submits its own label, and beside
//     it a derived "Type something." choice (key "o<n>t") that opens its
//     notes. "Submit with unanswered questions?" is a confirmation with
//     "Proceed" and "Go back". Neither version offers an async question.
//
// Free text is its own step: the free-text choice chosen alone opens its
// editor (Claude Code's focused "Type something." row, Codex's notes on
// the native Other) and is verified by two captures showing it open and
// empty; that empty editor is then a step of its own (a new fingerprint),
// one free_text question with no options, answered with text. The choice
// chosen with text does both in one plan.
//
// Not answerable (manual_required, zero keys): an editor that already
// holds text (a person is typing), or notes opened on another choice; a question that names a secret (neither
// agent masks questionnaire input, so a password, token or key question is
// recognised by its words); any row the grammar does not know; a
// questionnaire the classifier sees but the grammar cannot isolate; an
// unprofiled version (ErrUnprofiled).
//
// Answering a step
//
// AnswerStep recaptures, requires the exact fingerprint (else
// ErrPromptChanged, zero keys), resolves the answer to one offered option
// (else ErrDecisionUnavailable, zero keys), then:
//
//  1. Down or Up, one row at a time, each move proven by a recapture that
//     shows the same step with the highlight one row further;
//  2. for Codex's native Other: Enter opens its empty notes (proven), and
//     the Enter of 3 submits the label itself;
//     for a TakesText option: Codex's Tab opens the empty notes editor
//     (Claude Code's focused row is the editor itself, proven empty); the
//     text is typed literally (send-keys -l) and must read back exactly on
//     the editor's row; after the version's settle pause (past the
//     paste-burst window in which Enter is a newline) it is read again;
//  3. Enter, once; then two recaptures in a row must show another step or
//     the agent at work (AnswerVerified), else AnswerSent.
//
// A multi-select instead flips each box whose state differs from the
// chosen set, in row order: the highlight moved as in 1, Enter (Claude
// Code's toggle), and a recapture showing that exactly that box flipped;
// then a recapture proves the checked set is the chosen one, and Tab
// leaves the question for the next one or the review (verified as in 3).
//
// Any surprise stops the plan where it is and returns the stage reached;
// nothing is retried. Digits are never sent (Codex's digit would submit
// "None of the above" without notes), nor Escape (it declines Claude Code's
// questionnaire and interrupts Codex's turn).
//
// Free text is one line of printable text without surrounding whitespace,
// at most FreeTextLimit runes: the version's cap (799, under Claude Code's
// 800-character paste collapse) bounded by what the editor's one row shows
// at the pane's width (Claude Code width-6, Codex width-7: 114 and 113 at
// 120 columns).

package agentpane
