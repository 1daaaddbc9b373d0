package domain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// sendCore is what every Send shares, whatever its transport: the new
// Turn, an idempotent repeat, a reservation that failed, what a submit's
// stage makes of the Turn, and its Watch. It holds only its ports.
type sendCore struct {
	basics
	input     *inputGate
	endpoints *endpointRegistry
	turns     *turns // UsePanes
	ledger    *turnLedger
	monitors  *Monitors
	watches   *WatchCases
}

// submitReserved puts reserved Turn t's request into target through its
// endpoint, as one input step never retried, and records what became of
// it: the native turn the endpoint names, and the Turn's stage.
func (s *sendCore) submitReserved(ctx context.Context, t Turn, target EndpointTarget, request string, opts BackendTurnOptions) (SendResult, error) {
	Failpoint("send.reserved")
	seq, done := s.input.keySequence(ctx)
	nativeTurn, stage, subErr := s.endpoints.of(t.Endpoint).Submit(seq, t, target, request, opts)
	done()
	if stage == SubmitEntered {
		Failpoint("send.entered")
	}
	if stage == SubmitEntered && subErr == nil && nativeTurn != "" {
		// The endpoint started this very turn: accepted, exactly.
		if err := s.store.InTx(context.WithoutCancel(ctx), func(tx Tx) error {
			cur, err := tx.Turn(ctx, t.ID)
			if err != nil {
				return err
			}
			cur.NativeTurnID = nativeTurn
			return tx.UpdateTurn(ctx, cur)
		}); err != nil {
			slog.Error("send: native turn started but its id was not stored", "turn_id", t.ID, "err", err)
		}
	}
	return s.afterSubmit(ctx, t, stage, subErr, false)
}

// newTurn is the Turn a Send of in to endpoint reserves, with the caller's
// limits.
func (s *sendCore) newTurn(p Principal, in SendInput, endpoint EndpointRef, path DeliveryPath, now time.Time) Turn {
	tr := s.turns
	t := Turn{
		ID: s.ids.New("turn"), HostID: p.HostID, Conversation: p.Conversation,
		TerminalID: endpoint.String(), Endpoint: endpoint, MessageID: in.MessageID, OriginalRequest: in.Request, Request: in.Request, State: TurnDispatching,
		SubmitStage: SubmitNothing, InactivityLimit: tr.cfg.DefaultInactivity, HardTimeout: tr.cfg.DefaultHard,
		DeliveryPath: path, CreatedAt: now, UpdatedAt: now, Revision: 1,
	}
	if in.InactivityMinutes > 0 {
		t.InactivityLimit = time.Duration(in.InactivityMinutes) * time.Minute
	}
	if in.HardTimeoutMinutes > 0 {
		t.HardTimeout = time.Duration(in.HardTimeoutMinutes) * time.Minute
	}
	return t
}

// reserveFailed answers a Send whose reservation failed: the Turn its key
// already names, the store's conflict, or the error.
func (s *sendCore) reserveFailed(ctx context.Context, p Principal, in SendInput, err error) (SendResult, error) {
	if in.MessageID != "" {
		if existing, e2 := s.turnByMessageID(ctx, p.HostID, in.MessageID); e2 == nil {
			return s.existing(ctx, existing, in.Request)
		}
	}
	var de *Error
	if errors.As(err, &de) && de.Code == CodeConflictActiveTurn {
		return SendResult{}, de // the store holds another Turn of this terminal
	}
	return SendResult{}, fmt.Errorf("reserve turn: %w", err)
}

// withSendWatch gives a dispatched Send its Watch: every Send has one, and
// storing it never undoes the Send.
func (s *sendCore) withSendWatch(ctx context.Context, res SendResult, err error) (SendResult, error) {
	if err != nil || res.Turn.ID == "" {
		return res, err
	}
	if w, err := s.attachSendWatch(ctx, res.Turn); err == nil {
		res.Watch = w
	} else {
		res.Warnings = append(res.Warnings, "the Turn was dispatched, but its Watch could not be stored; follow the Turn with its turn_id (its callbacks are unaffected)")
	}
	return res, nil
}

// supersede closes a broken Turn so a user-explicit Send may take its
// terminal, in the transaction that reserves the new Turn.
func (s *sendCore) supersede(ctx context.Context, tx Tx, old Turn, by string, now time.Time) error {
	cur, err := tx.Turn(ctx, old.ID)
	if err != nil {
		return err
	}
	if cur.Revision != old.Revision || !cur.State.HoldsTerminal() || cur.State.Active() {
		return ErrRevisionConflict // it moved since it was read; the caller retries the whole Send
	}
	cur.FailureReason = "closed while " + string(cur.State) + ": turn " + by + " was sent to its terminal (user-explicit send)"
	cur.State, cur.UpdatedAt, cur.EndedAt = TurnClosed, now, now
	if err := tx.UpdateTurn(ctx, cur); err != nil {
		return err
	}
	if err := s.ledger.syncSendWatch(ctx, tx, cur); err != nil {
		return err
	}
	_, err = s.ledger.emitTurnLocked(ctx, tx, cur, "turn.closed", false)
	return err
}

// afterSubmit records what a Submit did and starts monitoring. respond says
// whether this was a respond inside an existing Turn.
func (s *sendCore) afterSubmit(ctx context.Context, t Turn, stage SubmitStage, subErr error, respond bool) (SendResult, error) {
	ctx = context.WithoutCancel(ctx) // what happened to the pane must be recorded
	now := s.clock.Now().UTC()
	if stage == "" {
		stage = SubmitNothing
	}
	if stage == SubmitNothing {
		// Provably no input: undo the reservation, nothing was sent.
		err := s.store.InTx(ctx, func(tx Tx) error {
			if respond {
				cur, err := tx.Turn(ctx, t.ID)
				if err != nil {
					return err
				}
				cur.State, cur.UpdatedAt = TurnWaitingForHost, now
				return tx.UpdateTurn(ctx, cur)
			}
			return tx.DeleteTurn(ctx, t.ID)
		})
		if err != nil {
			return SendResult{}, err
		}
		var refusal *Error
		if errors.As(subErr, &refusal) {
			return SendResult{}, refusal // the endpoint's own words
		}
		msg := "the terminal changed before input; nothing was sent"
		if subErr != nil {
			msg += ": " + subErr.Error()
		}
		return SendResult{}, &Error{Code: CodeTerminalNotIdle, Message: msg, Err: subErr}
	}
	var res SendResult
	err := s.store.InTx(ctx, func(tx Tx) error {
		cur, err := tx.Turn(ctx, t.ID)
		if err != nil {
			return err
		}
		cur.SubmitStage, cur.UpdatedAt = stage, now
		if stage == SubmitEntered && subErr == nil {
			cur.LastActivityAt = now
			if _, err := s.ledger.emitTurnLocked(ctx, tx, cur, "turn.dispatched", false); err != nil {
				return err
			}
			res = SendResult{Outcome: OutcomeDone}
		} else {
			cur.State, cur.EndedAt = TurnDeliveryUncertain, now
			cur.FailureReason = "input reached the pane but its delivery is not proven (stage " + string(stage) + ")"
			if subErr != nil {
				cur.FailureReason += ": " + subErr.Error()
			}
			if _, err := s.ledger.emitTurnLocked(ctx, tx, cur, "turn.delivery_uncertain", true); err != nil {
				return err
			}
			res = SendResult{Outcome: OutcomeUncertain, DoNotRetry: true}
		}
		if err := tx.UpdateTurn(ctx, cur); err != nil {
			return err
		}
		cur.Revision++
		res.Turn = cur
		return nil
	})
	if err != nil {
		return SendResult{}, err
	}
	if res.Turn.State.Monitored() {
		s.monitors.startMonitor(res.Turn.ID)
	}
	return res, nil
}

func (s *sendCore) existing(ctx context.Context, t Turn, request string) (SendResult, error) {
	original := t.OriginalRequest
	if original == "" {
		original = t.Request // a Turn stored before original_request existed
	}
	if original != request {
		return SendResult{}, E(CodeIdempotencyKeyReused, "message_id "+t.MessageID+" was used for a different request")
	}
	out := SendResult{Turn: t, Existing: true, Outcome: OutcomeDone}
	if w, err := s.store.WatchOfTurn(ctx, t.ID); err == nil {
		if out.Watch, err = s.ledger.projectWatch(ctx, w); err != nil {
			return SendResult{}, err
		}
	}
	if t.State == TurnDeliveryUncertain {
		out.Outcome, out.DoNotRetry = OutcomeUncertain, true
	}
	return out, nil
}

func (s *sendCore) turnByMessageID(ctx context.Context, hostID, messageID string) (Turn, error) {
	return s.store.TurnByMessageID(ctx, hostID, messageID)
}
