// The agents: a card per pane and per Codex backend conversation, or one
// card (the detail view of a conversation). Each card offers only its
// row's available_actions. The cards are keyed by conversation, so a live
// update keeps what a person typed, checked or opened in them.
import { useEffect, useRef, useState } from "preact/hooks";
import { html, api, byName, call, displayState, problemText, decisionLabel, actionLabel, cardTitle } from "./lib.js";
import { Act, ActionButtons, Badge, ReadingBox, StepForm, Time, answered } from "./parts.js";
import { drafts, refresh, useStore } from "./store.js";

export function Agents({ only }) {
  const s = useStore();
  const title = only ? "Agent" : "Agents";
  if (!s.list) {
    return html`<h1>${title}</h1>${s.error ? html`<p class="error">${problemText(s.error)}</p>` : html`<p class="muted">Loading…</p>`}`;
  }
  const list = s.list;
  const rows = list.conversations.filter((c) => (c.terminal || c.backend) && (!only || c.conversation_id === only));
  const gone = list.unavailable_managed_turns || [];
  return html`
    <h1>${title}</h1>
    ${rows.length === 0 && only ? html`<p class="muted">This conversation is not listed now (its pane or thread may have gone). <a href="#/agents">All agents</a></p>` :
      rows.length === 0 ? html`<div class="empty"><p>No agent panes or backend conversations found — start Claude Code or Codex in tmux.</p>
        <p class="muted">AKK lists the panes of the tmux servers it watches; it never starts an agent.</p></div>` :
      html`<div class="grid">${rows.map((c) => html`<${Card} key=${c.conversation_id} c=${c} rev=${s.rev} />`)}</div>`}
    ${!only && gone.length > 0 && html`<h2>Turns whose pane is gone</h2>
      <ul>${gone.map((u) => html`<li key=${u.turn_id}><a href=${`#/turn/${u.turn_id}`}>${u.turn_id}</a> ${u.state} <${ActionButtons} actions=${u.available_actions} done=${() => refresh(true)} /></li>`)}</ul>`}`;
}

// What a native control answered, said on the card.
function nativeInfo(a, r) {
  if (r.outcome && r.outcome !== "done") return `${actionLabel[a.action]}: ${r.outcome}. ${r.detail || ""} Look at the pane before anything else.`;
  switch (a.action) {
    case "new_thread": return `New thread ${r.native_thread_id || ""} (session ${r.session_id}, ${r.binding}).`;
    case "native_inspect": return `Status: thread ${r.status.native_thread_id}, ${r.status.agent_version}, ${r.status.model}${r.identity_matches_record ? "" : " (not the thread the records prove)"}.`;
    case "identify_foreground": return `Foreground thread ${r.native_thread_id} (a diagnostic until ${new Date(r.expires_at).toLocaleTimeString()}).`;
    default: return "";
  }
}

function Card({ c, rev }) {
  const state = displayState(c);
  const t = c.terminal;
  const b = c.backend;
  const title = cardTitle(c);
  const id = `card-${c.conversation_id}`;
  const cur = c.managed && c.managed.current_turn;
  const recent = c.managed && c.managed.recent_turn;
  // A refusal stays on the card until its next action; what a native
  // control answered, until the next answer.
  const [note, setNote] = useState("");
  const [info, setInfo] = useState("");
  // Forms and boxes once offered stay (hidden while their action is not
  // offered), so they come back as they were: a task half typed when the
  // list said for a moment that the pane could not take one is still there.
  const had = useRef({});
  const acts = c.available_actions;
  const ri = byName(acts, "respond_interaction")[0];
  // A pane's send follows the pane; a backend row's (merged with its pane
  // or not) is its thread's own.
  const send = byName(acts, "send").find((a) => b ? a.body.conversation_id : a.target !== "session_exact");
  const mo = b ? byName(acts, "model_options")[0] : undefined;
  const th = byName(acts, "threads")[0];
  const resume = byName(acts, "resume_thread")[0];
  const po = byName(acts, "permission_options")[0];
  const sp = byName(acts, "set_permissions")[0];
  if (send) had.current.send = send;
  if (th) had.current.th = th;
  if (po && sp) had.current.perm = [po, sp];
  const done = (msg) => { if (msg !== undefined) setInfo(msg); setNote(""); refresh(true); };
  return html`
    <article class=${`card s-${state}`} aria-labelledby=${id} data-conversation=${c.conversation_id} data-state=${state} data-transport=${c.transport}>
      <header><h2 id=${id}>${title}</h2><${Badge} state=${state} /></header>
      <dl class="facts">
        <dt>Agent</dt><dd>${`${c.agent.kind} ${c.agent.version} · ${c.agent.profile}`}</dd>
        <dt>Project</dt><dd>${c.project}</dd>
        ${t && html`<dt>Identity</dt><dd>${t.native_identity_state}</dd>`}
        ${t && t.channels && html`<dt>Answers</dt><dd data-channels=${`${t.channels.permission}/${t.channels.question}`}>prompts: ${channelLabel(t.channels.permission)} · questions: ${channelLabel(t.channels.question)}</dd>`}
        ${b && html`<dt>Through</dt><dd>${t ? "Codex app-server (the pane shows this thread)" :
          "Codex app-server only: no pane is proven to show this thread, so a Codex pane on it is a card of its own (one card when the pane's title names the thread)"}</dd>
          <dt>Thread</dt><dd class="secret">${b.native_thread_id}</dd>`}
        ${c.node && html`<dt>Node</dt><dd>${c.node}${c.node_state === "unreachable" ? " (unreachable)" : ""}</dd>`}
        ${cur && html`<dt>Turn</dt><dd><a href=${`#/turn/${cur.turn_id}`}>${cur.turn_id}</a> · ${cur.state}</dd>`}
        ${!cur && recent && html`<dt>Last turn</dt><dd><a href=${`#/turn/${recent.turn_id}`}>${recent.turn_id}</a> · ${recent.state}</dd>`}
        ${c.managed && c.managed.held_by_other && html`<dt>Held</dt><dd>by another host's Turn</dd>`}
      </dl>
      ${note && html`<p class="error" role="alert">${note}</p>`}
      <${TurnInfo} cur=${cur} recent=${recent} rev=${rev} />
      ${c.warnings && c.warnings.length > 0 && html`<ul class="warn">${c.warnings.map((w) => html`<li>${w}</li>`)}</ul>`}
      ${c.approval && html`<${ApprovalBox} c=${c} refused=${(m) => setNote(m)} />`}
      ${ri ? html`<${Interaction} key=${ri.body.interaction_id} a=${ri} rev=${rev} />` :
        state === "awaiting_interaction" && cur ? html`<p class="muted">${t ? "A question is on screen; answer it in the terminal." : "A question waits; answer it in a Codex client of this thread."}</p>` : null}
      ${had.current.send && html`<div hidden=${!send}><${SendForm} key=${sendKey(had.current.send)}
        a=${send || had.current.send} offered=${!!send} c=${c} mo=${mo} /></div>`}
      ${had.current.th && html`<div hidden=${!th}><${ThreadsBox} a=${th || had.current.th} resume=${resume} said=${done} /></div>`}
      ${had.current.perm && html`<div hidden=${!(po && sp)}><${PermissionsBox} get=${(po && sp) ? po : had.current.perm[0]} set=${(po && sp) ? sp : had.current.perm[1]} c=${c} said=${done} /></div>`}
      ${t && !(c.managed && c.managed.held_by_other) && html`<${ScreenBox} term=${t.terminal_id} />`}
      ${info && html`<p class="info" role="status">${info}</p>`}
      <${ActionButtons} actions=${acts} done=${(a, r) => done(r ? nativeInfo(a, r) || undefined : undefined)} />
    </article>`;
}

// ScreenBox shows the pane as the agent shows it, live and read-only,
// while it is open: it follows the pane's screen stream only then (nobody
// following, AKK reads nothing). Nothing typed here reaches the pane.
function ScreenBox({ term }) {
  const [open, setOpen] = useState(false);
  const [scr, setScr] = useState(null);
  const [err, setErr] = useState("");
  useEffect(() => {
    if (!open) return undefined;
    const es = new EventSource(`/v1/terminals/${term}/screen/events`);
    es.addEventListener("terminal.screen", (e) => {
      try { setScr(JSON.parse(e.data).data); setErr(""); } catch { /* ignore */ }
    });
    es.onerror = () => setErr("The screen is not followed now (the pane went, or another host's Turn holds it); it is tried again.");
    return () => es.close();
  }, [open, term]);
  return html`<details class="box screen" onToggle=${(e) => setOpen(e.currentTarget.open)}>
    <summary>Screen (live, redacted)</summary>
    ${err && html`<p class="muted">${err}</p>`}
    ${open && scr && html`<pre class="screen-text" aria-label="Screen" data-columns=${scr.columns}>${styledScreen(scr)}</pre>
      <p class="muted">${scr.columns}×${scr.lines}, read <${Time} iso=${scr.read_at} /></p>`}
  </details>`;
}

// styledScreen draws the screen's rows with the agent's colours where the
// read carries them (a row redaction changed comes plain); its text is the
// screen's text, character for character.
function styledScreen(scr) {
  const rows = scr.text.split("\n");
  return rows.map((row, i) => {
    const spans = (scr.styles && scr.styles[i]) || [];
    const chars = Array.from(row);
    const parts = [];
    let at = 0;
    for (const sp of spans) {
      if (sp.from > at) parts.push(chars.slice(at, sp.from).join(""));
      parts.push(html`<span style=${spanStyle(sp)}>${chars.slice(sp.from, sp.to).join("")}</span>`);
      at = sp.to;
    }
    if (at < chars.length) parts.push(chars.slice(at).join(""));
    if (i < rows.length - 1) parts.push("\n");
    return parts;
  });
}

function spanStyle(sp) {
  let fg = sp.fg, bg = sp.bg;
  if (sp.inverse) [fg, bg] = [bg || "var(--term-bg)", fg || "var(--term-fg)"];
  const s = {};
  if (fg) s.color = fg;
  if (bg) s.background = bg;
  if (sp.bold) s.fontWeight = "600";
  if (sp.dim) s.opacity = "0.7";
  if (sp.italic) s.fontStyle = "italic";
  if (sp.underline) s.textDecoration = "underline";
  return s;
}

// TurnInfo shows the current Turn's progress, or the last Turn's final
// message, read again when the Turn or its state changes (and, while a
// Turn runs, on every update of the list).
function TurnInfo({ cur, recent, rev }) {
  const shown = cur || recent;
  const [st, setSt] = useState(null);
  useEffect(() => {
    if (!shown) { setSt(null); return; }
    let live = true;
    api("GET", `/v1/turns/${shown.turn_id}`).then((s) => live && setSt(s), () => {});
    return () => { live = false; };
  }, [shown && shown.turn_id, shown && shown.state, cur ? rev : 0]);
  if (!shown || !st || st.turn_id !== shown.turn_id) return null;
  if (cur && st.progress && (st.progress.latest_text || st.progress.actions.length)) {
    return html`<div class="progress" aria-label="Progress">${st.progress.actions.map((a) => `[${a.type} ${a.status}] `)}${st.progress.latest_text}</div>`;
  }
  if (!cur && st.result && st.result.final_message) return html`<div class="final" aria-label="Final message">${st.result.final_message}</div>`;
  return null;
}

function ApprovalBox({ c, refused }) {
  const ap = c.approval;
  const [out, setOut] = useState(null);
  const decide = (a) => async () => {
    const d = a.body && a.body.decision;
    try {
      const r = await call(a);
      setOut(r.do_not_retry ? { ok: false, text: "Not proven: look at the pane; do not answer again." } : { ok: true, text: `${decisionLabel[d] || d}: done.` });
    } catch (e) {
      // The prompt changed or went: say why, then show what is there now.
      refused(`Not answered: ${problemText(e)}`);
      setOut({ ok: false, text: problemText(e) });
    }
    refresh(true);
  };
  return html`<section class="box" aria-label="Permission prompt">
    <h3>Permission prompt</h3>
    <dl class="facts"><dt>Kind</dt><dd>${ap.prompt_kind}</dd>${ap.tool && html`<dt>Tool</dt><dd>${ap.tool}</dd>`}</dl>
    ${ap.command_excerpt && html`<pre aria-label="Command">${ap.command_excerpt}</pre>`}
    ${ap.manual_required ? html`<p class="error">Answer this in the terminal${ap.reason ? `: ${ap.reason}` : "."}</p>` : html`
      <div class="actions">${byName(c.available_actions, "approve").map((a) => html`<${Act} key=${a.body.decision}
        label=${decisionLabel[a.body.decision] || a.body.decision} cls=${a.body.decision === "reject" ? "danger" : "primary"} run=${decide(a)} />`)}</div>
      ${out && html`<p role="status" class=${out.ok ? "ok" : "error"}>${out.text}</p>`}`}
  </section>`;
}

// Interaction reads its step once (again on the next update when it
// could not be read: it was being answered, or it just left) and answers
// exactly it.
function Interaction({ a, rev }) {
  const turnID = a.path.split("/")[3];
  const [step, setStep] = useState(null);
  const [err, setErr] = useState(null);
  const [again, setAgain] = useState(0);
  useEffect(() => {
    if (step && !again) return;
    let live = true;
    api("GET", `/v1/turns/${turnID}/interaction`).then((s) => { if (live) { setStep(s); setErr(null); setAgain(0); } }, (e) => live && setErr(e));
    return () => { live = false; };
  }, [err ? rev : 0, again]);
  if (!step) {
    if (!err) return null;
    return err.code === "no_interaction" ? html`<p class="muted">The question is changing; it shows again in a moment.</p>` : html`<p class="error">${problemText(err)}</p>`;
  }
  const title = step.kind === "async_question" ? "Question (the agent works on)" : "Question";
  const where = step.step.index === 0 ? ` (${step.step.total} waiting)` : step.step.total > 1 ? ` ${step.step.index} of ${step.step.total}` : "";
  if (step.manual_required) {
    return html`<section class="box"><h3>${title}${where}</h3><p class="error">Answer this in the terminal${step.reason ? `: ${step.reason}` : "."}</p></section>`;
  }
  const answer = async (extra) => {
    try {
      const r = await call(a, extra);
      refresh(true);
      return answered(r);
    } catch (e) {
      // Read the step again.
      if (e.code === "offer_expired" || e.code === "prompt_changed") { setAgain((n) => n + 1); refresh(true); }
      throw e;
    }
  };
  return html`<section class="box" aria-label="Question">
    <h3>${title}${where}</h3>
    <${StepForm} key=${step.interaction_id} step=${step} answer=${answer} />
  </section>`;
}

// A send form's key: the pane it types into, or the thread it starts a
// turn on; its draft is kept under it.
const sendKey = (a) => `send:${a.body.terminal_id || a.body.conversation_id}`;

function SendForm({ a, c, mo, offered }) {
  const fid = `send-${c.conversation_id}`;
  const dk = sendKey(a);
  const [text, setTextState] = useState(() => drafts.get(dk) || "");
  const setText = (v) => { if (v) drafts.set(dk, v); else drafts.delete(dk); setTextState(v); };
  const [busy, setBusy] = useState(false);
  const [msg, setMsg] = useState(null);
  // What the last task's Send said belongs to it: gone when the form hides.
  useEffect(() => { if (!offered) setMsg(null); }, [offered]);
  const models = useRef(null);
  const submit = async (ev) => {
    ev.preventDefault();
    const req = text.trim();
    if (!req) return;
    setBusy(true);
    try {
      const r = await call(a, { request: req, ...(models.current ? models.current.choice() : {}) });
      setText("");
      if (models.current) models.current.close();
      setMsg(r.do_not_retry ? { ok: false, text: "Delivery is not proven: do not send it again; look at the pane." } : { ok: true, text: `Sent (${r.delivery_path}).` });
      refresh(true);
    } catch (e) {
      setMsg({ ok: false, text: problemText(e) });
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="box" aria-label=${`Send a task to ${cardTitle(c)}`} onSubmit=${submit}>
    <label for=${fid}>Send a task</label>
    <textarea id=${fid} name="request" rows="2" required placeholder="A task for this agent" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    ${mo && html`<${ModelBox} a=${mo} c=${c} handle=${models} />`}
    ${msg ? html`<p role="status" class=${msg.ok ? "ok" : "error"}>${msg.text}</p>` : html`<p role="status" class="sr-only"></p>`}
    <div class="actions"><button type="submit" class="primary" disabled=${busy}>Send</button></div>
  </form>`;
}

// ModelBox reads a backend thread's model catalogue from its daemon when
// opened and offers its models and efforts for the next task (the daemon
// sets them only with a turn); handle.current.choice() is what differs
// from the thread's.
function ModelBox({ a, c, handle }) {
  const mid = `model-${c.conversation_id}`;
  const eid = `effort-${c.conversation_id}`;
  const [sel, setSel] = useState(null); // { cat, model, effort }
  const closer = useRef(null);
  handle.current = {
    choice: () => {
      if (!sel) return {};
      const x = {};
      if (sel.model && sel.model !== sel.cat.effective.model) x.model = sel.model;
      if (sel.effort && (x.model || sel.effort !== sel.cat.effective.reasoning_effort)) x.reasoning_effort = sel.effort;
      return x;
    },
    close: () => { if (closer.current) closer.current(); setSel(null); },
  };
  const read = async () => {
    setSel(null);
    const r = await call(a);
    const now = r.effective || { model: "", reasoning_effort: "" };
    const cat = { models: r.models, effective: now };
    setSel({ cat, model: now.model, effort: now.reasoning_effort });
    return cat;
  };
  return html`<${ReadingBox} summary="Model and effort" reading="Reading the thread's models…" read=${read} onOpen=${(o) => { if (!o) setSel(null); }}>
    ${(cat, close) => {
      closer.current = close;
      if (!sel) return null;
      const m = cat.models.find((x) => x.model === sel.model);
      const efforts = m ? m.reasoning_efforts : [];
      return html`<p>Now: <strong data-model=${cat.effective.model} data-effort=${cat.effective.reasoning_effort}>${`${cat.effective.model} · ${cat.effective.reasoning_effort}`}</strong></p>
        <label for=${mid}>Model</label>
        <select id=${mid} name="model" value=${sel.model} onChange=${(e) => {
          const model = e.currentTarget.value;
          const mm = cat.models.find((x) => x.model === model);
          const effs = mm ? mm.reasoning_efforts : [];
          setSel({ ...sel, model, effort: effs.includes(sel.effort) ? sel.effort : (effs[0] || "") });
        }}>${cat.models.map((x) => html`<option value=${x.model}>${x.label}</option>`)}</select>
        <label for=${eid}>Effort</label>
        <select id=${eid} name="reasoning_effort" value=${sel.effort} onChange=${(e) => setSel({ ...sel, effort: e.currentTarget.value })}>
          ${efforts.map((x) => html`<option value=${x}>${x}</option>`)}</select>
        <p class="muted">Chosen for the next task and the thread's later ones.</p>`;
    }}
  <//>`;
}

// ThreadsBox lists the agent's own conversations in the pane's project
// (read from its records) when opened, read again on every opening. With
// the row's resume_thread action (as the newest list offers it), each
// other thread has a Resume button that sends its complete id.
function ThreadsBox({ a, resume, said }) {
  return html`<${ReadingBox} summary="Threads" reading="Reading the agent's records…" read=${() => call(a)}>
    ${(l, close) => html`<ol class="threads" aria-label="Threads">
      ${l.threads.length ? l.threads.map((t) => html`<li key=${t.native_thread_id} data-thread=${t.native_thread_id}>
        ${t.current && html`<strong>current · </strong>`}<span>${t.title}</span>${" "}
        <span class="muted">${t.short_id} · <${Time} iso=${t.updated_at} /></span>
        ${resume && !t.current && html` <${Act} label="Resume" run=${async () => {
          const r = await call(resume, { native_thread_id: t.native_thread_id });
          close();
          said(r.outcome === "done" ? `Resumed thread ${r.native_thread_id} (session ${r.session_id}).` :
            `Resume ${r.outcome}: ${r.detail || ""} Look at the pane before anything else.`);
        }} />`}
      </li>`) : html`<li class="muted">No threads in this project yet.</li>`}
    </ol>`}
  <//>`;
}

// PermissionsBox reads the pane's permission modes when opened and sets
// the one chosen (the mode ids of the read, never a label).
function PermissionsBox({ get, set, c, said }) {
  return html`<${ReadingBox} summary="Permissions" reading="Reading the agent's permission mode…" read=${() => call(get)}>
    ${(r, close) => html`<${PermissionChoice} key=${r.current} r=${r} set=${set} c=${c} close=${close} said=${said} />`}
  <//>`;
}

function PermissionChoice({ r, set, c, close, said }) {
  const sid = `perm-${c.conversation_id}`;
  const [mode, setMode] = useState(r.current);
  return html`<p>Now: <strong data-mode=${r.current}>${r.current}</strong></p>
    <label for=${sid}>Mode</label>
    <select id=${sid} name="mode" value=${mode} onChange=${(e) => setMode(e.currentTarget.value)}>
      ${r.modes.map((m) => html`<option value=${m.mode}>${m.label}</option>`)}</select>
    <${Act} label="Apply" run=${async () => {
      const x = await call(set, { mode });
      close();
      said(x.outcome === "done" ? `Permission mode: ${x.current}${x.already_effective ? " (already)" : ""}.` :
        `Permissions ${x.outcome}: ${x.detail || ""} Look at the pane before anything else.`);
    }} />`;
}

// channelLabel says how AKK answers what the agent asks (terminal.channels).
function channelLabel(ch) {
  return { hook: "the agent's hook (exact)", app_server: "Codex app-server (exact)", screen: "the screen", none: "only in the pane" }[ch] || ch;
}
