package domain

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"
)

// turnData is the public projection carried by Turn events and webhooks.
func (s *Service) turnData(t Turn) map[string]any {
	d := map[string]any{
		"turn_id":      t.ID,
		"session_id":   t.SessionID,
		"terminal_id":  t.TerminalID,
		"conversation": t.Conversation,
		"state":        string(t.State),
	}
	if t.State == TurnCompleted {
		d["final_message"] = t.FinalMessage
	}
	if t.FailureReason != "" {
		d["reason"] = t.FailureReason
	}
	if t.State == TurnDeliveryUncertain || t.State == TurnResponseUncertain {
		d["do_not_retry"] = true
	}
	if t.State == TurnAwaitingApproval || t.State == TurnAwaitingInteraction {
		d["note"] = "a wake-up signal, not authority: read the Turn's status before acting"
	}
	return d
}

// emitTurnLocked stores a Turn event (and its webhook when webhook is set)
// in the caller's transaction.
func (s *Service) emitTurnLocked(ctx context.Context, tx Tx, t Turn, typ string, webhook bool) (Notification, error) {
	return s.emitLocked(ctx, tx, Event{Type: typ, HostID: t.HostID, Conversation: t.Conversation, Subject: t.ID,
		Data: s.turnData(t)}, webhook)
}

// transition writes a Turn change with its event (and webhook) in one
// transaction, compare-and-swap on the revision. It returns the stored Turn.
func (s *Service) transition(ctx context.Context, t Turn, typ string, webhook bool) (Turn, error) {
	return s.transitionWith(ctx, t, typ, webhook, nil)
}

// transitionWith is transition with extra public fields in the event data.
func (s *Service) transitionWith(ctx context.Context, t Turn, typ string, webhook bool, extra map[string]any) (Turn, error) {
	t.UpdatedAt = s.clock.Now().UTC()
	if t.State.Final() || t.State == TurnStalled || t.State == TurnDeliveryUncertain || t.State == TurnResponseUncertain {
		if t.EndedAt.IsZero() {
			t.EndedAt = t.UpdatedAt
		}
	}
	err := s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.UpdateTurn(ctx, t); err != nil {
			return err
		}
		if err := s.syncSendWatch(ctx, tx, t); err != nil {
			return err
		}
		if typ == "turn.accepted" {
			if err := s.bindSession(ctx, tx, t); err != nil {
				return err
			}
		}
		if typ == "" {
			return nil
		}
		data := s.turnData(t)
		for k, v := range extra {
			data[k] = v
		}
		_, err := s.emitLocked(ctx, tx, Event{Type: typ, HostID: t.HostID, Conversation: t.Conversation, Subject: t.ID,
			Data: data}, webhook)
		return err
	})
	if err != nil {
		return t, err
	}
	t.Revision++
	s.nudge(t.ID)
	return t, nil
}

// StartTurnMonitors resumes monitoring of every live Turn (after a
// restart) and keeps ctx as the life of monitors started later.
func (s *Service) StartTurnMonitors(ctx context.Context) error {
	tr := s.turns
	if tr == nil {
		return nil
	}
	tr.monMu.Lock()
	tr.monCtx = ctx
	tr.monMu.Unlock()
	live, err := s.store.Turns(ctx, TurnFilter{All: true, Limit: 100000})
	if err != nil {
		return err
	}
	for _, t := range live {
		if t.State.Monitored() {
			s.startMonitor(t.ID)
		}
	}
	if s.watchTerm != nil {
		ws, err := s.store.ActiveWatches(ctx)
		if err != nil {
			return err
		}
		for _, w := range ws {
			if w.TurnID == "" { // a Send's Watch follows its Turn's monitor
				s.startWatchMonitor(w.ID)
			}
		}
	}
	return nil
}

// WaitTurnMonitors waits until every monitor has stopped (after the ctx
// given to StartTurnMonitors ended).
func (s *Service) WaitTurnMonitors() {
	if s.turns != nil {
		s.turns.monWG.Wait()
	}
}

func (s *Service) startMonitor(turnID string) { s.startMonitorFunc(turnID, s.monitor) }

// startMonitorFunc runs run(ctx, id) as the one monitor of a Turn or Watch.
func (s *Service) startMonitorFunc(turnID string, run func(context.Context, string)) {
	tr := s.turns
	tr.monMu.Lock()
	defer tr.monMu.Unlock()
	if tr.monCtx == nil || tr.monCtx.Err() != nil {
		return
	}
	if h, running := tr.monitors[turnID]; running && h.ctx.Err() == nil {
		return
	}
	ctx, cancel := context.WithCancel(tr.monCtx)
	h := &monitorHandle{ctx: ctx, cancel: cancel, nudge: make(chan struct{}, 1)}
	ctx = context.WithValue(ctx, nudgeKey{}, h.nudge)
	tr.monitors[turnID] = h
	tr.monWG.Add(1)
	go func() {
		defer tr.monWG.Done()
		defer func() {
			tr.monMu.Lock()
			if tr.monitors[turnID] == h {
				delete(tr.monitors, turnID)
			}
			tr.monMu.Unlock()
			cancel()
		}()
		run(ctx, turnID)
	}()
}

// monitorHandle is one running monitor.
type monitorHandle struct {
	ctx    context.Context
	cancel context.CancelFunc
	nudge  chan struct{} // the record changed: reload it and look at the screen now
}

type nudgeKey struct{}

// nudges returns the nudge channel of the monitor running with ctx.
func nudges(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(nudgeKey{}).(chan struct{})
	return ch
}

// nudge tells the monitor of id, if any, that its record changed.
func (s *Service) nudge(id string) {
	tr := s.turns
	if tr == nil {
		return
	}
	tr.monMu.Lock()
	h := tr.monitors[id]
	tr.monMu.Unlock()
	if h != nil {
		select {
		case h.nudge <- struct{}{}:
		default:
		}
	}
}

func (s *Service) stopMonitor(turnID string) {
	tr := s.turns
	tr.monMu.Lock()
	h := tr.monitors[turnID]
	tr.monMu.Unlock()
	if h != nil {
		h.cancel()
	}
}

// monitor follows one Turn to a state the monitor does not follow. It never
// sends input.
func (s *Service) monitor(ctx context.Context, turnID string) {
	tr := s.turns
	log := slog.With("turn_id", turnID)
	t, err := s.store.Turn(ctx, turnID)
	if err != nil {
		if ctx.Err() == nil {
			log.Error("monitor: load turn", "err", err)
		}
		return
	}
	if IsBackendEndpoint(t.TerminalID) {
		s.monitorBackend(ctx, t)
		return
	}
	mark := t.Mark
	var term Terminal
	var lastScreen time.Time
	var lastPersist time.Time
	tick := time.NewTicker(tr.cfg.PollInterval)
	defer tick.Stop()
	// Wake on a write to the record, armed before each read so no write
	// between a read and the wait is missed.
	notifier, _ := tr.term.(RecordNotifier)
	announced := "" // fingerprint of the prompt or step last announced
	var written <-chan struct{}
	stopWritten := func() {}
	defer func() { stopWritten() }()
	var scr screenWatch // tmux's report of the screen's next change
	defer scr.release()
	var reads recordReads
	for {
		if !t.State.Monitored() {
			return
		}
		if notifier != nil && written == nil {
			if ch, stop, err := notifier.Changed(mark); err == nil {
				written, stopWritten = ch, stop
			}
		}
		now := s.clock.Now().UTC()
		next := t
		typ, webhook := "", false
		fresh := false // the screen was looked at in this round
		wasAnnounced := announced

		// The screen: terminal liveness and prompts. When it changed (as tmux
		// reports it), or on a clock.
		if scr.lookNow(ctx, tr, t.TerminalID, term.ID != "", lastScreen, now) {
			lastScreen = now
			fresh = true
			obs, err := tr.look(ctx, t.TerminalID)
			switch {
			case errors.Is(err, ErrTerminalGone):
				if term.ID == "" {
					next.State, next.FailureReason = TurnFailed, "the terminal was gone when monitoring started"
					typ, webhook = "turn.failed", true
				}
			case err != nil:
				if ctx.Err() != nil {
					return
				}
				log.Warn("monitor: observe", "err", err)
			default:
				if scr.confirm(term, obs) {
					term = obs
				} else {
					fresh = false
				}
			}
			if errors.Is(err, ErrTerminalGone) && term.ID != "" {
				// A last look at the record before giving up on the pane.
				if p, perr := tr.term.Progress(ctx, term, mark, t.Request); perr == nil && p.Ended() {
					next, typ, webhook = s.applyProgress(next, p)
				} else {
					next.State, next.FailureReason = TurnFailed, "the pane closed or its agent exited before the turn ended"
					typ, webhook = "turn.failed", true
				}
			}
		}

		if typ == "" && term.ID != "" && reads.due(tr.cfg, written != nil, fresh, now) {
			p, err := tr.term.Progress(ctx, term, mark, t.Request)
			if ctx.Err() == nil {
				tr.setReadErr(t.ID, err != nil)
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				log.Warn("monitor: progress", "err", err)
			} else {
				mark = p.Mark
				next, typ, webhook = s.applyProgress(next, p)
			}
		}

		if typ == "" {
			next, typ, webhook = s.applyScreen(next, term)
		}
		if fresh && (typ == "" || typ == "turn.approval_required" || typ == "turn.interaction_required") {
			// A new prompt or step while the Turn already waits on one (a
			// person answered the last in the pane) is announced again: the
			// host's offer is for the old one.
			if fp := s.promptFingerprint(ctx, next.State, term); fp != "" {
				switch {
				case typ == "" && announced != "" && fp != announced && !scr.confirmPrompt(fp):
					// Announced when the next look reads it again.
				case typ == "" && announced != "" && fp != announced:
					typ, webhook = s.announceType(next.State), true
					announced = fp
				default:
					announced = fp
				}
			}
		}
		if typ == "" {
			switch {
			case now.After(t.HardDeadline()):
				next.State, next.FailureReason = TurnStalled, "the hard deadline passed; observation ended"
				typ, webhook = "turn.stalled", true
			case t.State == TurnDispatching && t.SubmitStage != SubmitEntered:
				// Reserved, but the daemon stopped before the submit was
				// recorded: input may or may not have happened.
				if now.Sub(t.UpdatedAt) > tr.cfg.AcceptWindow {
					next.State, next.FailureReason = TurnDeliveryUncertain, "the daemon stopped while sending; delivery is not proven"
					typ, webhook = "turn.delivery_uncertain", true
				}
			case t.State == TurnDispatching && now.Sub(t.UpdatedAt) > tr.cfg.AcceptWindow:
				next.State, next.FailureReason = TurnDeliveryUncertain, "Enter was pressed but the agent's record never showed the request"
				typ, webhook = "turn.delivery_uncertain", true
			case t.State != TurnDispatching && now.After(t.InactivityDeadline()):
				next.State, next.FailureReason = TurnStalled, "no activity within the inactivity limit"
				typ, webhook = "turn.stalled", true
			}
		}

		if fresh && typ == "" && next.State == TurnWorking && term.AsyncQuestion && s.interactions != nil {
			// An async question is asked while the Turn works on: announced
			// once per step, the Turn's state unchanged.
			if st, err := s.interactions.Step(ctx, term); err == nil && st.Present && st.Kind == KindAsyncQuestion {
				if st.Fingerprint != announced {
					typ, webhook = "turn.interaction_required", true
				}
				announced = st.Fingerprint
			}
		}

		moved := next.LatestText != t.LatestText || !slices.Equal(next.Actions, t.Actions)
		changed := typ != "" || moved || (next.LastActivityAt.Sub(t.LastActivityAt) >= 5*time.Second)
		if changed {
			next.Mark = mark
			if typ == "" && moved {
				if now.Sub(lastPersist) < time.Second && next.LastActivityAt.Sub(t.LastActivityAt) < 5*time.Second {
					changed = false // progress text is throttled to one write a second
				} else {
					typ = "turn.progress"
				}
			}
		}
		var extra map[string]any
		if typ == "turn.interaction_required" && s.interactions != nil && term.ID != "" {
			// The callback carries the public projection only; acting on it
			// needs a fresh GET of the interaction by the owning conversation.
			if st, err := s.interactions.Step(ctx, term); err == nil && st.Present {
				if key, err := s.stepKey(ctx, next, st); err == nil {
					if in, _, err := s.project(ctx, next, term.Agent.Kind, st, key); err == nil {
						extra = map[string]any{"interaction": in}
					}
				}
			}
		}
		// A command the host's policy names exactly is approved once on its
		// behalf: the prompt is recorded without a callback, then answered
		// through the fenced path; the host hears of the auto-approval.
		auto := typ == "turn.approval_required" && s.autoApprovable(ctx, next, term)
		if auto {
			webhook = false
		}
		if changed {
			stored, err := s.transitionWith(ctx, next, typ, webhook, extra)
			if errors.Is(err, ErrRevisionConflict) {
				// An action (cancel, close, respond) changed the Turn: reload.
				if t, err = s.store.Turn(ctx, turnID); err != nil {
					return
				}
				// What this round would have announced was not stored: the
				// next look announces it again (a step opened by the respond
				// that changed the Turn would otherwise never be announced).
				mark, announced = t.Mark, wasAnnounced
				continue
			}
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				log.Error("monitor: store transition", "err", err)
			} else {
				t = stored
				lastPersist = now
				if auto {
					if s.autoApprove(ctx, t) {
						if t, err = s.store.Turn(ctx, turnID); err != nil {
							return
						}
						// Look at the screen again before judging it.
						mark, announced, lastScreen = t.Mark, "", time.Time{}
						continue
					}
					// Nothing was sent: the prompt is the host's to answer.
					if stored, err := s.transitionWith(ctx, t, "turn.approval_required", true, nil); err == nil {
						t = stored
					}
				}
			}
		}

		// With the record's write watch armed, a write wakes the monitor at
		// once: the record is read on that, or on the slow safety tick.
		tick.Reset(scr.wait(tr.cfg, written != nil, term.ID != "", lastScreen, s.clock.Now().UTC()))
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-written:
			stopWritten()
			written, stopWritten = nil, func() {}
			reads.woke = true
		case <-scr.ch:
			scr.fired()
		case <-nudges(ctx):
			reads.woke = true
			// An action or this monitor changed the Turn: take the stored
			// record (its state and mark) and look at the screen at once.
			cur, err := s.store.Turn(ctx, turnID)
			if err != nil {
				return
			}
			if cur.Revision != t.Revision {
				t, mark = cur, cur.Mark
				if t.State != TurnAwaitingApproval && t.State != TurnAwaitingInteraction {
					announced = ""
				}
			}
			lastScreen = time.Time{}
		}
	}
}

// bindSession binds a Session to the native thread its first accepted
// Turn proved, in the transaction that records the acceptance. A Session
// already bound keeps its thread (a later Send by session_id to a pane now
// on another thread is refused before input).
func (s *Service) bindSession(ctx context.Context, tx Tx, t Turn) error {
	if t.SessionID == "" || t.NativeThreadID == "" {
		return nil
	}
	sess, err := tx.Session(ctx, t.SessionID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil || sess.NativeThreadID != "" {
		return err
	}
	return tx.BindSession(ctx, sess.ID, sess.Revision, t.NativeThreadID)
}

// applyProgress folds what the durable record proves into the Turn.
func (s *Service) applyProgress(t Turn, p TurnProgress) (Turn, string, bool) {
	if !p.LastActivity.IsZero() && p.LastActivity.After(t.LastActivityAt) {
		t.LastActivityAt = p.LastActivity.UTC()
	}
	if p.LatestText != "" {
		t.LatestText = boundText(s.turns.redact, p.LatestText, StoredCommentaryLimit)
	}
	if len(p.Actions) > 0 {
		t.Actions = append([]ProgressAction(nil), p.Actions...)
	}
	if !p.LatestItemAt.IsZero() {
		t.LatestItemAt = p.LatestItemAt.UTC()
	}
	if p.Accepted && t.AcceptedAt.IsZero() {
		t.AcceptedAt = s.clock.Now().UTC()
		if p.NativeThreadID != "" {
			t.NativeThreadID = p.NativeThreadID
		}
		t.NativeTurnID = p.NativeTurnID
	}
	if p.Accepted && t.State == TurnDispatching {
		// Acceptance is announced first, even when the same read already
		// shows the end: the next read (from the returned mark) reports it.
		t.State = TurnWorking
		return t, "turn.accepted", true
	}
	switch {
	case p.Completed:
		t.State, t.FinalMessage = TurnCompleted, s.redact(p.FinalMessage)
		return t, "turn.completed", true
	case p.Failed:
		t.State, t.FailureReason = TurnFailed, s.redact(p.FailureReason)
		return t, "turn.failed", true
	case p.Interrupted && t.CancelRequested:
		t.State = TurnCancelled
		return t, "turn.cancelled", true
	case p.Interrupted && t.State != TurnWaitingForHost:
		t.State, t.FailureReason = TurnWaitingForHost, "the turn was interrupted in the pane; the agent waits for instructions"
		return t, "turn.waiting_for_host", true
	}
	return t, "", false
}

// promptFingerprint is the fingerprint of the permission prompt or
// questionnaire step a Turn in state waits on, "" when none is read.
func (s *Service) promptFingerprint(ctx context.Context, state TurnState, term Terminal) string {
	switch {
	case term.ID == "":
	case state == TurnAwaitingApproval && s.approvals != nil:
		if pr, err := s.approvals.Prompt(ctx, term); err == nil && pr.Present {
			return pr.Fingerprint
		}
	case state == TurnAwaitingInteraction && s.interactions != nil:
		if st, err := s.interactions.Step(ctx, term); err == nil && st.Present {
			return st.Fingerprint
		}
	}
	return ""
}

func (s *Service) announceType(state TurnState) string {
	if state == TurnAwaitingApproval {
		return "turn.approval_required"
	}
	return "turn.interaction_required"
}

// redact hides secret-looking strings: none crosses the public API.
func (s *Service) redact(text string) string {
	if s.turns == nil || s.turns.redact == nil {
		return text
	}
	return s.turns.redact.Redact(text)
}

// applyScreen reflects prompts the screen shows while the Turn works.
func (s *Service) applyScreen(t Turn, term Terminal) (Turn, string, bool) {
	switch {
	case t.State == TurnWorking && term.ScreenState == ScreenAwaitingApproval:
		t.State = TurnAwaitingApproval
		return t, "turn.approval_required", true
	case t.State == TurnWorking && term.ScreenState == ScreenAwaitingInteraction:
		t.State = TurnAwaitingInteraction
		return t, "turn.interaction_required", true
	case (t.State == TurnAwaitingApproval || t.State == TurnAwaitingInteraction) && term.ScreenState == ScreenWorking:
		t.State = TurnWorking
		return t, "turn.working", false
	}
	return t, "", false
}
