package domain

import "log/slog"

// The activity log: one info line per Send, prompt, answer and ending,
// with the ids an operator greps for and never a request's, command's or
// answer's text (those stay behind the API's redaction).

// loggedTurnEvents are the Turn events that make an info line.
var loggedTurnEvents = map[string]bool{
	"turn.accepted": true, "turn.completed": true, "turn.failed": true, "turn.cancelled": true, "turn.closed": true,
	"turn.approval_required": true, "turn.interaction_required": true,
	"turn.approval_answered": true, "turn.approval_auto_approved": true, "turn.interaction_answered": true,
	"turn.delivery_uncertain": true, "turn.response_uncertain": true, "turn.interaction_uncertain": true,
	"turn.stalled": true, "turn.waiting_for_host": true, "turn.recovered": true, "turn.renewed": true,
}

// logSend is the line of a Send reserved durably (before any input).
func logSend(t Turn, requestBytes int) {
	slog.Info("send", "turn_id", t.ID, "host_id", t.HostID, "terminal_id", t.TerminalID, "delivery_path", t.DeliveryPath,
		"request_bytes", requestBytes)
}

// logTurnEvent is the line of a Turn event stored with the Turn.
func logTurnEvent(typ string, t Turn) {
	if !loggedTurnEvents[typ] {
		return
	}
	slog.Info(typ, "turn_id", t.ID, "host_id", t.HostID, "terminal_id", t.TerminalID, "state", t.State)
}
