// The "Needs you" view: one queue of everything that waits for a person,
// across every agent (and node), oldest first. Each item acts through the
// row's own offered actions, so the API's offers and fences apply: an
// approval is answered only with the offer the person saw, after a fresh
// read shows the same prompt still there.
import { useEffect, useState } from "preact/hooks";
import { html, api, call, byName, problemText, since, decisionLabel, actionLabel, whereOf } from "./lib.js";
import { useStore, useMeasure, refresh, notifying, setNotifying, deriveItems, pushing, pushProblem, subscribePush, hidingDetails } from "./store.js";
import { Act, ActionButtons, StepForm, answered } from "./parts.js";

// itemID is an item's element id (its key made safe for an id).
export function itemID(key) {
  let h = 0;
  for (let i = 0; i < key.length; i++) h = (h * 31 + key.charCodeAt(i)) >>> 0;
  return `item-${h.toString(36)}`;
}

const kindLabel = { approval: "Permission", question: "Question", waiting: "Waiting for you", uncertain: "Not proven", blocked: "In the terminal", gone: "Pane gone" };

export function Queue({ focus }) {
  const s = useStore();
  const [notice, setNotice] = useState(null);
  useMeasure("needs");
  useEffect(() => {
    if (!focus) return;
    const el = document.getElementById(focus);
    if (el) { el.scrollIntoView({ block: "center" }); el.focus(); }
  }, [focus, s.loaded]);
  const items = s.items;
  return html`
    <h1>Needs you</h1>
    <div class="actions queue-bar"><${NotifySetting} /><button type="button" onClick=${() => refresh(true)}>Refresh</button></div>
    ${notice && html`<p class="error" role="alert">${notice}</p>`}
    ${s.error && html`<p class="error">${problemText(s.error)}</p>`}
    ${!s.loaded ? html`<p class="muted">Loading…</p>` : items.length === 0 ? html`
      <div class="empty"><p>Nothing needs you now.</p>
        <p class="muted">Permission prompts, questions, Turns waiting for your words and Turns whose outcome is not proven show here, oldest first.</p></div>` : html`
      <ol class="queue" aria-label="Waiting for you">
        ${items.map((it) => html`<li key=${it.key}><${Item} item=${it} focused=${focus === itemID(it.key) || (!!focus && focus === it.turnID)} say=${setNotice} /></li>`)}
      </ol>`}`;
}

function NotifySetting() {
  const supported = "Notification" in window;
  const on = notifying();
  const [why, setWhy] = useState("");
  if (!supported) return html`<p class="muted">This browser cannot show notifications.</p>`;
  const change = async (ev) => {
    const want = ev.currentTarget.checked;
    const got = await setNotifying(want);
    setWhy(want && !got ? "The browser did not allow notifications for this page." : "");
  };
  const hide = async (ev) => { await subscribePush(ev.currentTarget.checked); };
  return html`<p class="setting"><label><input type="checkbox" checked=${on} onChange=${change} /> Notify me when something new waits</label>
    ${on && html` <label><input type="checkbox" checked=${hidingDetails()} onChange=${hide} /> Hide details on the lock screen</label>`}
    ${why && html` <span class="error">${why}</span>`}
    ${on && (pushing() ? html` <span class="muted" data-push="on">Pushed to this device, also with no tab open.</span>` :
      pushProblem && html` <span class="muted" data-push="off">${pushProblem}</span>`)}</p>`;
}

function Item({ item, focused, say }) {
  const c = item.conversation;
  const hid = `${itemID(item.key)}-h`;
  const turn = item.turnID;
  return html`
    <article id=${itemID(item.key)} class=${`item k-${item.kind}${focused ? " focused" : ""}`} tabindex="-1"
      aria-labelledby=${hid} data-item=${item.key} data-kind=${item.kind}>
      <header>
        <h2 id=${hid}>${item.agent}</h2>
        <span class=${`badge q-${item.kind}`}>${kindLabel[item.kind]}</span>
      </header>
      <p class="what">${item.what}</p>
      <p class="meta muted">
        ${c && html`<span>${c.project}</span>`}
        ${c && whereOf(c) && html`<span>${whereOf(c)}</span>`}
        ${c && c.node && html`<span>node ${c.node}</span>`}
        <span>waiting <time data-since="1" datetime=${item.since} title=${new Date(item.since).toLocaleString()}>${since(item.since)}</time></span>
        ${turn && html`<a href=${`#/turn/${turn}`}>${turn}</a>`}
        ${c && html`<a href=${`#/conversation/${c.conversation_id}`}>the agent's card</a>`}
      </p>
      ${item.kind === "approval" && html`<${Approval} key=${item.rkey} item=${item} say=${say} />`}
      ${item.kind === "question" && html`<${Question} key=${item.rkey} item=${item} />`}
      ${item.kind === "waiting" && html`<${Respond} item=${item} />`}
      ${(item.kind === "uncertain" || item.kind === "gone") && html`<${Evidence} item=${item} />`}
      ${item.kind === "blocked" && html`<p class="error">Answer it in the terminal${item.reason ? `: ${item.reason}` : "."}</p>`}
      ${item.kind !== "approval" && item.kind !== "question" && html`<${Buttons} item=${item} />`}
    </article>`;
}

function Approval({ item, say }) {
  const ap = item.approval;
  const decide = (a) => async () => {
    const d = a.body && a.body.decision;
    // A fresh read first: the prompt the person saw must still be there.
    const fresh = deriveItems(await api("GET", "/v1/conversations"));
    // Gone, or another prompt: refused here. Shown but not readable this
    // moment: the daemon decides (it answers only the prompt offered).
    const now = fresh.find((i) => i.key === item.key);
    if (!now || (now.kind === "approval" && now.rkey !== item.rkey)) {
      say(`Not answered (${item.agent}): the prompt changed or went before the click; the queue shows what waits now.`);
      refresh(true);
      return "Not answered: the prompt changed.";
    }
    try {
      // The offer the person saw: the daemon refuses it if the prompt changed since.
      const r = await call(a);
      refresh(true);
      return r.do_not_retry ? "Not proven: look at the pane; do not answer again." : `${decisionLabel[d] || d}: done.`;
    } catch (e) {
      say(`Not answered (${item.agent}): ${problemText(e)}`);
      refresh(true);
      throw e;
    }
  };
  return html`
    <dl class="facts"><dt>Kind</dt><dd>${ap.prompt_kind}</dd>${ap.tool && html`<dt>Tool</dt><dd>${ap.tool}</dd>`}</dl>
    ${ap.command_excerpt && html`<pre aria-label="Command">${ap.command_excerpt}</pre>`}
    <div class="actions">
      ${item.actions.map((a) => html`<${Act} key=${a.body.decision} label=${decisionLabel[a.body.decision] || a.body.decision}
        cls=${a.body.decision === "reject" ? "danger" : "primary"} run=${decide(a)} />`)}
    </div>`;
}

// Question reads the step when its interaction changes and answers exactly it.
function Question({ item }) {
  const [step, setStep] = useState(null);
  const [err, setErr] = useState(null);
  const iid = item.action.body.interaction_id;
  useEffect(() => {
    let live = true;
    setErr(null);
    if (item.step && item.step.interaction_id === iid) { setStep(item.step); return; }
    setStep(null);
    api("GET", `/v1/turns/${item.turnID}/interaction`).then((s) => live && setStep(s), (e) => live && setErr(e));
    return () => { live = false; };
  }, [iid]);
  if (err) return html`<p class=${err.code === "no_interaction" ? "muted" : "error"}>${err.code === "no_interaction" ? "The question is changing; it shows again in a moment." : problemText(err)}</p>`;
  if (!step) return html`<p class="muted">Reading the question…</p>`;
  if (step.manual_required) return html`<p class="error">Answer this in the terminal${step.reason ? `: ${step.reason}` : "."}</p>`;
  const where = step.step.index === 0 ? ` (${step.step.total} waiting)` : step.step.total > 1 ? ` ${step.step.index} of ${step.step.total}` : "";
  const answer = async (extra) => {
    try {
      return answered(await call(item.action, extra));
    } finally {
      refresh(true);
    }
  };
  return html`<${StepForm} step=${step} answer=${answer}
    intro=${html`<p class="muted">${step.kind === "async_question" ? "Asked while the agent works on" : "The agent waits for the answer"}${where}</p>`} />`;
}

function Respond({ item }) {
  const a = byName(item.actions, "respond")[0];
  const [text, setText] = useState("");
  const [out, setOut] = useState(null);
  if (!a) return null;
  const id = `${itemID(item.key)}-respond`;
  const submit = async (ev) => {
    ev.preventDefault();
    if (!text.trim()) return;
    try {
      await call(a, { request: text.trim() });
      setText("");
      setOut({ ok: true, text: "Sent into the Turn." });
    } catch (e) {
      setOut({ ok: false, text: problemText(e) });
    }
    refresh(true);
  };
  return html`<form class="box" onSubmit=${submit}>
      <label for=${id}>Respond inside this Turn</label>
      <textarea id=${id} rows="2" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
      ${out && html`<p role="status" class=${out.ok ? "ok" : "error"}>${out.text}</p>`}
      <div class="actions"><button type="submit" class="primary">Respond</button></div>
    </form>`;
}

// Evidence: what the Turn's status says (its reason, the redacted screen).
function Evidence({ item }) {
  const st = item.status;
  if (!st) return null;
  const reason = st.result && (st.result.reason || st.result.final_message);
  return html`
    ${reason && html`<p>${reason}</p>`}
    ${st.do_not_retry && html`<p class="error">Do not send it again: input may have reached the agent.</p>`}
    ${st.screen && html`<details class="box"><summary>The screen (redacted)</summary><pre>${st.screen}</pre></details>`}`;
}

function Buttons({ item }) {
  return html`<${ActionButtons} actions=${item.actions} done=${(a, r) => {
    refresh(true);
    return r && r.do_not_retry ? "Not proven: look at the pane." : `${actionLabel[a.action]}: done.`;
  }} />`;
}
