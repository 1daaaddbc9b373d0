package domain

import (
	"context"
	"errors"
	"time"
	"unicode"
	"unicode/utf8"
)

// turnLedger stores Turn changes: each with its event (and webhook), its
// Send's Watch and its session's binding, in one transaction,
// compare-and-swap on the revision; and wakes the Turn's monitor.
type turnLedger struct {
	basics
	turns *turns // the monitors and the redactor (UsePanes)
}

// turnData is the public projection carried by Turn events and webhooks.
func (s *turnLedger) turnData(t Turn) map[string]any {
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
func (s *turnLedger) emitTurnLocked(ctx context.Context, tx Tx, t Turn, typ string, webhook bool) (Notification, error) {
	return s.emitLocked(ctx, tx, Event{Type: typ, HostID: t.HostID, Conversation: t.Conversation, Subject: t.ID,
		Data: s.turnData(t)}, webhook)
}

// transition writes a Turn change with its event (and webhook) in one
// transaction, compare-and-swap on the revision. It returns the stored Turn.
func (s *turnLedger) transition(ctx context.Context, t Turn, typ string, webhook bool) (Turn, error) {
	return s.transitionWith(ctx, t, typ, webhook, nil)
}

// transitionWith is transition with extra public fields in the event data.
func (s *turnLedger) transitionWith(ctx context.Context, t Turn, typ string, webhook bool, extra map[string]any) (Turn, error) {
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
		if len(t.NewChanges) > 0 {
			if err := tx.AddTurnChanges(ctx, t.ID, t.NewChanges); err != nil {
				return err
			}
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
	t.NewChanges = nil
	s.nudge(t.ID)
	logTurnEvent(typ, t)
	return t, nil
}

// nudge tells the monitor of id, if any, that its record changed.
func (s *turnLedger) nudge(id string) {
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

// followTurn is a Send's Watch as its Turn stands now.
func (s *turnLedger) followTurn(w Watch, t Turn) Watch {
	if w.TurnID == "" || w.State != WatchActive {
		return w // unwatched stays unwatched
	}
	w.NativeTurnID = t.NativeTurnID
	w.LatestText, _ = s.cutGraphemes(t.LatestText, ProgressLimit)
	switch t.State {
	case TurnCompleted:
		w.State, w.FinalMessage = WatchCompleted, t.FinalMessage
	case TurnFailed:
		w.State, w.Reason = WatchFailed, t.FailureReason
	case TurnCancelled:
		w.State, w.Reason = WatchFailed, "the Turn was cancelled"
	case TurnClosed:
		w.State, w.Reason = WatchInvalidated, "the Turn was closed; AKK no longer follows it"
	}
	if w.State != WatchActive && w.EndedAt.IsZero() {
		w.EndedAt = t.EndedAt
		if w.EndedAt.IsZero() {
			w.EndedAt = t.UpdatedAt
		}
	}
	return w
}

// projectWatch is w as it reads now: a Send's Watch takes its Turn's state.
func (s *turnLedger) projectWatch(ctx context.Context, w Watch) (Watch, error) {
	if w.TurnID == "" || w.State != WatchActive {
		return w, nil
	}
	t, err := s.store.Turn(ctx, w.TurnID)
	if errors.Is(err, ErrNotFound) {
		return w, nil
	}
	if err != nil {
		return w, err
	}
	return s.followTurn(w, t), nil
}

// syncSendWatch ends a Send's Watch in the transaction that ends its Turn,
// so the store never counts it active after the Turn is over.
func (s *turnLedger) syncSendWatch(ctx context.Context, tx Tx, t Turn) error {
	if !t.State.Final() {
		return nil
	}
	w, err := tx.WatchOfTurn(ctx, t.ID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	next := s.followTurn(w, t)
	if next.State == w.State {
		return nil
	}
	next.UpdatedAt = t.UpdatedAt
	return tx.UpdateWatch(ctx, next)
}

// bindSession binds a Session to the native thread its first accepted
// Turn proved, in the transaction that records the acceptance. A Session
// already bound keeps its thread (a later Send by session_id to a pane now
// on another thread is refused before input).
func (s *turnLedger) bindSession(ctx context.Context, tx Tx, t Turn) error {
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

// cutGraphemes keeps the longest prefix of s of whole grapheme clusters
// that is at most limit code points; cut says whether anything was left
// out.
func (s *turnLedger) cutGraphemes(text string, limit int) (string, bool) {
	if utf8.RuneCountInString(text) <= limit {
		return text, false
	}
	if s.turns != nil {
		if g, ok := s.turns.redact.(GraphemeCutter); ok {
			return g.Cut(text, limit)
		}
	}
	runes := []rune(text)
	n := limit
	for n > 0 && (unicode.In(runes[n], unicode.Mn, unicode.Me, unicode.Mc) || runes[n] == '\u200d' || runes[n-1] == '\u200d') {
		n--
	}
	return string(runes[:n]), true
}

// storedChanges redacts and bounds the changes a record read gave.
func (s *turnLedger) storedChanges(in []FileChange) []TurnChange {
	out := make([]TurnChange, 0, len(in))
	for _, c := range in {
		diff, cut := boundDiff(s.redact(c.Diff), MaxChangeDiff)
		out = append(out, TurnChange{Path: s.redact(c.Path), Op: c.Op, Diff: diff, Truncated: cut, At: c.At.UTC()})
	}
	return out
}

// applyProgress folds what the durable record proves into the Turn, read
// at now.
func (s *turnLedger) applyProgress(t Turn, p TurnProgress, now time.Time) (Turn, string, bool) {
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
	t.NewChanges = append(t.NewChanges, s.storedChanges(p.Changes)...)
	if p.Accepted && t.AcceptedAt.IsZero() {
		t.AcceptedAt = now.UTC()
		if p.NativeThreadID != "" {
			t.NativeThreadID = p.NativeThreadID
		}
		if p.NativeTurnID != "" {
			t.NativeTurnID = p.NativeTurnID
		}
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
		t.State, t.FailureReason = TurnFailed, boundText(s.turns.redact, p.FailureReason, FailureReasonLimit)
		return t, "turn.failed", true
	case p.Interrupted && (t.CancelRequested || p.InterruptEnds):
		t.State = TurnCancelled
		return t, "turn.cancelled", true
	case p.Interrupted && t.State != TurnWaitingForHost:
		t.State, t.FailureReason = TurnWaitingForHost, "the turn was interrupted in the pane; the agent waits for instructions"
		return t, "turn.waiting_for_host", true
	}
	return t, "", false
}

// redact hides secret-looking strings: none crosses the public API.
func (s *turnLedger) redact(text string) string { return s.turns.redactText(text) }
