package domain

import "context"

// InteractionTerminal is what questionnaire responses need from the
// terminal side: isolate the one questionnaire step a profile proves, and
// answer it with the profile's closed key plan, fenced by its fingerprint.
type InteractionTerminal interface {
	// Step looks at t's screen now and isolates its bottom-most complete
	// questionnaire step. Present is false when there is none.
	Step(ctx context.Context, t Terminal) (InteractionStep, error)

	// AnswerStep recaptures the screen and, only if the step there has
	// exactly the fingerprint fp, sends the profile's key plan for answers
	// once (one bounded step), then verifies that this step left the screen
	// (the next step, the review, or the agent at work). A different or
	// missing step is ErrPromptChanged with AnswerNothing: zero keys. Answers
	// the profile cannot express exactly are ErrDecisionUnavailable, zero keys.
	AnswerStep(ctx context.Context, t Terminal, fp string, answers []StepAnswer) (AnswerStage, error)
}

// InteractionStep is one questionnaire step as the profile proves it. Keys
// are the profile's private handles; the domain maps them to opaque public
// ids and never shows them.
type InteractionStep struct {
	Present bool
	// Answerable: the profile has key plans for every question of this step.
	// Otherwise the step is manual_required and Reason says why (multi-select,
	// secret input, an unknown shape).
	Answerable bool
	Reason     string

	Kind          string   // "questionnaire" or "async_question"
	DeliveryModes []string // async questions only
	Index, Total  int      // 1-based step index and the number of steps, when shown
	Questions     []StepQuestion
	BatchResponse bool // every question of the step is answered in one plan
	// FreeTextLimit is the longest free text the profile can type and verify.
	FreeTextLimit int
	// Fingerprint of the exact unredacted step region with the terminal's
	// process identity. Private.
	Fingerprint string
}

// Response kinds of a question.
const (
	SingleSelect = "single_select"
	MultiSelect  = "multi_select"
	FreeText     = "free_text"
	Confirmation = "confirmation"
)

// StepQuestion is one question of a step.
type StepQuestion struct {
	Key          string // private
	Header       string
	Prompt       string
	Required     bool
	ResponseKind string
	Options      []StepOption
}

// StepOption is one choice of a question.
type StepOption struct {
	Key   string // private
	Label string
	// TakesText: choosing it opens a free-text editor ("Type something.",
	// Codex's "None of the above" with notes); its answer carries Text.
	TakesText bool
}

// StepAnswer answers one question in the profile's private terms.
type StepAnswer struct {
	QuestionKey string
	OptionKeys  []string
	Text        string
	// Queue: an async question's answer queued for the agent's next turn
	// (queue_next_turn) instead of steered into the running one.
	Queue bool
}
