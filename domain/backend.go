package domain

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// The Codex backend: a Codex TUI of 0.158.0 and later hands its threads to
// a managed app-server daemon (one per CODEX_HOME). AKK reaches that
// daemon as one more client and drives a thread through it: the request
// is a structured turn/start, never a keystroke, and the daemon itself
// says when the turn starts and ends. A pane that shows the thread shows
// the turn as if it were typed there.

// BackendThread is one thread a Codex app-server daemon has loaded and
// recorded, as the daemon itself reports it.
type BackendThread struct {
	ThreadID   string
	Home       string // the daemon's CODEX_HOME: how AKK reaches it (never shown)
	Cwd        string
	Title      string
	Model      string
	CLIVersion string
	// Status is idle, active, not_loaded or system_error.
	Status string
	// PaneTerminalID is the terminal whose pane is proven to show this
	// thread now (its Codex names the thread in the pane title, and no
	// other pane or loaded thread matches); "" when none is.
	PaneTerminalID string
}

// Backend thread states.
const (
	BackendIdle   = "idle"
	BackendActive = "active"
)

// backendConversationPrefix names a backend conversation; a backend Turn
// holds its thread's endpoint (backendEndpointPrefix + thread id) where a
// terminal Turn holds its terminal, so one Turn at a time holds a thread.
const (
	backendConversationPrefix = "conv_cx_"
	backendEndpointPrefix     = "cx_"
)

// BackendConversationID is the conversation id of a backend thread.
func BackendConversationID(threadID string) string { return backendConversationPrefix + threadID }

// BackendEndpoint is the endpoint a backend Turn of the thread holds.
func BackendEndpoint(threadID string) string { return backendEndpointPrefix + threadID }

// backendTurn reports whether t is a backend Turn this service can drive.
func (s *Service) backendTurn(t Turn) bool {
	return IsBackendEndpoint(t.TerminalID) && s.codexBackend != nil
}

// IsBackendEndpoint reports whether a Turn's terminal id is a backend
// thread's endpoint.
func IsBackendEndpoint(id string) bool { return strings.HasPrefix(id, backendEndpointPrefix) }

// BackendEventKind is what a followed backend turn did.
type BackendEventKind string

const (
	// BackendProgress: an agent message completed (Text).
	BackendProgress BackendEventKind = "progress"
	// BackendApproval: the daemon asks to approve a command (Text: the
	// command); BackendResolved: no prompt waits any more.
	BackendApproval BackendEventKind = "approval"
	BackendResolved BackendEventKind = "resolved"
	// BackendQuestion: the agent asks the person questions.
	BackendQuestion BackendEventKind = "question"
	// BackendCompleted (Text: the final message), BackendInterrupted,
	// BackendFailed (Text: why): the turn ended.
	BackendCompleted   BackendEventKind = "completed"
	BackendInterrupted BackendEventKind = "interrupted"
	BackendFailed      BackendEventKind = "failed"
	// BackendGone: the daemon went away before the turn ended (Text: why).
	BackendGone BackendEventKind = "gone"
)

// BackendEvent is one thing a followed backend turn did.
type BackendEvent struct {
	Kind BackendEventKind
	Text string
}

// Ends reports whether the event ends the following.
func (e BackendEvent) Ends() bool {
	switch e.Kind {
	case BackendCompleted, BackendInterrupted, BackendFailed, BackendGone:
		return true
	}
	return false
}

// BackendTurnOptions are a turn's overrides, which the daemon keeps for
// the thread's later turns too; "" leaves a value as it is.
type BackendTurnOptions struct{ Model, Effort string }

// CodexBackend is Codex's own app-server, reached through the managed
// daemons of the Codex panes AKK sees. It never starts a daemon.
type CodexBackend interface {
	// Threads lists the loaded, recorded threads of the daemons of terms'
	// agents.
	Threads(ctx context.Context, terms []Terminal) ([]BackendThread, error)
	// Start starts a turn on th with text, messageID as the client's id
	// of the message. SubmitNothing: nothing reached the daemon;
	// SubmitEntered with no error: the daemon started turnID; anything
	// else is unproven.
	Start(ctx context.Context, th BackendThread, text, messageID string, opts BackendTurnOptions) (turnID string, stage SubmitStage, err error)
	// Follow follows turnID of th; the channel closes after an event that
	// Ends, or when ctx ends. A turn that already ended yields its end.
	Follow(ctx context.Context, th BackendThread, turnID string) (<-chan BackendEvent, error)
	// RunningTurn is the id of the turn th runs now, "" when none.
	RunningTurn(ctx context.Context, th BackendThread) (string, error)
	// Models is the daemon's model catalogue (each model with its
	// efforts) and the model and effort th's next turn gets; it sends no
	// input.
	// Model and Effort are "" when the daemon names no model for th.
	Models(ctx context.Context, th BackendThread) (ModelState, error)
	// Catalogue is the daemon's model catalogue alone.
	Catalogue(ctx context.Context, th BackendThread) ([]ModelOption, error)
	// Interrupt asks the daemon to interrupt turnID.
	Interrupt(ctx context.Context, th BackendThread, turnID string) error
	// Prompt is the command approval the followed turnID waits on now.
	Prompt(turnID string) (ApprovalPrompt, bool)
	// Decide answers that approval, if it is still the one fingerprinted:
	// AnswerNothing with an error when nothing was sent, AnswerVerified
	// when the daemon says it is resolved.
	Decide(ctx context.Context, turnID, fingerprint string, d ApprovalDecision) (AnswerStage, error)
	// Question is the question the followed turnID waits on now, as one
	// questionnaire step.
	Question(turnID string) (InteractionStep, bool)
	// AnswerQuestion answers it, if it is still the one fingerprinted,
	// like Decide.
	AnswerQuestion(ctx context.Context, turnID, fingerprint string, answers []StepAnswer) (AnswerStage, error)
}

// UseCodexBackend wires the Codex backend in: its threads are listed as
// conversations and may be sent to.
func (s *Service) UseCodexBackend(b CodexBackend) { s.codexBackend = b }

// backendThreads lists the backend threads of the daemons of ts.
func (s *Service) backendThreads(ctx context.Context, ts []Terminal) []BackendThread {
	if s.codexBackend == nil {
		return nil
	}
	ths, err := s.codexBackend.Threads(ctx, ts)
	if err != nil {
		slog.Warn("codex backend: list threads", "err", err)
	}
	return ths
}

// backendThread finds the thread of a backend conversation or endpoint,
// as its daemon reports it now.
func (s *Service) backendThread(ctx context.Context, threadID string) (BackendThread, error) {
	if s.codexBackend == nil || s.terminals == nil {
		return BackendThread{}, E(CodeConversationNotFound, "no Codex backend is configured")
	}
	ts, err := s.terminals.Discover(ctx)
	if err != nil {
		return BackendThread{}, &Error{Code: CodeUnavailable, Message: "terminal discovery failed", Err: err}
	}
	for _, th := range s.backendThreads(ctx, ts) {
		if th.ThreadID == threadID {
			return th, nil
		}
	}
	return BackendThread{}, E(CodeConversationNotFound, "no loaded Codex thread "+threadID+" (its daemon stopped, or the thread was unloaded; list again)")
}

// backendConversationOf is the row of a backend thread: its Turns (the one
// holding it, the caller's latest) and the actions they allow.
func (s *Service) backendConversationOf(ctx context.Context, p Principal, th BackendThread, watches []Watch, recent map[string][]Turn) (Conversation, error) {
	bt := th
	c := Conversation{ID: BackendConversationID(th.ThreadID), Backend: &bt, Actions: []Action{}, Watches: []Watch{}}
	if s.turns == nil {
		return c, nil
	}
	held := c.turnsOf(p, recent[BackendEndpoint(th.ThreadID)])
	if !held && th.Status == BackendIdle {
		a := act("send", "POST", "/v1/turns", map[string]any{"conversation_id": c.ID}, "request")
		a.Target = TargetSession
		c.Actions = append(c.Actions, a)
	}
	// A turn a person or another client started: watched through the
	// daemon, exactly.
	endpoint := BackendEndpoint(th.ThreadID)
	if s.watchTerm != nil && !held && th.Status == BackendActive {
		c.Actions = append(c.Actions, act("watch", "POST", "/v1/watches", map[string]any{"terminal_id": endpoint}))
	}
	// The daemon's model catalogue, read with no input.
	if th.Status == BackendIdle || th.Status == BackendActive {
		c.Actions = append(c.Actions, act("model_options", "GET", "/v1/terminals/"+endpoint+"/models", nil))
	}
	for _, w := range watches {
		if w.TerminalID == endpoint && p.CanSeeHost(w.HostID) {
			c.Watches = append(c.Watches, w)
			c.Actions = append(c.Actions, act("status", "GET", "/v1/watches/"+w.ID, nil),
				act("unwatch", "DELETE", "/v1/watches/"+w.ID, nil))
		}
	}
	if err := s.addTurnActions(ctx, &c); err != nil {
		return c, err
	}
	// The question the daemon waits on: answered with its projection's ids.
	if cur := c.CurrentTurn; cur != nil && cur.State == TurnAwaitingInteraction {
		if in, err := s.TurnInteraction(ctx, cur.ID); err == nil && !in.ManualRequired && in.InteractionID != "" {
			c.Actions = append(c.Actions, act("respond_interaction", "POST", turnPath(cur.ID, "/interaction"),
				map[string]any{"interaction_id": in.InteractionID}, "answers"))
		}
	}
	// The command approval the daemon waits on, offered to the Turn's owner.
	if cur := c.CurrentTurn; cur != nil && cur.State == TurnAwaitingApproval {
		c.Approval = s.backendApproval(ctx, p, *cur)
		if !c.Approval.ManualRequired {
			for _, d := range c.Approval.Decisions {
				c.Actions = append(c.Actions, act("approve", "POST", turnPath(cur.ID, "/approval"), map[string]any{"decision": string(d)}))
			}
		}
	}
	return c, nil
}

// sendBackend sends a request to a backend conversation's thread through
// its daemon: reserved durably first, one turn/start, never retried.
func (s *Service) sendBackend(ctx context.Context, p Principal, in SendInput) (SendResult, error) {
	tr := s.turns
	threadID, ok := strings.CutPrefix(in.ConversationID, backendConversationPrefix)
	if !ok || threadID == "" {
		return SendResult{}, E(CodeConversationNotFound, "conversation "+in.ConversationID+" is not a backend conversation; send to a terminal with terminal_id")
	}
	endpoint := BackendEndpoint(threadID)
	unlock := tr.lockTerminal(endpoint)
	defer unlock()
	if in.MessageID != "" {
		if t, err := s.turnByMessageID(ctx, p.HostID, in.MessageID); err == nil {
			return s.existing(ctx, t, in.Request)
		}
	}
	th, err := s.backendThread(ctx, threadID)
	if err != nil {
		return SendResult{}, err
	}
	if holding, err := s.holdingTurn(ctx, endpoint); err == nil {
		return SendResult{}, E(CodeConflictActiveTurn, "turn "+visibleID(p, holding)+" holds this thread; wait for it, or close it")
	} else if !errors.Is(err, ErrNotFound) {
		return SendResult{}, err
	}
	if th.Status != BackendIdle {
		return SendResult{}, E(CodeThreadNotIdle, "the thread is "+th.Status+", not idle (a turn runs); nothing was sent")
	}
	opts := BackendTurnOptions{Model: in.Model, Effort: in.ReasoningEffort}
	if opts != (BackendTurnOptions{}) {
		if err := s.checkBackendModel(ctx, th, opts); err != nil {
			return SendResult{}, err
		}
	}
	now := s.clock.Now().UTC()
	t := s.newTurn(p, in, endpoint, PathCodexBackend, now)
	t.NativeThreadID = threadID
	err = s.store.InTx(ctx, func(tx Tx) error {
		// The session is bound to the thread from the start: the daemon
		// names it exactly.
		session := Session{ID: s.ids.New("sess"), HostID: p.HostID, TerminalID: endpoint, NativeThreadID: threadID, CreatedAt: now, Revision: 1}
		if err := tx.InsertSession(ctx, session); err != nil {
			return err
		}
		t.SessionID = session.ID
		return tx.InsertTurn(ctx, t)
	})
	if err != nil {
		return s.reserveFailed(ctx, p, in, err)
	}
	Failpoint("send.reserved")
	// The start runs to its end even when the caller goes away.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	nativeTurn, stage, subErr := s.codexBackend.Start(sctx, th, in.Request, t.ID, opts)
	cancel()
	if stage == SubmitNothing {
		res, err := s.afterSubmit(ctx, t, stage, subErr, false)
		var de *Error
		if errors.As(err, &de) && de.Code == CodeTerminalNotIdle {
			de.Code, de.Message = CodeThreadNotIdle, "the daemon refused the turn; nothing was sent"
			if subErr != nil {
				de.Message += ": " + subErr.Error()
			}
		}
		return res, err
	}
	if stage == SubmitEntered && subErr == nil {
		// The daemon started this very turn: accepted, exactly.
		if err := s.store.InTx(context.WithoutCancel(ctx), func(tx Tx) error {
			cur, err := tx.Turn(ctx, t.ID)
			if err != nil {
				return err
			}
			cur.NativeTurnID = nativeTurn
			return tx.UpdateTurn(ctx, cur)
		}); err != nil {
			slog.Error("send: backend turn started but its native id was not stored", "turn_id", t.ID, "err", err)
		}
	}
	res, err := s.afterSubmit(ctx, t, stage, subErr, false)
	return s.withSendWatch(ctx, res, err)
}

// visibleID names a Turn to a caller who may see it, else says only that
// another controller holds it.
func visibleID(p Principal, t Turn) string {
	if p.CanSeeHost(t.HostID) {
		return t.ID
	}
	return "of another controller"
}

// followBackend follows a native turn of a loaded thread through its
// daemon; why says what kept it from being followed.
func (s *Service) followBackend(ctx context.Context, threadID, turnID string) (<-chan BackendEvent, string) {
	th, err := s.backendThread(ctx, threadID)
	if err != nil {
		return nil, "the thread's Codex app-server daemon cannot be reached: " + errMessage(err)
	}
	events, err := s.codexBackend.Follow(ctx, th, turnID)
	if err != nil {
		return nil, "the thread's Codex app-server daemon cannot be followed: " + err.Error()
	}
	return events, ""
}

// monitorBackend follows a backend Turn through its daemon to its end. It
// never sends input. A daemon that cannot be reached, or goes away before
// the turn ends, stalls the Turn (renew or recover when it is back).
func (s *Service) monitorBackend(ctx context.Context, t Turn) {
	log := slog.With("turn_id", t.ID)
	stall := func(why string) {
		if ctx.Err() != nil {
			return // akkd stops: the next start follows on
		}
		next := t
		next.State, next.FailureReason = TurnStalled, why
		if _, err := s.transition(ctx, next, "turn.stalled", true); err != nil && ctx.Err() == nil {
			log.Error("monitor: stall backend turn", "err", err)
		}
	}
	if t.NativeTurnID == "" {
		stall("the daemon's id of the turn was not recorded; recover or close the turn")
		return
	}
	events, why := s.followBackend(ctx, t.NativeThreadID, t.NativeTurnID)
	if why != "" {
		stall(why)
		return
	}
	hard := time.NewTimer(time.Until(t.HardDeadline()))
	defer hard.Stop()
	var err error
	for {
		if t.State == TurnDispatching {
			next := t
			now := s.clock.Now().UTC()
			next.State, next.AcceptedAt, next.LastActivityAt = TurnWorking, now, now
			if t, err = s.transition(ctx, next, "turn.accepted", true); err != nil {
				if ctx.Err() == nil {
					log.Error("monitor: accept backend turn", "err", err)
				}
				return
			}
		}
		var ev BackendEvent
		var open bool
		select {
		case <-ctx.Done():
			return
		case <-hard.C:
			stall("the hard deadline passed before the turn ended")
			return
		case ev, open = <-events:
		}
		if !open {
			if ctx.Err() == nil {
				stall("the thread's Codex app-server daemon stopped answering before the turn ended")
			}
			return
		}
		if cur, err := s.store.Turn(ctx, t.ID); err == nil {
			t = cur // closed or cancelled meanwhile
		}
		if !t.State.Monitored() {
			return
		}
		next, typ, webhook, auto := t, "", false, false
		now := s.clock.Now().UTC()
		next.LastActivityAt = now
		switch ev.Kind {
		case BackendProgress:
			next.LatestText = boundText(s.turns.redact, ev.Text, ProgressLimit)
		case BackendApproval:
			if t.State == TurnAwaitingApproval {
				break // the same request, handed again to a follower after a restart
			}
			next.State, typ, webhook = TurnAwaitingApproval, "turn.approval_required", true
			next.FailureReason = ""
			if _, rule := s.backendAutoRule(ctx, next); rule >= 0 {
				webhook = false // the host hears of the auto-approval instead
				auto = true
			}
		case BackendQuestion:
			if t.State == TurnAwaitingInteraction {
				break // the same question, handed again after a restart
			}
			next.State, typ, webhook = TurnAwaitingInteraction, "turn.interaction_required", true
		case BackendResolved:
			if t.State == TurnAwaitingApproval || t.State == TurnAwaitingInteraction {
				next.State, typ = TurnWorking, "turn.working"
			}
		case BackendCompleted:
			next.State, typ, webhook = TurnCompleted, "turn.completed", true
			next.FinalMessage = s.redact(ev.Text)
		case BackendInterrupted:
			next.State, typ, webhook = TurnCancelled, "turn.cancelled", true
		case BackendFailed:
			next.State, typ, webhook = TurnFailed, "turn.failed", true
			next.FailureReason = boundText(s.turns.redact, ev.Text, 500)
		case BackendGone:
			next.State, typ, webhook = TurnStalled, "turn.stalled", true
			next.FailureReason = "the thread's Codex app-server daemon went away before the turn ended: " + ev.Text
		}
		var extra map[string]any
		if ev.Kind == BackendQuestion {
			// The callback carries the public projection only.
			if st, ok := s.codexBackend.Question(t.NativeTurnID); ok {
				if key, err := s.stepKey(ctx, next, st); err == nil {
					if in, _, err := s.project(ctx, next, AgentCodex, st, key); err == nil {
						extra = map[string]any{"interaction": in}
					}
				}
			}
		}
		if t, err = s.transitionWith(ctx, next, typ, webhook, extra); err != nil {
			if errors.Is(err, ErrRevisionConflict) {
				if cur, e2 := s.store.Turn(ctx, t.ID); e2 == nil {
					t = cur
					continue
				}
			}
			if ctx.Err() == nil {
				log.Error("monitor: backend turn", "err", err)
			}
			return
		}
		if auto && !s.autoApproveBackend(ctx, t) {
			// Nothing was sent: the approval is the host's to answer.
			if stored, err := s.transitionWith(ctx, t, "turn.approval_required", true, nil); err == nil {
				t = stored
			}
		} else if auto {
			if cur, err := s.store.Turn(ctx, t.ID); err == nil {
				t = cur
			}
		}
		if !t.State.Monitored() {
			return
		}
	}
}

// cancelBackend interrupts a backend Turn's native turn through its
// daemon, once; the monitor reports cancelled when the daemon says so.
func (s *Service) cancelBackend(ctx context.Context, t Turn) (ActionResult, error) {
	if t.NativeTurnID == "" {
		return ActionResult{}, stateConflict(t, "cancel")
	}
	th, err := s.backendThread(ctx, t.NativeThreadID)
	if err != nil {
		return ActionResult{}, err
	}
	t.CancelRequested = true
	if t, err = s.transition(ctx, t, "turn.cancel_requested", false); err != nil {
		return ActionResult{}, err
	}
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := s.codexBackend.Interrupt(ictx, th, t.NativeTurnID); err != nil {
		return ActionResult{Turn: t, Outcome: OutcomeUncertain, DoNotRetry: true}, nil
	}
	return ActionResult{Turn: t, Outcome: OutcomeDone}, nil
}

// resumeBackend restarts the monitor of a stalled backend Turn whose
// daemon answers again (renew and recover). No input.
func (s *Service) resumeBackend(ctx context.Context, t Turn, typ string) (ActionResult, error) {
	if t.NativeTurnID == "" {
		return ActionResult{}, E(CodeManualRequired, "the daemon's id of the turn was never recorded; close the turn")
	}
	if _, err := s.backendThread(ctx, t.NativeThreadID); err != nil {
		return ActionResult{}, err
	}
	t.State = TurnWorking
	t.LastActivityAt = s.clock.Now().UTC()
	t.EndedAt, t.FailureReason = zeroTime, ""
	t, err := s.transition(ctx, t, typ, false)
	if err != nil {
		return ActionResult{}, err
	}
	s.startMonitor(t.ID)
	return ActionResult{Turn: t, Outcome: OutcomeDone}, nil
}

// errMessage is a domain error's message, else the error's text.
func errMessage(err error) string {
	var de *Error
	if errors.As(err, &de) {
		return de.Message
	}
	return err.Error()
}

// backendApproval offers the command approval a backend Turn waits on to
// p (a fresh status in the caller's conversation makes the offer).
func (s *Service) backendApproval(ctx context.Context, p Principal, t Turn) *ApprovalView {
	pr, ok := s.codexBackend.Prompt(t.NativeTurnID)
	if !ok {
		return &ApprovalView{ManualRequired: true, Reason: "the approval the daemon asked for is not followed by this akkd (it restarted meanwhile); answer it where the thread is shown"}
	}
	v := &ApprovalView{PromptKind: pr.Kind, Tool: pr.Tool, CommandExcerpt: boundText(s.turns.redact, pr.CommandExcerpt, 400)}
	now := s.clock.Now().UTC()
	consumed, err := s.insertApprovalOffer(ctx, p, t.TerminalID, t.ID, pr, now)
	if err != nil {
		return unreadablePrompt(err)
	}
	if consumed {
		v.ManualRequired, v.Reason = true, "AKK already answered this exact request and the daemon still asks; answer it where the thread is shown"
		return v
	}
	v.Decisions, v.ExpiresAt = pr.Decisions, now.Add(OfferTTL)
	return v
}

// approveBackend answers a backend Turn's command approval through its
// daemon for the host (approve_once or reject).
func (s *Service) approveBackend(ctx context.Context, p Principal, t Turn, d ApprovalDecision) (ActionResult, error) {
	stage, err := s.answerBackend(ctx, p, t, d)
	if err != nil {
		return ActionResult{Outcome: OutcomeRejectedBeforeInput}, err
	}
	return s.recordAnswer(ctx, t, backendAnswered(stage, "turn.approval_answered"))
}

// backendAnswered records what an answer to a backend approval did.
func backendAnswered(stage AnswerStage, typ string) func(Turn) (Turn, string, bool, ActionResult) {
	return func(next Turn) (Turn, string, bool, ActionResult) {
		if stage != AnswerVerified {
			next.State, next.FailureReason = TurnResponseUncertain, "the answer to the daemon's approval request went out but its effect is not proven"
			return next, "turn.response_uncertain", true, ActionResult{Outcome: OutcomeUncertain, DoNotRetry: true}
		}
		// Accepted or declined, the turn goes on (a declined command is
		// the model's to handle).
		if next.State == TurnAwaitingApproval {
			next.State = TurnWorking
		}
		return next, typ, typ == "turn.approval_auto_approved", ActionResult{Outcome: OutcomeDone}
	}
}

// answerBackend is the fenced answer to a backend approval: a live offer
// of this caller, the same request still pending, the request fenced
// durably, then one answer, accept once or decline. An error means
// nothing was sent.
func (s *Service) answerBackend(ctx context.Context, p Principal, t Turn, d ApprovalDecision) (AnswerStage, error) {
	offer, err := s.liveApprovalOffer(ctx, p, t.TerminalID, t.ID, d)
	if err != nil {
		return AnswerNothing, err
	}
	if pr, ok := s.codexBackend.Prompt(t.NativeTurnID); !ok || pr.Fingerprint != offer.Fingerprint {
		return AnswerNothing, E(CodePromptChanged, "the daemon no longer asks what was offered; read the status again")
	}
	key, err := s.fenceApproval(ctx, offer)
	if err != nil {
		return AnswerNothing, err
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	stage, err := s.codexBackend.Decide(dctx, t.NativeTurnID, offer.Fingerprint, d)
	cancel()
	if stage == AnswerNothing {
		return AnswerNothing, &Error{Code: CodePromptChanged, Message: "nothing was sent: the request changed or ended", Err: err}
	}
	if stage == AnswerVerified {
		if err := s.provenFence(ctx, key); err != nil {
			slog.Warn("record a proven answer", "err", err)
		}
	}
	return stage, nil
}

// backendAutoRule is the host's rule that names the command a backend
// Turn's daemon asks to approve exactly (-1: none; see matchRule).
func (s *Service) backendAutoRule(ctx context.Context, t Turn) (ApprovalPrompt, int) {
	rules := s.hostRules(ctx, t.HostID)
	if len(rules) == 0 {
		return ApprovalPrompt{}, -1
	}
	pr, ok := s.codexBackend.Prompt(t.NativeTurnID)
	if !ok {
		return ApprovalPrompt{}, -1
	}
	th, err := s.backendThread(ctx, t.NativeThreadID)
	if err != nil {
		return ApprovalPrompt{}, -1
	}
	return pr, matchRule(rules, pr, Terminal{Agent: Agent{Kind: AgentCodex}, Project: th.Cwd})
}

// autoApproveBackend approves a backend Turn's command once, as its host's
// policy allows: the same fenced path as the host's approve_once, recorded
// as turn.approval_auto_approved. done is false when nothing was sent.
func (s *Service) autoApproveBackend(ctx context.Context, t Turn) (done bool) {
	unlock := s.turns.lockTerminal(t.TerminalID)
	defer unlock()
	t, err := s.store.Turn(ctx, t.ID)
	if err != nil || t.State != TurnAwaitingApproval {
		return false
	}
	pr, rule := s.backendAutoRule(ctx, t)
	if rule < 0 {
		return false
	}
	p := Principal{HostID: t.HostID, Conversation: t.Conversation}
	if consumed, err := s.insertApprovalOffer(ctx, p, t.TerminalID, t.ID, pr, s.clock.Now().UTC()); err != nil || consumed {
		return false
	}
	stage, err := s.answerBackend(ctx, p, t, ApproveOnce)
	if err != nil {
		slog.Info("auto-approval: nothing sent", "turn_id", t.ID, "err", err)
		return false
	}
	extra := map[string]any{"decision": string(ApproveOnce), "rule": rule, "command_excerpt": boundText(s.turns.redact, pr.Command, 400)}
	if _, err := s.recordAnswerWith(ctx, t, extra, backendAnswered(stage, "turn.approval_auto_approved")); err != nil {
		slog.Error("auto-approval: record the answer", "turn_id", t.ID, "err", err)
	}
	return true
}

// backendModels reads a backend thread's model catalogue from its daemon
// (model_options): no input, and no authority for a set-model, since the
// daemon changes a thread's model only with a turn.
func (s *Service) backendModels(ctx context.Context, endpoint string) (ModelsResult, error) {
	if _, err := requirePrincipal(ctx); err != nil {
		return ModelsResult{}, err
	}
	th, err := s.backendEndpointThread(ctx, endpoint)
	if err != nil {
		return ModelsResult{}, err
	}
	st, err := s.codexBackend.Models(ctx, th)
	if err == nil && (st.Model == "" || st.Effort == "") {
		err = errors.New("the daemon names no model and effort for the thread")
	}
	if err != nil {
		return ModelsResult{}, &Error{Code: CodeUnavailable, Message: "the thread's daemon did not give its models; nothing was sent", Err: err}
	}
	return ModelsResult{TerminalID: endpoint, Outcome: string(OutcomeDone), Effective: &ModelChoice{st.Model, st.Effort},
		Models: st.Models, ExpiresAt: s.clock.Now().UTC()}, nil
}

// checkBackendModel checks a Send's model and effort against the thread's
// daemon's catalogue, read now: the model listed, the effort one the
// catalogue lists for it (the chosen model, else the one the listing just
// read from the thread).
func (s *Service) checkBackendModel(ctx context.Context, th BackendThread, opts BackendTurnOptions) error {
	model := th.Model
	if opts.Model != "" {
		model = opts.Model
	}
	if model == "" {
		return Invalid("the daemon names no model for this thread, so no effort can be checked; nothing was sent",
			FieldError{Field: "model", Message: "name one of the thread's model_options with the effort"})
	}
	models, err := s.codexBackend.Catalogue(ctx, th)
	if err != nil {
		return &Error{Code: CodeUnavailable, Message: "the thread's daemon did not give its models; nothing was sent", Err: err}
	}
	i := slices.IndexFunc(models, func(m ModelOption) bool { return m.Model == model })
	if i < 0 {
		return Invalid("the daemon's catalogue lists no model "+model+"; nothing was sent",
			FieldError{Field: "model", Message: "one of the thread's model_options"})
	}
	if opts.Effort != "" && !slices.Contains(models[i].Efforts, opts.Effort) {
		return Invalid("the daemon's catalogue lists no effort "+opts.Effort+" for "+model+"; nothing was sent",
			FieldError{Field: "reasoning_effort", Message: "one of " + strings.Join(models[i].Efforts, ", ")})
	}
	return nil
}

// backendEndpointThread is the thread of a backend endpoint named where a
// terminal id goes: an unknown one is terminal_not_found.
func (s *Service) backendEndpointThread(ctx context.Context, endpoint string) (BackendThread, error) {
	if s.codexBackend == nil {
		return BackendThread{}, E(CodeTerminalNotFound, "no terminal "+endpoint+" (no Codex backend is configured)")
	}
	th, err := s.backendThread(ctx, strings.TrimPrefix(endpoint, backendEndpointPrefix))
	var de *Error
	if errors.As(err, &de) && de.Code == CodeConversationNotFound {
		return BackendThread{}, E(CodeTerminalNotFound, de.Message)
	}
	return th, err
}
