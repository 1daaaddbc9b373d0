// Shared by the dashboard's views: the API client, the one error type,
// relative times, and Preact with htm (vendored unchanged under vendor/).
import { h, render } from "preact";
import htm from "/ui/vendor/htm/htm.mjs";

export const html = htm.bind(h);
export { render };

export class Problem extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
  }
}

let unauthorized = () => {};
// onUnauthorized names what a 401 on any call does (the session ended).
export function onUnauthorized(fn) { unauthorized = fn; }

export async function api(method, path, body) {
  const opts = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(path, opts);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = null; }
  if (!r.ok) {
    if (r.status === 401 && path !== "/v1/ui/session") unauthorized();
    throw new Problem(r.status, data);
  }
  return data;
}

export function ago(iso) {
  if (!iso) return "";
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return new Date(iso).toLocaleString();
}

// For how long: "12 s", "3 min", "2 h".
export function since(iso) {
  if (!iso) return "";
  const s = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

export function problemText(err) {
  if (err instanceof Problem) return `${err.message}${err.code ? ` (${err.code})` : ""}`;
  return String(err && err.message || err);
}

export function byName(actions, name) { return (actions || []).filter((a) => a.action === name); }

// call runs an offered action with its prefilled body plus the user's input.
export function call(a, extra) {
  const body = a.body ? { ...a.body, ...(extra || {}) } : undefined;
  return api(a.method, a.path, body);
}

export const stateLabel = {
  idle: ["Idle", "●"], working: ["Working", "◐"], awaiting_approval: ["Awaiting approval", "!"],
  awaiting_interaction: ["Awaiting an answer", "?"], blocked: ["Blocked", "■"], unknown: ["Unknown", "○"],
};

// displayState is a row's state as a person reads it.
export function displayState(c) {
  if (!c.terminal) {
    // A backend thread: what its daemon and its Turn say.
    const cur = c.managed && c.managed.current_turn;
    if (c.approval) return c.approval.manual_required ? "blocked" : "awaiting_approval";
    if (cur && cur.state === "awaiting_interaction") return "awaiting_interaction";
    const t = c.backend && c.backend.thread_status;
    return t === "idle" ? "idle" : t === "active" ? "working" : "unknown";
  }
  const s = c.terminal.screen_state;
  if (s === "startup_dialog" || (c.approval && c.approval.manual_required)) return "blocked";
  return stateLabel[s] ? s : "unknown";
}

// The agent of a row as a person names it: "Claude Code · myproject" (the
// project's folder; a pane's title is often the agent's own status line).
export function agentName(c) {
  const kind = c.agent.kind === "claude" ? "Claude Code" : c.agent.kind === "codex" ? "Codex" : c.agent.kind;
  return `${kind} · ${c.project.split("/").filter(Boolean).pop() || c.project}`;
}

// Where a row lives: its tmux session and window, or its thread.
// cardTitle names a conversation for a person: its project folder and,
// for a pane, the tmux session:window it is in. Never the pane title: an
// agent writes its own status and spinner there. A thread without a pane
// keeps the title its daemon gives it.
export function cardTitle(c) {
  const project = c.project.split("/").filter(Boolean).pop() || c.project;
  const t = c.terminal;
  if (t && t.tmux_session) return `${project} · ${t.tmux_session}:${t.tmux_window || ""}`;
  if (c.backend && c.title && !t) return `${project} · ${c.title}`;
  return project;
}

export function whereOf(c) {
  if (c.terminal && c.terminal.tmux_session) return `tmux ${c.terminal.tmux_session}:${c.terminal.tmux_window || ""}`;
  if (c.backend) return "Codex app-server thread";
  return "";
}

export const decisionLabel = { approve_once: "Approve once", reject: "Reject" };
export const actionLabel = {
  cancel: "Stop the task", close: "Close", renew: "Follow again", recover: "Check the record", retry_callback: "Resend webhook",
  watch: "Watch the task", unwatch: "Stop watching", new_thread: "New thread", native_inspect: "Inspect",
  identify_foreground: "Identify thread", repair_model_control: "Repair model control",
};
