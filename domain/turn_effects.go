package domain

import "context"

// transitionRun carries out what a monitor decided for a followed Turn,
// the same for every transport: the Turn stored with its event and
// callback, and a permission prompt the host's policy names exactly
// approved once on its behalf (ApprovalCases.autoApprove).
type transitionRun struct {
	ledger *turnLedger
	ac     *ApprovalCases
}

// store stores next with its event typ and callback. A prompt the host's
// policy names exactly is stored without its callback (the host hears of
// the auto-approval instead): auto says so, and autoAnswer is to follow.
func (e transitionRun) store(ctx context.Context, next Turn, typ string, webhook bool, extra map[string]any) (stored Turn, auto bool, err error) {
	if typ == "turn.approval_required" {
		if _, rule := e.ac.autoRule(ctx, next); rule >= 0 {
			webhook, auto = false, true
		}
	}
	stored, err = e.ledger.transitionWith(ctx, next, typ, webhook, extra)
	return stored, auto && err == nil, err
}

// autoAnswer answers the prompt t (just stored by store, auto) waits on
// for its host's policy. done: the answer went (through the fenced path)
// and cur is the Turn read again (err: the read's). Otherwise nothing was
// sent, the prompt is the host's to answer, and its callback is sent now:
// cur is the Turn so stored (t when that failed, err).
func (e transitionRun) autoAnswer(ctx context.Context, t Turn) (cur Turn, done bool, err error) {
	if e.ac.autoApprove(ctx, t) {
		cur, err = e.ledger.store.Turn(ctx, t.ID)
		return cur, true, err
	}
	stored, err := e.ledger.transitionWith(ctx, t, "turn.approval_required", true, nil)
	if err != nil {
		return t, false, err
	}
	return stored, false, nil
}
