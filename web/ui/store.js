// The page's one reading of what waits for a person: the conversation list,
// read again on every event (at most every 150 ms) and every 10 s, and the
// "Needs you" queue derived from it. Every view reads it; the navigation's
// count, the tab title and the notifications follow it.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, agentName, byName, displayState } from "./lib.js";

const subs = new Set();
// list: the newest GET /v1/conversations; items: the queue, oldest first;
// loaded: a read has answered; error: the newest read's failure.
// since: per conversation id, the state it shows and since when.
// rev counts the updates.
export const store = { list: null, items: [], loaded: false, error: null, since: new Map(), rev: 0 };

export function subscribe(fn) {
  subs.add(fn);
  return () => subs.delete(fn);
}

// useStore re-renders its component on every update.
export function useStore() {
  const [, set] = useState(0);
  useEffect(() => subscribe(() => set((n) => n + 1)), []);
  return store;
}

// useMeasure times, in the page, a view's render of each update: from the
// update's arrival (the "akk-update" mark) to the committed DOM, as the
// measure "akk-render:<name>" (the newest only). Renders of the view's own
// state are not updates and are not timed.
export function useMeasure(name) {
  const seenRev = useRef(-1);
  useLayoutEffect(() => {
    if (store.rev === seenRev.current) return;
    seenRev.current = store.rev;
    try {
      performance.clearMeasures(`akk-render:${name}`);
      performance.measure(`akk-render:${name}`, "akk-update");
    } catch { /* no update yet */ }
  });
}

function publish() {
  store.rev++;
  // What the views measure their update from (performance.measure); one
  // mark at a time, so a page left open for days does not pile them up.
  performance.clearMarks("akk-update");
  performance.mark("akk-update");
  for (const fn of [...subs]) fn(store);
}

// ---- when each item was first seen ------------------------------------------

// When each item was first seen by this tab (the API says when a Turn last
// changed, not when its wait began).
const seenKey = "akk.seen";
let seen = {};
try { seen = JSON.parse(sessionStorage.getItem(seenKey) || "{}"); } catch { seen = {}; }
function firstSeen(key, now) {
  if (!seen[key] || !seen[key].at) seen[key] = { at: now };
  return seen[key].at;
}
// forgetSeen drops what this tab kept of the queue (its items' keys name
// Turns and prompts): a signed-out page keeps nothing.
export function forgetSeen() {
  seen = {};
  try { sessionStorage.removeItem(seenKey); } catch { /* private mode */ }
}

// keepSeen saves the times, each kept while its item is in the queue and
// a while after (an item that leaves for a moment keeps its age).
function keepSeen(keys) {
  const now = Date.now();
  const live = new Set(keys);
  for (const [k, v] of Object.entries(seen)) {
    if (live.has(k)) seen[k] = { ...v, last: now };
    else if (!v.last || now - v.last > 600_000) delete seen[k];
  }
  try { sessionStorage.setItem(seenKey, JSON.stringify(seen)); } catch { /* private mode */ }
}

// ---- the queue ----------------------------------------------------------------

const recoverable = new Set(["stalled", "delivery_uncertain", "response_uncertain"]);

// items lists everything in a conversation list that needs a person.
export function deriveItems(list) {
  const out = [];
  for (const c of list.conversations || []) {
    if (c.node_state === "unreachable") continue;
    const cur = c.managed && c.managed.current_turn;
    const base = { conversation: c, cid: c.conversation_id, turnID: cur && cur.turn_id, agent: agentName(c) };
    // A key names what waits, for the notifications: one per Turn's prompt
    // or question (so a prompt read as unreadable for a moment and then as
    // answerable is one thing), else per pane and command. rkey names what
    // is drawn: a new prompt is a new form.
    const ap = c.approval;
    if (ap) {
      const key = base.turnID ? `a:${base.turnID}` : `a:${c.conversation_id}:${ap.tool || ""}:${ap.command_excerpt || ""}`;
      const rkey = `${key}|${ap.manual_required}|${ap.prompt_kind}|${ap.tool || ""}|${ap.command_excerpt || ""}`;
      if (ap.manual_required) {
        out.push({ ...base, kind: "blocked", key, rkey, what: "A permission prompt to answer in the terminal", reason: ap.reason });
      } else {
        const what = ap.command_excerpt ? `Run: ${ap.command_excerpt.split("\n")[0].slice(0, 120)}` : `Permission: ${ap.tool || ap.prompt_kind}`;
        out.push({ ...base, kind: "approval", key, rkey, what, approval: ap, actions: byName(c.available_actions, "approve") });
      }
    }
    const ri = byName(c.available_actions, "respond_interaction")[0];
    if (ri) {
      const turnID = ri.path.split("/")[3];
      out.push({ ...base, kind: "question", key: `q:${turnID}`, rkey: `q:${ri.body.interaction_id}`, turnID,
        what: "A question to answer", action: ri });
    } else if (displayState(c) === "awaiting_interaction") {
      // A Turn's step that cannot be read now, or a question in a pane AKK does not drive.
      const key = base.turnID ? `q:${base.turnID}` : `q:${c.conversation_id}`;
      out.push({ ...base, kind: "blocked", key, rkey: `${key}|blocked`, what: "A question to answer",
        reason: base.turnID ? "the step cannot be read now; it shows here again when it can, or answer it in the terminal" :
          c.terminal ? "the pane shows a question outside a Turn of AKK's" : "answer it in a Codex client of this thread" });
    }
    if (c.terminal && c.terminal.screen_state === "startup_dialog") {
      const q = c.terminal.dialog_question;
      out.push({ ...base, kind: "blocked", key: `d:${c.conversation_id}`, rkey: `d:${c.conversation_id}`,
        what: q ? `The agent asks: “${q}”` : "A start-up dialog waits in the pane",
        reason: "AKK never answers a start-up dialog" });
    }
    if (cur && cur.state === "waiting_for_host") {
      out.push({ ...base, kind: "waiting", key: `w:${cur.turn_id}`, rkey: `w:${cur.turn_id}`, what: "Waits for your words", actions: turnActions(c.available_actions, cur.turn_id) });
    }
    if (cur && recoverable.has(cur.state)) {
      out.push({ ...base, kind: "uncertain", key: `u:${cur.turn_id}:${cur.state}`, rkey: `u:${cur.turn_id}:${cur.state}`, state: cur.state,
        what: cur.state === "stalled" ? "The task stalled" : "Delivery is not proven", actions: turnActions(c.available_actions, cur.turn_id) });
    }
  }
  for (const u of list.unavailable_managed_turns || []) {
    if (!(u.available_actions || []).some((a) => a.action !== "status")) continue;
    out.push({ kind: "gone", key: `g:${u.turn_id}:${u.state}`, rkey: `g:${u.turn_id}:${u.state}`, turnID: u.turn_id, state: u.state, agent: "A Turn whose pane is gone",
      what: `The Turn is ${u.state.replaceAll("_", " ")} and its pane is gone`, actions: u.available_actions });
  }
  return out;
}

function turnActions(actions, turnID) {
  return (actions || []).filter((a) => a.path.split("/")[3] === turnID && a.action !== "status");
}

// ---- reading ------------------------------------------------------------------

let running = false;
let again = false;
// The steps of the questions in the queue, by interaction id, and the
// statuses of the items' Turns, by item key.
const steps = new Map();
const statuses = new Map();
let pending = null;

// refresh reads the list again soon (reads asked for meanwhile are one).
export function refresh(now) {
  if (now) { read(); return; }
  if (pending) return;
  pending = setTimeout(() => { pending = null; read(); }, 150);
}

// Drafts: what a person typed in a form and has not sent, by the form's
// key, kept in this page (not the browser) while the form comes and goes:
// a card built again by a list read, another view and back.
export const drafts = new Map();

let generation = 0;
// stop forgets everything (signed out).
export function stop() {
  generation++;
  forgetSeen();
  // Signing out removed this browser's push subscription on the daemon
  // (the session made it); the next sign-in subscribes again.
  localStorage.removeItem(pushKey);
  drafts.clear();
  store.list = null; store.items = []; store.loaded = false; store.error = null; store.since = new Map();
  known = null;
  steps.clear();
  statuses.clear();
  publish();
}

async function read() {
  if (running) { again = true; return; }
  running = true;
  try {
    do {
      again = false;
      await readOnce();
    } while (again);
  } finally {
    running = false;
  }
}

async function readOnce() {
  const gen = generation;
  let list;
  try {
    list = await api("GET", "/v1/conversations");
  } catch (e) {
    if (gen !== generation) return;
    store.error = e;
    publish();
    return;
  }
  const items = deriveItems(list);
  // A Turn's own status says when it last changed (an item's age, at
  // first sight) and what the evidence is: read once per item, not on
  // every update.
  await Promise.all(items.filter((i) => i.turnID && !statuses.has(i.key)).map(async (i) => {
    try { statuses.set(i.key, await api("GET", `/v1/turns/${i.turnID}`)); } catch { /* it may have gone */ }
  }));
  for (const k of statuses.keys()) if (!items.some((i) => i.key === k)) statuses.delete(k);
  // A question's item names what it asks (its step, read once per step).
  await Promise.all(items.filter((i) => i.kind === "question").map(async (i) => {
    const iid = i.action.body.interaction_id;
    let step = steps.get(iid);
    if (!step) {
      try { step = await api("GET", `/v1/turns/${i.turnID}/interaction`); } catch { return; }
      if (step.interaction_id !== iid) return;
      steps.set(iid, step);
    }
    i.step = step;
    const q = step.questions && step.questions[0];
    if (q) i.what = q.header ? `${q.header}: ${q.prompt}` : q.prompt;
  }));
  for (const k of steps.keys()) if (!items.some((i) => i.kind === "question" && i.action.body.interaction_id === k)) steps.delete(k);
  if (gen !== generation) return;
  const now = new Date().toISOString();
  for (const i of items) {
    const st = i.turnID && statuses.get(i.key);
    i.status = st || null;
    // When it began to wait, as akkd says: the Turn's (the row's, fresh at
    // each read; else its status's), or a prompt's in a pane no Turn holds
    // (when akkd first saw it); else from when this tab first saw it.
    const cur = i.conversation.managed && i.conversation.managed.current_turn;
    const ws = (cur && cur.turn_id === i.turnID && cur.waiting_since) || (st && st.waiting_since) ||
      (i.approval && i.approval.waiting_since);
    const first = firstSeen(i.key, now);
    i.since = ws || first;
  }
  keepSeen(items.map((i) => i.key));
  items.sort((a, b) => Date.parse(a.since) - Date.parse(b.since) || (a.key < b.key ? -1 : 1));
  // When each row entered the state it shows, as this tab saw it.
  const next = new Map();
  for (const c of list.conversations || []) {
    const st = displayState(c);
    const was = store.since.get(c.conversation_id);
    next.set(c.conversation_id, was && was.state === st ? was : { state: st, at: now });
  }
  store.since = next;
  store.list = list;
  store.items = items;
  store.loaded = true;
  store.error = null;
  notifyNew(items);
  publish();
}

// ---- notifications ------------------------------------------------------------

// Kept in this browser only; off until the person turns them on (which
// asks the browser's permission, on that click, never on load).
const notifyKey = "akk.notify";
export function notifying() {
  return localStorage.getItem(notifyKey) === "on" && "Notification" in window && Notification.permission === "granted";
}
export async function setNotifying(on, hide = hidingDetails()) {
  if (!on) {
    localStorage.setItem(notifyKey, "off");
    await unsubscribePush();
    publish();
    return false;
  }
  if (!("Notification" in window)) return false;
  const p = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
  localStorage.setItem(notifyKey, p === "granted" ? "on" : "off");
  if (p === "granted") await subscribePush(hide);
  publish();
  return p === "granted";
}

// ---- Web Push ------------------------------------------------------------------
// With notifications on, this browser also subscribes to AKK's pushes, so a
// phone hears a new item with no tab open. Where the browser has no push
// service, the page's own notifications (a tab open) are what there is;
// pushing() says which.
const pushKey = "akk.push";
const hideKey = "akk.push.hide";
export function pushing() { return localStorage.getItem(pushKey) || ""; }
export function hidingDetails() { return localStorage.getItem(hideKey) === "on"; }
export let pushProblem = "";

function keyBytes(b64) {
  const s = atob(b64.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((b64.length + 3) % 4));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

export async function subscribePush(hide) {
  pushProblem = "";
  localStorage.setItem(hideKey, hide ? "on" : "off");
  try {
    if (!("serviceWorker" in navigator) || !("PushManager" in window)) throw new Error("this browser has no Web Push");
    const reg = await navigator.serviceWorker.ready;
    const { public_key: key } = await api("GET", "/v1/ui/push/key");
    let sub = await reg.pushManager.getSubscription();
    if (!sub) sub = await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) });
    const j = sub.toJSON();
    await api("POST", "/v1/ui/push/subscriptions", { endpoint: j.endpoint, keys: { p256dh: j.keys.p256dh, auth: j.keys.auth }, hide_details: hide });
    localStorage.setItem(pushKey, j.endpoint);
  } catch (e) {
    localStorage.removeItem(pushKey);
    pushProblem = `Push to this device is not on (${e && e.message ? e.message : e}); notifications show while a tab is open.`;
  }
  publish();
}

async function unsubscribePush() {
  const endpoint = pushing();
  localStorage.removeItem(pushKey);
  if (!endpoint) return;
  try { await api("DELETE", `/v1/ui/push/subscriptions?endpoint=${encodeURIComponent(endpoint)}`); } catch { /* gone already */ }
  try {
    const reg = await navigator.serviceWorker.ready;
    const sub = await reg.pushManager.getSubscription();
    if (sub) await sub.unsubscribe();
  } catch { /* nothing to undo */ }
}

// What the page shows now, set by the router: no notification for what is
// on screen in a visible tab.
export const view = { name: "" };

// openItem(key) is what clicking a notification does (set by the router).
export let openItem = () => {};
export function onOpenItem(fn) { openItem = fn; }

let known = null;
// When each key was last in the queue: an item that left for less than
// 5 s (a list read while the screen redraws) is not new when it is back.
const lastIn = new Map();
function notifyNew(items) {
  const first = known === null;
  const was = known || new Set();
  known = new Set(items.map((i) => i.key));
  const now = Date.now();
  const back = new Map(lastIn);
  for (const k of known) lastIn.set(k, now);
  for (const [k, t] of lastIn) if (now - t > 60_000) lastIn.delete(k);
  if (first || !notifying()) return;
  // Subscribed to pushes: AKK's push shows the item, open tab or not.
  if (pushing()) return;
  if (view.name === "needs" && document.visibilityState === "visible") return;
  for (const i of items) {
    // Every new item not on screen, also of a conversation just acted on
    // (a person who approved from the phone and pocketed it hears the next).
    if (was.has(i.key) || (back.has(i.key) && now - back.get(i.key) < 5000)) continue;
    const n = new Notification(`${i.agent} needs you`, { body: i.what, tag: i.key });
    n.onclick = () => {
      window.focus();
      openItem(i.key);
      n.close();
    };
  }
}
