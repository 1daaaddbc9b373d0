package endpoints

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"akk/domain"
)

// Thread is a thread of a thread transport as an endpoint (a Codex
// thread, driven through its app-server daemon), whose daemon itself says
// when a turn starts and ends.
type Thread struct {
	kind  domain.ThreadKind
	calls domain.ThreadTransport
	terms domain.TerminalDiscovery // the panes whose daemons list threads
	clock domain.Clock
}

var _ domain.Endpoint = (*Thread)(nil)

// NewThread is the endpoint of kind's threads, reached through calls; its
// daemons are those of the panes terms lists.
func NewThread(kind domain.ThreadKind, calls domain.ThreadTransport, terms domain.TerminalDiscovery, clock domain.Clock) *Thread {
	return &Thread{kind: kind, calls: calls, terms: terms, clock: clock}
}

// UseThreadTransport wires a thread transport into svc: its threads are
// listed as conversations, may be sent to and watched, and their prompts
// and questions answered through a Thread endpoint. It is the one line a
// new thread transport needs (terms: the panes whose daemons list
// threads).
func UseThreadTransport(svc *domain.Service, kind domain.ThreadKind, calls domain.ThreadTransport, terms domain.TerminalDiscovery) {
	svc.UseThreadTransport(kind, calls)
	svc.UseEndpoint(kind.Endpoint, NewThread(kind, calls, terms, svc.Clock()))
}

// thread finds the thread ref names, as its daemon lists it now.
func (s *Thread) thread(ctx context.Context, id string) (domain.BackendThread, error) {
	if s.terms == nil {
		return domain.BackendThread{}, domain.E(domain.CodeConversationNotFound, "no "+string(s.kind.Endpoint)+" transport is configured")
	}
	ts, err := s.terms.Discover(ctx)
	if err != nil {
		return domain.BackendThread{}, &domain.Error{Code: domain.CodeUnavailable, Message: "terminal discovery failed", Err: err}
	}
	ths, err := s.calls.Threads(ctx, ts)
	if err != nil {
		slog.Warn("thread transport: list threads", "kind", s.kind.Endpoint, "err", err)
	}
	for _, th := range ths {
		if th.ThreadID == id {
			th.Kind = s.kind.Endpoint
			return th, nil
		}
	}
	return domain.BackendThread{}, domain.E(domain.CodeConversationNotFound, "no loaded thread "+id+" in its "+s.kind.Name+" (the daemon stopped, or the thread was unloaded; list again)")
}

// endpointThread is the thread of an endpoint named where a terminal id
// goes: an unknown one is terminal_not_found.
func (s *Thread) endpointThread(ctx context.Context, endpoint string) (domain.BackendThread, error) {
	th, err := s.thread(ctx, domain.ParseEndpoint(endpoint).ID)
	var de *domain.Error
	if errors.As(err, &de) && de.Code == domain.CodeConversationNotFound {
		return domain.BackendThread{}, domain.E(domain.CodeTerminalNotFound, de.Message)
	}
	return th, err
}

// ReadRecord: the daemon keeps the record and says itself how a turn
// stands when it is followed again.
func (s *Thread) ReadRecord(context.Context, string, domain.DurableMark, string) (domain.TurnProgress, bool, error) {
	return domain.TurnProgress{}, false, nil
}

// CurrentStep reads the daemon's pending question as one questionnaire
// step.
func (s *Thread) CurrentStep(_ context.Context, t domain.Turn) (domain.AgentKind, domain.Terminal, domain.InteractionStep, error) {
	st, ok := s.calls.Question(t.NativeTurnID)
	if !ok || t.State != domain.TurnAwaitingInteraction {
		return s.kind.Agent, domain.Terminal{}, domain.InteractionStep{}, domain.E(domain.CodeNoInteraction, "the daemon asks no question of this turn now")
	}
	return s.kind.Agent, domain.Terminal{}, st, nil
}

// DeliverAnswers gives a reserved step its answers through the daemon.
func (s *Thread) DeliverAnswers(seq context.Context, t domain.Turn, _ domain.Terminal, fingerprint string, answers []domain.StepAnswer) (domain.AnswerStage, error) {
	return s.calls.AnswerQuestion(seq, t.NativeTurnID, fingerprint, answers)
}

// WatchTarget is the thread id names, as its daemon lists it.
func (s *Thread) WatchTarget(ctx context.Context, id string) (domain.WatchAnchor, error) {
	th, err := s.endpointThread(ctx, id)
	if err != nil {
		return domain.WatchAnchor{}, err
	}
	return domain.WatchAnchor{Ref: domain.EndpointRef{Kind: s.kind.Endpoint, ID: th.ThreadID}, What: "thread", Thread: th}, nil
}

// AnchorWatch anchors on the turn the thread runs now (one a person or
// another client of its daemon started), exactly: the daemon names the
// turn, and its own events end the Watch. No input.
func (s *Thread) AnchorWatch(ctx context.Context, a domain.WatchAnchor) (domain.WatchAnchor, error) {
	turnID, err := s.calls.RunningTurn(ctx, a.Thread)
	if err != nil {
		return domain.WatchAnchor{}, &domain.Error{Code: domain.CodeUnavailable, Message: "could not read the thread from its daemon", Err: err}
	}
	if turnID == "" {
		return domain.WatchAnchor{}, domain.E(domain.CodeNothingToWatch, "the thread runs no turn; a Watch follows a task that is working")
	}
	a.NativeTurnID, a.Exact = turnID, true
	return a, nil
}

// WatchedLive checks that the watched thread is still loaded in its daemon.
func (s *Thread) WatchedLive(ctx context.Context, w domain.Watch) error {
	if _, err := s.thread(ctx, w.Endpoint.ID); err != nil {
		return domain.E(domain.CodeTerminalNotFound, "the watched thread is no longer loaded in its daemon")
	}
	return nil
}

// Models reads the thread's model catalogue from its daemon: no input,
// and no authority for a set-model, since the daemon changes a thread's
// model only with a turn.
func (s *Thread) Models(ctx context.Context, endpoint string) (domain.ModelsResult, bool, error) {
	th, err := s.endpointThread(ctx, endpoint)
	if err != nil {
		return domain.ModelsResult{}, true, err
	}
	st, err := s.calls.Models(ctx, th)
	if err == nil && (st.Model == "" || st.Effort == "") {
		err = errors.New("the daemon names no model and effort for the thread")
	}
	if err != nil {
		return domain.ModelsResult{}, true, &domain.Error{Code: domain.CodeUnavailable, Message: "the thread's daemon did not give its models; nothing was sent", Err: err}
	}
	return domain.ModelsResult{TerminalID: endpoint, Outcome: string(domain.OutcomeDone), Effective: &domain.ModelChoice{Model: st.Model, Effort: st.Effort},
		Models: st.Models, ExpiresAt: s.clock.Now().UTC()}, true, nil
}

// Configured: the daemon answers prompts and steps itself.
func (s *Thread) Configured(domain.EndpointUse) error { return nil }

// ReadPrompt is the command approval the daemon waits on, with the
// thread's folder as its project. Accepted or declined, the turn goes on
// (a declined command is the model's to handle).
func (s *Thread) ReadPrompt(_ context.Context, t domain.Turn) (domain.PromptRead, error) {
	pr, ok := s.calls.Prompt(t.NativeTurnID)
	if !ok {
		if t.State != domain.TurnAwaitingApproval {
			return domain.PromptRead{}, nil
		}
		// The daemon asked while another akkd followed the turn.
		const where = "where the thread is shown"
		return domain.PromptRead{Prompt: domain.ApprovalPrompt{Present: true, Where: where,
			Reason: "the approval the daemon asked for is not followed by this akkd (it restarted meanwhile); answer it " + where}}, nil
	}
	facts := func(ctx context.Context) domain.Terminal {
		term := domain.Terminal{Agent: domain.Agent{Kind: s.kind.Agent}}
		if th, err := s.thread(ctx, t.NativeThreadID); err == nil {
			term.Project = th.Cwd
		}
		return term
	}
	return domain.PromptRead{Prompt: pr, RuleFacts: facts}, nil
}

// SendAnswer gives the daemon one decision, if it still asks the request
// fingerprinted, and waits for it to say it is resolved.
func (s *Thread) SendAnswer(seq context.Context, t domain.Turn, _ domain.PromptRead, fingerprint string, d domain.ApprovalDecision) (domain.AnswerStage, error) {
	return s.calls.Decide(seq, t.NativeTurnID, fingerprint, d)
}

// Interruptible checks that the daemon started the turn and is reachable.
func (s *Thread) Interruptible(ctx context.Context, t domain.Turn) (domain.EndpointTarget, error) {
	if t.NativeTurnID == "" {
		return domain.EndpointTarget{}, domain.E(domain.CodeTurnStateConflict, fmt.Sprintf("turn %s is %s; cancel is not possible now", t.ID, t.State))
	}
	th, err := s.thread(ctx, t.NativeThreadID)
	if err != nil {
		return domain.EndpointTarget{}, err
	}
	return domain.EndpointTarget{Thread: th}, nil
}

// Interrupt asks the daemon to interrupt the native turn; the monitor
// reports cancelled when the daemon says so.
func (s *Thread) Interrupt(seq context.Context, t domain.Turn, target domain.EndpointTarget) error {
	return s.calls.Interrupt(seq, target.Thread, t.NativeTurnID)
}

// Followable: the daemon started the turn and answers.
func (s *Thread) Followable(ctx context.Context, t domain.Turn) error {
	if t.NativeTurnID == "" {
		return domain.E(domain.CodeManualRequired, "the daemon's id of the turn was never recorded; close the turn")
	}
	_, err := s.thread(ctx, t.NativeThreadID)
	return err
}
