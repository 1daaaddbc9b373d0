// AKK dashboard: plain JavaScript, no build step. It signs in with
// POST /v1/ui/session (an HttpOnly cookie; the token is never stored in the
// page) and then calls the same REST routes as any host. Actions come only
// from each row's available_actions.
import { ago, actionLabel, api, byName, call, decisionLabel, displayState, html, onUnauthorized, problemText, render, stateLabel } from "./lib.js";
import { store, subscribe, refresh as refreshStore, stop as stopStore, view, onOpenItem, actedOn } from "./store.js";
import { Queue, itemID } from "./queue.js";
import { Overview } from "./overview.js";

const $main = document.getElementById("main");
const $nav = document.getElementById("nav");
const $who = document.getElementById("who");
const $banner = document.getElementById("banner");
const $signout = document.getElementById("signout");

let session = null;
// A refusal shown on a card survives the re-render that shows the new state.
const notes = new Map();
// What a native control last answered, per card (shown until the next answer).
const infos = new Map();
// Forms a person may be filling in (a task, a questionnaire step) are kept
// across re-renders while they stay the same, so a live update never drops
// what was typed or checked.
let kept = new Map();
let keeping = new Map();
// sticky nodes outlive a render that does not show them (a box whose
// action is not offered for a moment comes back as it was, open or not).
const sticky = new Map();
function keep(key, build, stays = false) {
  let node = kept.get(key) || (stays ? sticky.get(key) : undefined);
  if (!node) node = build();
  keeping.set(key, node);
  if (stays) sticky.set(key, node);
  return node;
}
let events = null;
let refreshTimer = null;
let onEvent = () => {};

// ---- small helpers ---------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

function time(iso) {
  return h("time", { datetime: iso, title: iso ? new Date(iso).toLocaleString() : "" }, ago(iso));
}

// A button that runs fn, shows its error next to it, and disables itself meanwhile.
function actionButton(label, fn, cls) {
  const out = h("span", { class: "sr-only", role: "status" });
  const b = h("button", { type: "button", class: cls }, label);
  b.addEventListener("click", async () => {
    b.disabled = true;
    out.className = "sr-only";
    try {
      await fn();
    } catch (err) {
      out.textContent = problemText(err);
      out.className = "error";
    } finally {
      b.disabled = false;
    }
  });
  return h("span", {}, b, out);
}

// ---- session ---------------------------------------------------------------

function signedOut() {
  session = null;
  stopStore();
  if (events) { events.close(); events = null; }
  $nav.hidden = true;
  $signout.hidden = true;
  $who.textContent = "";
  route();
}

async function loadSession() {
  try {
    session = await api("GET", "/v1/ui/session");
  } catch {
    session = null;
  }
  $nav.hidden = !session;
  $signout.hidden = !session;
  for (const el of $nav.querySelectorAll("[data-operator]")) el.hidden = !(session && session.role === "operator");
  $who.textContent = session ? (session.role === "operator" ? "operator" : `host ${session.host_name || session.host_id}`) : "";
  if (session) {
    connectEvents();
    refreshStore(true);
  }
}

// The count of what waits, in the navigation and the tab title.
const $count = document.getElementById("needs-count");
subscribe((s) => {
  const n = s.items.length;
  $count.textContent = n ? String(n) : "";
  $count.hidden = !n;
  document.title = n ? `(${n}) AKK` : "AKK";
});
onOpenItem((key) => { location.hash = `#/needs/${itemID(key)}`; });

onUnauthorized(() => signedOut());

$signout.addEventListener("click", async () => {
  try { await api("DELETE", "/v1/ui/session"); } catch { /* already gone */ }
  signedOut();
});

function viewSignIn() {
  const err = h("p", { class: "error", role: "alert", hidden: true });
  const input = h("input", { type: "password", id: "token", name: "token", autocomplete: "off", required: true });
  const form = h("form", { class: "signin" },
    h("h1", {}, "Sign in to AKK"),
    h("p", { class: "muted" }, "Paste the operator token (from the daemon's state directory) or a host token. It is exchanged for a session cookie and not kept by this page."),
    h("label", { for: "token" }, "Token"), input, err,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Sign in")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    err.hidden = true;
    try {
      await api("POST", "/v1/ui/session", { token: input.value.trim() });
      input.value = "";
      await loadSession();
      location.hash = "#/";
      route();
    } catch (e) {
      err.textContent = e.status === 401 ? "That token is not valid." : problemText(e);
      err.hidden = false;
    }
  });
  $main.replaceChildren(form);
  input.focus();
}

// ---- live events -----------------------------------------------------------

const eventTypes = ["turn.accepted", "turn.approval_answered", "turn.approval_auto_approved", "turn.approval_required", "turn.cancel_requested",
  "turn.cancelled", "turn.closed", "turn.completed", "turn.delivery_uncertain", "turn.dispatched", "turn.failed",
  "turn.interaction_answered", "turn.interaction_answering", "turn.interaction_required", "turn.progress",
  "turn.renewed", "turn.response_uncertain", "turn.stalled", "turn.waiting_for_host", "turn.working",
  "watch.activity_seen", "watch.approval_cleared", "watch.approval_observed", "watch.completed", "watch.failed",
  "watch.idle_seen", "watch.invalidated", "watch.renewed", "watch.started", "watch.timed_out", "watch.unwatched",
  "host.approval_policy_changed", "host.created", "host.ping", "host.removed", "host.secret_rotated", "host.token_rotated"];

function connectEvents() {
  if (events) return;
  // EventSource resumes by itself with Last-Event-ID after a drop.
  events = new EventSource("/v1/events");
  events.addEventListener("open", () => { $banner.hidden = true; });
  events.addEventListener("error", () => {
    $banner.textContent = "The live event stream dropped; reconnecting…";
    $banner.hidden = false;
  });
  for (const t of eventTypes) {
    events.addEventListener(t, (e) => {
      let env = null;
      try { env = JSON.parse(e.data); } catch { /* ignore */ }
      onEvent(t, env);
      refreshStore();
    });
  }
}

// ---- agents ------------------------------------------------------------------

function badge(state) {
  const [label, icon] = stateLabel[state];
  return h("span", { class: `badge b-${state}` }, h("span", { "aria-hidden": "true" }, icon), label);
}

// viewAgents shows a card per conversation, or only's card (the detail
// view of one conversation, opened from the overview and the queue).
async function viewAgents(only) {
  const gen = routeGen;
  const title = only ? "Agent" : "Agents";
  $main.replaceChildren(h("h1", {}, title), h("p", { class: "muted" }, "Loading…"));
  // One render at a time: a render asked for while one runs runs once more
  // after it, from a fresh read, so the newest state is always drawn and
  // an older view never replaces it. (A newer render used to drop the one
  // running: with events coming faster than a render took, on a busy
  // machine, no render ever drew and a card kept a Close long done.)
  let running = false;
  let again = false;
  const render = async () => {
    if (running) { again = true; return; }
    running = true;
    try {
      do {
        again = false;
        await draw();
      } while (again && current(gen));
    } finally {
      running = false;
    }
  };
  const draw = async () => {
    const fresh = () => current(gen);
    let list;
    try {
      list = await api("GET", "/v1/conversations");
    } catch (e) {
      if (!current(gen)) return;
      $main.replaceChildren(h("h1", {}, title), h("p", { class: "error" }, problemText(e)));
      return;
    }
    if (!fresh()) return;
    keeping = new Map();
    // Agent panes, and backend conversations (a Codex app-server's
    // threads, driven through the daemon, with or without a pane).
    const cards = await Promise.all(list.conversations.filter((c) => (c.terminal || c.backend) && (!only || c.conversation_id === only)).map(card));
    if (!fresh()) return;
    kept = keeping;
    const parts = [h("h1", {}, title)];
    if (cards.length === 0 && only) {
      parts.push(h("p", { class: "muted" }, "This conversation is not listed now (its pane or thread may have gone). ", h("a", { href: "#/agents" }, "All agents")));
    } else if (cards.length === 0) {
      parts.push(h("div", { class: "empty" }, h("p", {}, "No agent panes or backend conversations found — start Claude Code or Codex in tmux."),
        h("p", { class: "muted" }, "AKK lists the panes of the tmux servers it watches; it never starts an agent.")));
    } else {
      parts.push(h("div", { class: "grid" }, cards));
    }
    if (list.unavailable_managed_turns && list.unavailable_managed_turns.length) {
      parts.push(h("h2", {}, "Turns whose pane is gone"),
        h("ul", {}, list.unavailable_managed_turns.map((u) =>
          h("li", {}, h("a", { href: `#/turn/${u.turn_id}` }, u.turn_id), ` ${u.state} `, actionButtons(u.available_actions, rerender)))));
    }
    if (!fresh()) return;
    const active = document.activeElement;
    $main.replaceChildren(...parts);
    if (active && active !== document.body && $main.contains(active)) active.focus();
  };
  let pending = null;
  const rerender = () => {
    if (pending) return;
    pending = setTimeout(async () => { pending = null; if (current(gen)) await render(); }, 150);
  };
  onEvent = () => rerender();
  await render();
  // Panes a person drives change without events; look again now and then.
  refreshTimer = setInterval(rerender, 10000);
}

async function card(c) {
  const state = displayState(c);
  const t = c.terminal;
  const b = c.backend;
  const title = c.title || c.project.split("/").pop() || c.project;
  const id = `card-${c.conversation_id}`;
  const cur = c.managed && c.managed.current_turn;
  const recent = c.managed && c.managed.recent_turn;
  const facts = h("dl", { class: "facts" },
    h("dt", {}, "Agent"), h("dd", {}, `${c.agent.kind} ${c.agent.version} · ${c.agent.profile}`),
    h("dt", {}, "Project"), h("dd", {}, c.project),
    t ? [h("dt", {}, "Identity"), h("dd", {}, t.native_identity_state)] : null,
    b ? [h("dt", {}, "Through"), h("dd", {}, t ? "Codex app-server (the pane shows this thread)" : "Codex app-server (no pane)"),
      h("dt", {}, "Thread"), h("dd", { class: "secret" }, b.native_thread_id)] : null,
    cur ? [h("dt", {}, "Turn"), h("dd", {}, h("a", { href: `#/turn/${cur.turn_id}` }, cur.turn_id), ` · ${cur.state}`)] : null,
    !cur && recent ? [h("dt", {}, "Last turn"), h("dd", {}, h("a", { href: `#/turn/${recent.turn_id}` }, recent.turn_id), ` · ${recent.state}`)] : null,
    c.managed && c.managed.held_by_other ? [h("dt", {}, "Held"), h("dd", {}, "by another controller's Turn")] : null);
  const body = [];
  if (notes.has(c.conversation_id)) {
    body.push(h("p", { class: "error", role: "alert" }, notes.get(c.conversation_id)));
    notes.delete(c.conversation_id);
  }
  const shown = cur || recent;
  if (shown) {
    try {
      const st = await api("GET", `/v1/turns/${shown.turn_id}`);
      if (cur && st.progress && (st.progress.latest_text || st.progress.actions.length)) {
        body.push(h("div", { class: "progress", "aria-label": "Progress" },
          st.progress.actions.map((a) => `[${a.type} ${a.status}] `), st.progress.latest_text));
      }
      if (!cur && st.result && st.result.final_message) {
        body.push(h("div", { class: "final", "aria-label": "Final message" }, st.result.final_message));
      }
    } catch { /* the turn may have gone */ }
  }
  if (c.warnings && c.warnings.length) body.push(h("ul", { class: "warn" }, c.warnings.map((w) => h("li", {}, w))));
  const refresh = () => onEvent("refresh");
  if (c.approval) body.push(approvalBox(c, refresh));
  const ri = byName(c.available_actions, "respond_interaction")[0];
  if (ri) {
    const key = `q:${ri.body.interaction_id}`;
    const node = kept.get(key) || await interactionBox(ri, refresh);
    // A step that could not be read (it was being answered, or it just
    // left) is read again on the next render; only a form is kept.
    if (!node.dataset.transient) keeping.set(key, node);
    body.push(node);
  }
  else if (state === "awaiting_interaction" && cur) body.push(h("p", { class: "muted" }, t ? "A question is on screen; answer it in the terminal." : "A question waits; answer it in a Codex client of this thread."));
  // A pane's send follows the pane; a backend row's (merged with its pane
  // or not) is its thread's own.
  const send = byName(c.available_actions, "send").find((a) => b ? a.body.conversation_id : a.target !== "session_exact");
  // A backend thread's model and effort are chosen with its next task.
  const mo = b ? byName(c.available_actions, "model_options")[0] : undefined;
  if (send) body.push(keep(`send:${c.conversation_id}:${send.body.terminal_id || send.body.conversation_id}`, () => sendForm(send, c, refresh, mo)));
  const th = byName(c.available_actions, "threads")[0];
  const resume = byName(c.available_actions, "resume_thread")[0];
  // One box per card, kept open across renders: whether Resume is offered
  // is read from the newest render when the list is read.
  resumeNow.set(c.conversation_id, resume);
  if (th) body.push(keep(`threads:${c.conversation_id}`, () => threadsBox(th, c, refresh), true));
  const po = byName(c.available_actions, "permission_options")[0];
  const sp = byName(c.available_actions, "set_permissions")[0];
  if (po && sp) body.push(keep(`perm:${c.conversation_id}`, () => permissionsBox(po, sp, c, refresh), true));
  if (infos.has(c.conversation_id)) body.push(h("p", { class: "info", role: "status" }, infos.get(c.conversation_id)));
  body.push(actionButtons(c.available_actions, refresh, c));
  return h("article", { class: `card s-${state}`, "aria-labelledby": id, "data-conversation": c.conversation_id, "data-state": state, "data-transport": c.transport },
    h("header", {}, h("h2", { id }, title), badge(state)), facts, body);
}

function sendForm(a, c, refresh, mo) {
  const fid = `send-${c.conversation_id}`;
  const ta = h("textarea", { id: fid, name: "request", rows: 2, placeholder: "A task for this agent" });
  const msg = h("p", { role: "status", class: "sr-only" });
  const models = mo ? modelBox(mo, c) : null;
  const form = h("form", { class: "box", "aria-label": `Send a task to ${c.title || c.project}` },
    h("label", { for: fid }, "Send a task"), ta, models, msg,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Send")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = ta.value.trim();
    if (!text) return;
    const btn = form.querySelector("button");
    btn.disabled = true;
    try {
      const r = await call(a, { request: text, ...(models ? models.choice() : {}) });
      ta.value = "";
      if (models) models.open = false;
      msg.className = r.do_not_retry ? "error" : "ok";
      msg.textContent = r.do_not_retry ? "Delivery is not proven: do not send it again; look at the pane." : `Sent (${r.delivery_path}).`;
      refresh();
    } catch (e) {
      msg.className = "error";
      msg.textContent = problemText(e);
    } finally {
      btn.disabled = false;
    }
  });
  return form;
}

// readingBox is a box that reads when opened and keeps nothing when
// closed: opened again, it shows only what its new read says, never a
// stale choice to click. A read that returns after the box was closed, or
// after a newer opening began its own read, is dropped. show(r) is the
// box's content for the read r; reset() forgets any earlier read.
function readingBox(summary, reading, read, show, reset) {
  const out = h("div", {});
  const box = h("details", { class: "box" }, h("summary", {}, summary), out);
  let gen = 0;
  box.addEventListener("toggle", async () => {
    const mine = ++gen;
    if (reset) reset();
    if (!box.open) { out.replaceChildren(); return; }
    out.replaceChildren(h("p", { class: "muted" }, reading));
    let content;
    try {
      content = show(await read());
    } catch (e) {
      content = h("p", { class: "error" }, problemText(e));
    }
    if (mine === gen && box.open) out.replaceChildren(...[content].flat());
  });
  return box;
}

// modelBox reads a backend thread's model catalogue from its daemon when
// opened and offers its models and efforts for the next task (the daemon
// sets them only with a turn); choice() is what differs from the thread's.
function modelBox(mo, c) {
  const mid = `model-${c.conversation_id}`;
  const eid = `effort-${c.conversation_id}`;
  const model = h("select", { id: mid, name: "model" });
  const effort = h("select", { id: eid, name: "reasoning_effort" });
  let cat = null;
  const fill = () => {
    const m = cat.models.find((x) => x.model === model.value);
    const was = effort.value || cat.effective.reasoning_effort;
    const efforts = m ? m.reasoning_efforts : [];
    effort.replaceChildren(...efforts.map((e) => h("option", { value: e, selected: e === was }, e)));
  };
  model.addEventListener("change", fill);
  const box = readingBox("Model and effort", "Reading the thread's models…", () => call(mo), (r) => {
    const now = r.effective || { model: "", reasoning_effort: "" };
    cat = { models: r.models, effective: now };
    model.replaceChildren(...r.models.map((m) => h("option", { value: m.model, selected: m.model === now.model }, m.label)));
    effort.replaceChildren();
    fill();
    return [h("p", {}, "Now: ", h("strong", { "data-model": now.model, "data-effort": now.reasoning_effort }, `${now.model} · ${now.reasoning_effort}`)),
      h("label", { for: mid }, "Model"), model, h("label", { for: eid }, "Effort"), effort,
      h("p", { class: "muted" }, "Chosen for the next task and the thread's later ones.")];
  }, () => { cat = null; });
  box.choice = () => {
    if (!box.open || !cat) return {};
    const x = {};
    if (model.value && model.value !== cat.effective.model) x.model = model.value;
    if (effort.value && (x.model || effort.value !== cat.effective.reasoning_effort)) x.reasoning_effort = effort.value;
    return x;
  };
  return box;
}

function approvalBox(c, refresh) {
  const ap = c.approval;
  const parts = [h("h3", {}, "Permission prompt")];
  parts.push(h("dl", { class: "facts" },
    h("dt", {}, "Kind"), h("dd", {}, ap.prompt_kind),
    ap.tool ? [h("dt", {}, "Tool"), h("dd", {}, ap.tool)] : null));
  if (ap.command_excerpt) parts.push(h("pre", { "aria-label": "Command" }, ap.command_excerpt));
  if (ap.manual_required) {
    parts.push(h("p", { class: "error" }, `Answer this in the terminal${ap.reason ? `: ${ap.reason}` : "."}`));
  } else {
    const out = h("p", { role: "status" });
    const buttons = byName(c.available_actions, "approve").map((a) => {
      const d = a.body && a.body.decision;
      const b = h("button", { type: "button", class: d === "reject" ? "danger" : "primary" }, decisionLabel[d] || d);
      b.addEventListener("click", async () => {
        b.disabled = true;
        try {
          const r = await call(a);
          out.className = r.do_not_retry ? "error" : "ok";
          out.textContent = r.do_not_retry ? "Not proven: look at the pane; do not answer again." : `${decisionLabel[d] || d}: done.`;
          refresh();
        } catch (e) {
          // The prompt changed or went: say why, then show what is there now.
          notes.set(c.conversation_id, `Not answered: ${problemText(e)}`);
          out.className = "error";
          out.textContent = problemText(e);
          refresh();
        }
      });
      return b;
    });
    parts.push(h("div", { class: "actions" }, buttons), out);
  }
  return h("section", { class: "box", "aria-label": "Permission prompt" }, parts);
}

async function interactionBox(a, refresh) {
  const turnID = a.path.split("/")[3];
  let step;
  try {
    step = await api("GET", `/v1/turns/${turnID}/interaction`);
  } catch (e) {
    const p = e.code === "no_interaction"
      ? h("p", { class: "muted", "data-transient": "1" }, "The question is changing; it shows again in a moment.")
      : h("p", { class: "error", "data-transient": "1" }, problemText(e));
    return p;
  }
  const title = step.kind === "async_question" ? "Question (the agent works on)" : "Question";
  const where = step.step.index === 0 ? ` (${step.step.total} waiting)` : step.step.total > 1 ? ` ${step.step.index} of ${step.step.total}` : "";
  const parts = [h("h3", {}, `${title}${where}`)];
  if (step.manual_required) {
    parts.push(h("p", { class: "error" }, `Answer this in the terminal${step.reason ? `: ${step.reason}` : "."}`));
    return h("section", { class: "box" }, parts);
  }
  const form = h("form", { "aria-label": "Answer the question" });
  for (const q of step.questions) {
    const name = `q-${step.interaction_id}-${q.question_id}`;
    const fs = h("fieldset", { class: "box", "data-question": q.question_id, "data-kind": q.response_kind },
      h("legend", {}, q.header ? `${q.header}: ${q.prompt}` : q.prompt));
    if (q.response_kind === "free_text") {
      fs.append(h("label", { for: name }, "Answer"), h("input", { type: "text", id: name, name, maxlength: step.free_text_limit || 200 }));
    } else {
      const multi = q.response_kind === "multi_select";
      for (const o of q.options) {
        const oid = `${name}-${o.option_id}`;
        fs.append(h("label", { class: "opt", for: oid },
          h("input", { type: multi ? "checkbox" : "radio", id: oid, name, value: o.option_id, "data-free": o.free_text ? "1" : null }),
          h("span", {}, o.label, o.description ? h("span", { class: "muted" }, ` — ${o.description}`) : null)));
        if (o.free_text) fs.append(h("input", { type: "text", "aria-label": `${o.label}: your words`, "data-text-for": oid }));
      }
    }
    form.append(fs);
  }
  // An async question's answer reaches the running turn, or (typed text)
  // waits for the agent's next turn.
  const modes = step.delivery_modes || [];
  if (modes.length > 1) {
    const name = `d-${step.interaction_id}`;
    const labels = { steer_current_turn: "Now, into the running task", queue_next_turn: "Queued for its next task (typed answers)" };
    const fs = h("fieldset", { class: "box", "data-delivery": "1" }, h("legend", {}, "Deliver the answer"));
    modes.forEach((m, i) => {
      const id = `${name}-${m}`;
      fs.append(h("label", { class: "opt", for: id },
        h("input", { type: "radio", id, name, value: m, checked: i === 0 }), h("span", {}, labels[m] || m)));
    });
    form.append(fs);
  }
  const out = h("p", { role: "status" });
  form.append(out, h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Answer")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const answers = [];
    for (const q of step.questions) {
      const name = `q-${step.interaction_id}-${q.question_id}`;
      const ans = { question_id: q.question_id, response_kind: q.response_kind };
      if (q.response_kind === "free_text") {
        ans.text = form.querySelector(`[name="${name}"]`).value;
      } else {
        const picked = [...form.querySelectorAll(`[name="${name}"]:checked`)];
        ans.selected_option_ids = picked.map((p) => p.value);
        for (const p of picked) {
          const t = form.querySelector(`[data-text-for="${p.id}"]`);
          // Empty: the choice opens its own editor step, answered next.
          if (t && t.value !== "") ans.text = t.value;
        }
      }
      answers.push(ans);
    }
    const btn = form.querySelector("button[type=submit]");
    btn.disabled = true;
    try {
      const extra = { answers };
      const mode = form.querySelector(`[name="d-${step.interaction_id}"]:checked`);
      if (mode) extra.delivery_mode = mode.value;
      const r = await call(a, extra);
      out.className = r.do_not_retry ? "error" : "ok";
      out.textContent = r.do_not_retry ? "Not proven: look at the pane; do not answer again." : "Answered.";
      refresh();
    } catch (e) {
      out.className = "error";
      out.textContent = problemText(e);
      btn.disabled = false;
      if (e.code === "offer_expired" || e.code === "prompt_changed") {
        // Read the step again on the next render.
        for (const k of [...kept.keys()]) if (k === `q:${step.interaction_id}`) kept.delete(k);
        refresh();
      }
    }
  });
  parts.push(form);
  return h("section", { class: "box", "aria-label": "Question" }, parts);
}

// threadsBox lists the agent's own conversations in the pane's project
// (read from its records) when opened; read again on every opening. With
// the row's resume_thread action, each other thread has a Resume button
// that sends its complete id.
// resumeNow is each card's resume_thread action in its newest render.
const resumeNow = new Map();

function threadsBox(a, c, refresh) {
  let resume = null;
  const box = readingBox("Threads", "Reading the agent's records…", () => {
    resume = resumeNow.get(c.conversation_id);
    return call(a);
  }, (l) => h("ol", { class: "threads", "aria-label": "Threads" },
    l.threads.length ? l.threads.map((t) => h("li", { "data-thread": t.native_thread_id },
      t.current ? h("strong", {}, "current · ") : null, h("span", {}, t.title), " ",
      h("span", { class: "muted" }, `${t.short_id} · `, time(t.updated_at)),
      resume && !t.current ? [" ", actionButton("Resume", async () => {
        const r = await call(resume, { native_thread_id: t.native_thread_id });
        infos.set(c.conversation_id, r.outcome === "done" ? `Resumed thread ${r.native_thread_id} (session ${r.session_id}).` :
          `Resume ${r.outcome}: ${r.detail || ""} Look at the pane before anything else.`);
        box.open = false;
        refresh();
      })] : null)) : [h("li", { class: "muted" }, "No threads in this project yet.")]));
  return box;
}

// permissionsBox reads the pane's permission modes when opened and sets
// the one chosen (the mode ids of the read, never a label).
function permissionsBox(get, set, c, refresh) {
  const sid = `perm-${c.conversation_id}`;
  const select = h("select", { id: sid, name: "mode" });
  const box = readingBox("Permissions", "Reading the agent's permission mode…", () => call(get), (r) => {
    select.replaceChildren(...r.modes.map((m) => h("option", { value: m.mode, selected: m.mode === r.current }, m.label)));
    return [h("p", {}, "Now: ", h("strong", { "data-mode": r.current }, r.current)),
      h("label", { for: sid }, "Mode"), select,
      actionButton("Apply", async () => {
        const x = await call(set, { mode: select.value });
        infos.set(c.conversation_id, x.outcome === "done" ? `Permission mode: ${x.current}${x.already_effective ? " (already)" : ""}.` :
          `Permissions ${x.outcome}: ${x.detail || ""} Look at the pane before anything else.`);
        box.open = false;
        refresh();
      })];
  });
  return box;
}

// What a native control answered, said on the card.
function nativeInfo(a, r) {
  if (r.outcome && r.outcome !== "done") return `${actionLabel[a.action]}: ${r.outcome}. ${r.detail || ""} Look at the pane before anything else.`;
  switch (a.action) {
    case "new_thread": return `New thread ${r.native_thread_id || ""} (session ${r.session_id}, ${r.binding}).`;
    case "native_inspect": return `Status: thread ${r.status.native_thread_id}, ${r.status.agent_version}, ${r.status.model}${r.identity_matches_record ? "" : " (not the thread the records prove)"}.`;
    case "identify_foreground": return `Foreground thread ${r.native_thread_id} (a diagnostic until ${time(r.expires_at)}).`;
    default: return "";
  }
}

// Body-less and id-only actions, as buttons; send, respond, approve and
// respond_interaction have their own forms; status is a link.
function actionButtons(actions, refresh, c) {
  const out = [];
  for (const a of actions || []) {
    const label = actionLabel[a.action];
    if (!label) continue;
    const what = a.path.split("/")[3] || "";
    const text = a.action === "retry_callback" ? `${label} ${a.body.notification_id.slice(0, 10)}…` :
      (a.action === "unwatch" ? `${label} ${what.slice(0, 12)}` : label);
    out.push(actionButton(text, async () => {
      const r = await call(a);
      const info = c && r ? nativeInfo(a, r) : "";
      if (info) infos.set(c.conversation_id, info);
      refresh();
    }, a.action === "cancel" || a.action === "close" ? "danger" : ""));
  }
  return out.length ? h("div", { class: "actions" }, out) : null;
}

// ---- a Turn ----------------------------------------------------------------

async function viewTurn(id) {
  const gen = routeGen;
  const timeline = h("ol", { class: "timeline", "aria-label": "Events" });
  const top = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  $main.replaceChildren(h("h1", {}, "Turn ", h("span", { class: "secret" }, id)), top, h("h2", {}, "Timeline"), timeline);
  const render = async () => {
    let st, list;
    try {
      [st, list] = await Promise.all([api("GET", `/v1/turns/${id}`), api("GET", "/v1/conversations")]);
    } catch (e) {
      top.replaceChildren(h("p", { class: "error" }, problemText(e)));
      return;
    }
    const acts = [];
    for (const c of list.conversations) for (const a of c.available_actions) if (a.path.includes(id)) acts.push(a);
    for (const u of list.unavailable_managed_turns || []) if (u.turn_id === id) acts.push(...u.available_actions);
    if (!current(gen)) return;
    const parts = [h("dl", { class: "facts" },
      h("dt", {}, "State"), h("dd", { "data-turn-state": st.state }, st.state),
      h("dt", {}, "Path"), h("dd", {}, st.delivery_path),
      h("dt", {}, "Terminal"), h("dd", {}, st.terminal_id),
      h("dt", {}, "Created"), h("dd", {}, time(st.created_at)),
      st.ended_at ? [h("dt", {}, "Ended"), h("dd", {}, time(st.ended_at))] : null,
      st.watch_id ? [h("dt", {}, "Watch"), h("dd", {}, st.watch_id)] : null)];
    const p = st.progress;
    parts.push(h("h2", {}, "Progress"), h("div", { class: "progress" },
      p.state === "ok" ? [p.actions.map((a) => `[${a.type} ${a.status}] `), p.latest_text] : p.state.replaceAll("_", " ")));
    if (st.result && (st.result.final_message || st.result.reason)) {
      parts.push(h("h2", {}, "Result"), h("div", { class: "final", "aria-label": "Final message" }, st.result.final_message || st.result.reason));
    }
    if (st.screen) parts.push(h("h2", {}, "Screen (redacted)"), h("pre", {}, st.screen));
    const respond = byName(acts, "respond")[0];
    if (respond) parts.push(respondForm(respond, render));
    parts.push(actionButtons(acts, render));
    parts.push(h("h2", {}, "Callbacks"), h("p", {}, `${st.callbacks.delivered} delivered, ${st.callbacks.pending} pending, ${st.callbacks.failed} failed`),
      h("div", { class: "table-wrap" }, h("table", {},
        h("thead", {}, h("tr", {}, h("th", {}, "Type"), h("th", {}, "State"), h("th", {}, "Attempts"), h("th", {}, "Last error"))),
        h("tbody", {}, st.callbacks.notifications.map((n) =>
          h("tr", {}, h("td", {}, n.type), h("td", {}, n.state), h("td", {}, n.attempts), h("td", {}, n.last_error || "")))))));
    top.replaceChildren(...parts);
  };
  await render();
  if (!current(gen)) return;
  // The Turn's own stream replays its events from the first, then goes live.
  const es = new EventSource(`/v1/turns/${id}/events`);
  for (const t of eventTypes.filter((x) => x.startsWith("turn."))) {
    es.addEventListener(t, (e) => {
      let env = null;
      try { env = JSON.parse(e.data); } catch { /* ignore */ }
      timeline.append(h("li", {}, h("strong", {}, t), " ", env && env.timestamp ? time(env.timestamp) : ""));
      render();
    });
  }
  cleanup = () => es.close();
}

function respondForm(a, refresh) {
  const ta = h("textarea", { id: "respond", rows: 2 });
  const out = h("p", { role: "status" });
  const form = h("form", { class: "box" }, h("label", { for: "respond" }, "Respond inside this Turn"), ta, out,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Respond")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      await call(a, { request: ta.value.trim() });
      ta.value = "";
      refresh();
    } catch (e) {
      out.className = "error";
      out.textContent = problemText(e);
    }
  });
  return form;
}

// ---- hosts and the outbox (operator) ----------------------------------------

async function viewHosts() {
  const gen = routeGen;
  // Secrets just issued stay on the page across the re-renders that events
  // cause, until the person leaves the view: they are shown only once.
  let shown = null;
  const reveal = () => {
    const el = document.getElementById("reveal");
    if (el && shown) el.replaceChildren(secrets(shown.title, shown.values));
  };
  const render = async () => {
    let hosts, outbox;
    try {
      [hosts, outbox] = await Promise.all([api("GET", "/v1/hosts"), api("GET", "/v1/notifications?limit=50")]);
      if (!current(gen)) return;
    } catch (e) {
      if (!current(gen)) return;
      $main.replaceChildren(h("h1", {}, "Hosts"), h("p", { class: "error" }, problemText(e)));
      return;
    }
    const revealBox = h("div", { "aria-live": "polite", id: "reveal" });
    const name = h("input", { type: "text", id: "host-name", required: true, maxlength: 100 });
    const url = h("input", { type: "url", id: "host-url", required: true, placeholder: "https://…" });
    const headers = h("textarea", { id: "host-headers", rows: 2, placeholder: "Authorization: Bearer …", autocomplete: "off", spellcheck: "false" });
    const events = h("input", { type: "text", id: "host-events", placeholder: "all (or: turn.completed turn.failed)" });
    const err = h("p", { class: "error", role: "alert", hidden: true });
    const form = h("form", { class: "box", "aria-label": "Register a host" }, h("h2", {}, "Register a host"),
      h("label", { for: "host-name" }, "Name"), name, h("label", { for: "host-url" }, "Webhook URL"), url,
      h("label", { for: "host-headers" }, "Delivery headers (one per line, as Header: value; never shown again)"), headers,
      h("label", { for: "host-events" }, "Event types (space or comma separated; empty: all)"), events, err,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Register")));
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      err.hidden = true;
      try {
        const body = { name: name.value.trim(), webhook_url: url.value.trim() };
        const hs = {};
        for (const line of headers.value.split("\n")) {
          if (!line.trim()) continue;
          const i = line.indexOf(":");
          if (i <= 0) throw new Error(`a header line needs "Name: value"`);
          hs[line.slice(0, i).trim()] = line.slice(i + 1).trim();
        }
        if (Object.keys(hs).length) body.webhook_headers = hs;
        const evs = events.value.split(/[\s,]+/).filter(Boolean);
        if (evs.length) body.webhook_events = evs;
        const c = await api("POST", "/v1/hosts", body);
        shown = { title: `Host ${c.name} registered`, values: { Token: c.token, "Webhook secret": c.webhook_secret } };
        await render();
      } catch (e) {
        err.textContent = problemText(e);
        err.hidden = false;
      }
    });
    const rows = hosts.hosts.map((x) => h("tr", { "data-host": x.host_id },
      h("td", {}, x.name), h("td", {}, x.webhook_url), h("td", {}, (x.webhook_header_names || []).join(", ")),
      h("td", {}, (x.webhook_events || []).length ? x.webhook_events.join(", ") : "all"), h("td", {}, time(x.created_at)),
      h("td", {}, h("div", { class: "actions" },
        actionButton("Ping", async () => { await api("POST", `/v1/hosts/${x.host_id}/ping`); await render(); }),
        actionButton("Rotate secret", async () => {
          const r = await api("POST", `/v1/hosts/${x.host_id}/rotate-secret`);
          shown = { title: `New secret for ${x.name}`, values: { "Webhook secret": r.webhook_secret } };
          await render();
        })))));
    const nrows = outbox.notifications.map((n) => h("tr", { "data-notification": n.notification_id, "data-state": n.state },
      h("td", {}, n.type), h("td", {}, n.state), h("td", {}, n.attempts), h("td", {}, n.last_status_code || ""),
      h("td", {}, n.last_error || ""), h("td", {}, time(n.created_at)),
      h("td", {}, n.state === "failed" ? actionButton("Retry", async () => { await api("POST", `/v1/notifications/${n.notification_id}/retry`); await render(); }) : "")));
    if (!current(gen)) return;
    $main.replaceChildren(h("h1", {}, "Hosts"), revealBox, form,
      h("div", { class: "table-wrap" }, h("table", { "aria-label": "Hosts" },
        h("thead", {}, h("tr", {}, h("th", {}, "Name"), h("th", {}, "Webhook URL"), h("th", {}, "Headers"), h("th", {}, "Events"), h("th", {}, "Created"), h("th", {}, "Actions"))),
        h("tbody", {}, rows))),
      h("h2", {}, "Webhook outbox"),
      h("div", { class: "actions" }, actionButton("Refresh", render)),
      h("div", { class: "table-wrap" }, h("table", { "aria-label": "Webhook outbox" },
        h("thead", {}, h("tr", {}, ["Type", "State", "Attempts", "Status", "Last error", "Created", ""].map((x) => h("th", {}, x)))),
        h("tbody", {}, nrows))));
    reveal();
  };
  onEvent = (t) => { if (t.startsWith("host.")) render(); };
  await render();
}

function secrets(title, values) {
  return h("section", { class: "box", "aria-label": title }, h("h2", {}, title),
    h("p", { class: "muted" }, "Shown only now: copy them to the host's configuration."),
    Object.entries(values).map(([k, v]) => h("div", {},
      h("label", {}, k), h("code", { class: "secret", "data-secret": k }, v), " ",
      actionButton(`Copy ${k.toLowerCase()}`, async () => { await navigator.clipboard.writeText(v); }))));
}

// ---- doctor ------------------------------------------------------------------

async function viewDoctor() {
  const gen = routeGen;
  let d;
  try {
    d = await api("GET", "/v1/doctor");
    if (!current(gen)) return;
  } catch (e) {
    if (!current(gen)) return;
    $main.replaceChildren(h("h1", {}, "Doctor"), h("p", { class: "error" }, problemText(e)));
    return;
  }
  $main.replaceChildren(h("h1", {}, "Doctor"),
    h("p", {}, h("strong", { "data-readiness": d.status }, d.status.replaceAll("_", " "))),
    d.reasons.length ? h("ul", { class: "warn" }, d.reasons.map((r) => h("li", {}, r))) : h("p", { class: "ok" }, "Nothing to fix."),
    h("h2", {}, "tmux"), h("p", {}, d.tmux.found ? `tmux ${d.tmux.version || ""}` : `not found${d.tmux.problem ? `: ${d.tmux.problem}` : ""}`),
    h("div", { class: "table-wrap" }, h("table", { "aria-label": "tmux servers" },
      h("thead", {}, h("tr", {}, h("th", {}, "Socket"), h("th", {}, "Panes"), h("th", {}, "Problem"))),
      h("tbody", {}, d.tmux_servers.map((s) => h("tr", {}, h("td", {}, s.socket), h("td", {}, s.panes), h("td", {}, s.problem || "")))))),
    h("h2", {}, "Agents in panes"),
    h("div", { class: "table-wrap" }, h("table", { "aria-label": "Agents" },
      h("thead", {}, h("tr", {}, h("th", {}, "Agent"), h("th", {}, "Version"), h("th", {}, "Profile"), h("th", {}, "Panes"))),
      h("tbody", {}, d.agents.map((a) => h("tr", {}, h("td", {}, a.kind), h("td", {}, a.version),
        h("td", {}, a.profiled ? a.profile : "no profile"), h("td", {}, a.panes)))))),
    h("h2", {}, "Store"), h("p", {}, d.store.writable ? "writable" : `not writable: ${d.store.problem || ""}`));
}

// ---- router ------------------------------------------------------------------

let cleanup = () => {};
// Each route bumps the generation; a view's late render of an older route
// never replaces the page of a newer one.
let routeGen = 0;
const current = (gen) => gen === routeGen;

// mount shows a Preact view in the page until the next route.
function mount(vnode) {
  const root = document.createElement("div");
  $main.replaceChildren(root);
  render(vnode, root);
  cleanup = () => render(null, root);
}

async function route() {
  routeGen++;
  const gen = routeGen;
  cleanup();
  cleanup = () => {};
  onEvent = () => {};
  if (refreshTimer) { clearInterval(refreshTimer); refreshTimer = null; }
  if (!session) { view.name = "signin"; viewSignIn(); return; }
  let hash = location.hash || "#/";
  if (hash === "#/" || hash === "#") {
    // The default: the queue when anything waits, else the agents.
    if (!store.loaded) {
      await new Promise((res) => { const un = subscribe((s) => { if (s.loaded || s.error) { un(); res(); } }); refreshStore(true); });
      if (!current(gen)) return;
    }
    hash = store.items.length ? "#/needs" : "#/agents";
  }
  const base = hash.match(/^#\/[a-z]*/)[0];
  for (const a of $nav.querySelectorAll("a")) {
    const href = a.getAttribute("href");
    if (href === base || (base === "#/turn" && href === "#/agents") || (base === "#/conversation" && href === "#/overview")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  view.name = base.slice(2);
  let m;
  if ((m = hash.match(/^#\/turn\/([A-Za-z0-9_]+)$/))) await viewTurn(m[1]);
  else if ((m = hash.match(/^#\/needs(?:\/(item-[a-z0-9]+))?$/))) mount(html`<${Queue} focus=${m[1]} />`);
  else if (hash === "#/overview") mount(html`<${Overview} />`);
  else if ((m = hash.match(/^#\/conversation\/([A-Za-z0-9_.:-]+)$/))) await viewAgents(m[1]);
  else if (hash === "#/hosts") await viewHosts();
  else if (hash === "#/doctor") await viewDoctor();
  else { view.name = "agents"; await viewAgents(); }
}

window.addEventListener("hashchange", route);
// Panes a person drives change without events: the queue looks again now and then.
setInterval(() => { if (session) refreshStore(); }, 10000);
// Relative times stay true.
setInterval(() => { for (const t of document.querySelectorAll("time[datetime]:not([data-since])")) t.textContent = ago(t.getAttribute("datetime")); }, 30000);

await loadSession();
route();
// The shell is kept by a service worker, so the page opens from a phone's home screen.
if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => { /* not a secure context */ });
