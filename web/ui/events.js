// The live event stream of the signed-in session (GET /v1/events): the
// browser's EventSource resumes with Last-Event-ID after a drop; a banner
// shows while it is down. Views and the store listen with onEvent.
export const eventTypes = ["turn.accepted", "turn.approval_answered", "turn.approval_auto_approved", "turn.approval_required", "turn.cancel_requested",
  "turn.cancelled", "turn.closed", "turn.completed", "turn.delivery_uncertain", "turn.dispatched", "turn.failed",
  "turn.interaction_answered", "turn.interaction_answering", "turn.interaction_required", "turn.progress",
  "turn.renewed", "turn.response_uncertain", "turn.stalled", "turn.waiting_for_host", "turn.working",
  "watch.activity_seen", "watch.approval_cleared", "watch.approval_observed", "watch.completed", "watch.failed",
  "watch.idle_seen", "watch.invalidated", "watch.renewed", "watch.started", "watch.timed_out", "watch.unwatched",
  "host.approval_policy_changed", "host.created", "host.ping", "host.removed", "host.secret_rotated", "host.token_rotated"];

const listeners = new Set();
let source = null;

// onEvent calls fn(type, envelope) for every event; it returns the unsubscription.
export function onEvent(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export function connect() {
  if (source) return;
  const banner = document.getElementById("banner");
  source = new EventSource("/v1/events");
  source.addEventListener("open", () => { banner.hidden = true; });
  source.addEventListener("error", () => {
    banner.textContent = "The live event stream dropped; reconnecting…";
    banner.hidden = false;
  });
  for (const t of eventTypes) {
    source.addEventListener(t, (e) => {
      let env = null;
      try { env = JSON.parse(e.data); } catch { /* ignore */ }
      for (const fn of [...listeners]) fn(t, env);
    });
  }
}

export function disconnect() {
  if (source) { source.close(); source = null; }
}
