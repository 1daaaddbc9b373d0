package domain

import "time"

// decideWatch is a Watch's transition for what a round observed at now,
// the same for every transport (a pane's looks and reads, a thread's
// daemon events); typ is "" when it changes nothing. The endpoint lost
// invalidates it; then what the agent asks or shows; then its record; then,
// on the monitor's clock, the hard timeout.
func (s *WatchCases) decideWatch(w Watch, o Observation, now time.Time) (next Watch, typ string, webhook bool) {
	if o.Lost != EndpointThere {
		w.State, w.Reason = WatchInvalidated, o.Why
		return w, "watch.invalidated", true
	}
	next, typ, webhook = watchAsks(w, o, now)
	if typ == "" && o.Record != nil {
		next, typ, webhook = s.applyWatchProgress(next, *o.Record)
	}
	if typ == "" && o.Clock && !now.Before(w.CreatedAt.Add(w.HardTimeout)) {
		next.State, next.Reason = WatchTimedOut, "the hard timeout passed; observation ended"
		typ, webhook = "watch.timed_out", true
	}
	return next, typ, webhook
}

// watchAsks is the transition of w for what the agent asks or shows at
// now: a permission prompt observed, then cleared (by the agent's word,
// or by a look that shows none); for an activity Watch, what a look shows
// of the pane going idle and busy again.
func watchAsks(w Watch, o Observation, now time.Time) (next Watch, typ string, webhook bool) {
	next = w
	switch {
	case o.Asks == AskingApproval && !w.ApprovalShown:
		next.ApprovalShown = true
		typ, webhook = "watch.approval_observed", true
	case w.ApprovalShown && (o.Asks == AskingNothing || (o.Looked && o.Asks != AskingApproval)):
		next.ApprovalShown = false
		typ = "watch.approval_cleared"
	case w.Mode == WatchModeActivity && o.Looked && o.Idle:
		if w.IdleSince.IsZero() {
			next.IdleSince = now
			typ = "watch.idle_seen"
		} else if now.Sub(w.IdleSince) >= StableIdle {
			next.State, next.Reason = WatchCompleted, "the pane was idle again after activity (best effort)"
			typ, webhook = "watch.completed", true
		}
	case w.Mode == WatchModeActivity && o.Looked && !w.IdleSince.IsZero():
		next.IdleSince = time.Time{}
		typ = "watch.activity_seen"
	}
	return next, typ, webhook
}
