// Package endpointtest is a third transport for the domain's tests: a
// scripted daemon that runs one thread and does what its test says. It is
// written as an adapter is, against the domain's public port
// (domain.ThreadTransport) alone, and wired in with one line:
//
//	endpoints.UseThreadTransport(svc, endpointtest.Kind, tr, terminals)
//
// It reaches nothing outside the process and is never part of akkd.
package endpointtest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"akk/domain"
)

// Kind is the scripted transport's kind: its endpoint kind, ids and name.
var Kind = domain.ThreadKind{Endpoint: "scripted_thread", IDPrefix: "sc_", Agent: "scripted",
	Path: "scripted", Name: "scripted daemon"}

// ErrNoQuestions: the scripted daemon asks no questions.
var ErrNoQuestions = errors.New("the scripted daemon asks no questions")

// Transport is the scripted daemon. Its thread is idle until a turn is
// started; the turn then reports what the test says (Say), asks what the
// test asks (Ask), and ends when the test ends it or it is interrupted.
type Transport struct {
	mu         sync.Mutex
	thread     domain.BackendThread
	turns      int
	running    string // the running turn's id, "" when none
	requests   []string
	prompt     *domain.ApprovalPrompt
	decisions  []domain.ApprovalDecision
	interrupts int
	// script carries the test's events to the followed turn; interrupted
	// ends it as the daemon would.
	script      chan domain.BackendEvent
	interrupted chan struct{}
}

// New is a scripted daemon running one idle thread in folder cwd.
func New(threadID, cwd string) *Transport {
	return &Transport{thread: domain.BackendThread{ThreadID: threadID, Cwd: cwd, Title: "scripted",
		Model: "scripted-1", Status: domain.BackendIdle}, script: make(chan domain.BackendEvent)}
}

// ConversationID is the public conversation id of the thread.
func (tr *Transport) ConversationID() string {
	return domain.EndpointRef{Kind: Kind.Endpoint, ID: tr.thread.ThreadID}.ConversationID()
}

// EndpointID is the thread's endpoint id (where a terminal id goes).
func (tr *Transport) EndpointID() string {
	return domain.EndpointRef{Kind: Kind.Endpoint, ID: tr.thread.ThreadID}.String()
}

// Say hands ev to the followed turn, once it is taken (ctx bounds the
// wait).
func (tr *Transport) Say(ctx context.Context, ev domain.BackendEvent) error {
	select {
	case tr.script <- ev:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no follower took %s: %w", ev.Kind, ctx.Err())
	}
}

// Ask makes the running turn ask to run command, and says so.
func (tr *Transport) Ask(ctx context.Context, command string) error {
	tr.mu.Lock()
	turnID := tr.running
	tr.prompt = &domain.ApprovalPrompt{Present: true, Answerable: true, Kind: "shell_command", Tool: "shell",
		CommandExcerpt: command, Command: command, Decisions: []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject},
		Fingerprint: turnID + "|" + command}
	tr.mu.Unlock()
	return tr.Say(ctx, domain.BackendEvent{Kind: domain.BackendApproval, Text: command})
}

// Requests are the requests turns were started with.
func (tr *Transport) Requests() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.requests...)
}

// Decisions are the answers the daemon took.
func (tr *Transport) Decisions() []domain.ApprovalDecision {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]domain.ApprovalDecision(nil), tr.decisions...)
}

// Interrupts counts the interrupts the daemon took.
func (tr *Transport) Interrupts() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.interrupts
}

// Threads lists the one thread.
func (tr *Transport) Threads(context.Context, []domain.Terminal) ([]domain.BackendThread, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return []domain.BackendThread{tr.thread}, nil
}

// Start starts a turn on an idle thread.
func (tr *Transport) Start(_ context.Context, th domain.BackendThread, text, _ string, _ domain.BackendTurnOptions) (string, domain.SubmitStage, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if th.ThreadID != tr.thread.ThreadID || tr.running != "" {
		return "", domain.SubmitNothing, errors.New("the thread is not idle")
	}
	tr.turns++
	tr.running = fmt.Sprintf("turn-%d", tr.turns)
	tr.thread.Status = domain.BackendActive
	tr.requests = append(tr.requests, text)
	tr.interrupted = make(chan struct{})
	return tr.running, domain.SubmitEntered, nil
}

// Follow follows the running turn: the test's events, then its end.
func (tr *Transport) Follow(ctx context.Context, _ domain.BackendThread, turnID string) (<-chan domain.Observation, error) {
	tr.mu.Lock()
	interrupted := tr.interrupted
	running := tr.running
	tr.mu.Unlock()
	if turnID != running {
		return nil, fmt.Errorf("no running turn %s", turnID)
	}
	out := make(chan domain.Observation)
	go func() {
		defer close(out)
		for {
			var ev domain.BackendEvent
			select {
			case <-ctx.Done():
				return
			case <-interrupted:
				ev = domain.BackendEvent{Kind: domain.BackendInterrupted}
				interrupted = nil
			case ev = <-tr.script:
			}
			if ev.Ends() {
				tr.end()
			}
			select {
			case out <- ev.Observation(Kind.Name):
			case <-ctx.Done():
				return
			}
			if ev.Ends() {
				return
			}
		}
	}()
	return out, nil
}

// end makes the thread idle again.
func (tr *Transport) end() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.running, tr.prompt, tr.thread.Status = "", nil, domain.BackendIdle
}

// RunningTurn is the running turn's id.
func (tr *Transport) RunningTurn(context.Context, domain.BackendThread) (string, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.running, nil
}

var models = []domain.ModelOption{{Model: "scripted-1", Label: "Scripted", Efforts: []string{"medium"}}}

// Models is the one model.
func (tr *Transport) Models(context.Context, domain.BackendThread) (domain.ModelState, error) {
	return domain.ModelState{Model: "scripted-1", Effort: "medium", Models: models}, nil
}

// Catalogue is the one model.
func (tr *Transport) Catalogue(context.Context, domain.BackendThread) ([]domain.ModelOption, error) {
	return models, nil
}

// Interrupt ends the running turn as interrupted.
func (tr *Transport) Interrupt(_ context.Context, _ domain.BackendThread, turnID string) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if turnID != tr.running || tr.interrupted == nil {
		return fmt.Errorf("no running turn %s", turnID)
	}
	tr.interrupts++
	close(tr.interrupted)
	tr.interrupted = nil
	return nil
}

// Prompt is the approval the running turn waits on.
func (tr *Transport) Prompt(turnID string) (domain.ApprovalPrompt, bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.prompt == nil || turnID != tr.running {
		return domain.ApprovalPrompt{}, false
	}
	return *tr.prompt, true
}

// Decide takes one answer to the approval fingerprinted, and says it is
// resolved once the follower took that.
func (tr *Transport) Decide(ctx context.Context, turnID, fingerprint string, d domain.ApprovalDecision) (domain.AnswerStage, error) {
	tr.mu.Lock()
	if tr.prompt == nil || turnID != tr.running || tr.prompt.Fingerprint != fingerprint {
		tr.mu.Unlock()
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	tr.prompt = nil
	tr.decisions = append(tr.decisions, d)
	tr.mu.Unlock()
	if err := tr.Say(ctx, domain.BackendEvent{Kind: domain.BackendResolved}); err != nil {
		return domain.AnswerSent, err
	}
	return domain.AnswerVerified, nil
}

// Question: the scripted daemon asks none.
func (tr *Transport) Question(string) (domain.InteractionStep, bool) {
	return domain.InteractionStep{}, false
}

// AnswerQuestion: there is no question to answer; nothing is sent.
func (tr *Transport) AnswerQuestion(context.Context, string, string, []domain.StepAnswer) (domain.AnswerStage, error) {
	return domain.AnswerNothing, ErrNoQuestions
}
