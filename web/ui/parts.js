// Small components the views share.
import { useState, useRef } from "preact/hooks";
import { html, ago, problemText, stateLabel, actionLabel, call } from "./lib.js";

// Time is a relative time ("3 min ago"), kept true by the page's clock.
export function Time({ iso }) {
  return html`<time datetime=${iso} title=${iso ? new Date(iso).toLocaleString() : ""}>${ago(iso)}</time>`;
}

export function Badge({ state }) {
  const [label, icon] = stateLabel[state];
  return html`<span class=${`badge b-${state}`}><span aria-hidden="true">${icon}</span>${label}</span>`;
}

// Act is a button that runs run(), disabled meanwhile; what run returns (a
// sentence) or throws is said next to it.
export function Act({ label, cls, run }) {
  const [busy, setBusy] = useState(false);
  const [out, setOut] = useState(null);
  const click = async () => {
    setBusy(true);
    setOut(null);
    try {
      const msg = await run();
      if (typeof msg === "string" && msg) setOut({ ok: !msg.startsWith("Not"), text: msg });
    } catch (e) {
      setOut({ ok: false, text: problemText(e) });
    } finally {
      setBusy(false);
    }
  };
  return html`<span><button type="button" class=${cls || ""} disabled=${busy} onClick=${click}>${label}</button>
    ${out && html` <span role="status" class=${out.ok ? "ok" : "error"}>${out.text}</span>`}</span>`;
}

// ReadingBox is a box that reads when opened and keeps nothing when
// closed: opened again, it shows only what its new read says, never a
// stale choice to click. A read that returns after the box was closed, or
// after a newer opening began its own read, is dropped. children(r, close)
// draws the read r; onOpen(open) is told of each opening and closing.
export function ReadingBox({ summary, reading, read, children, onOpen }) {
  const [open, setOpen] = useState(false);
  const [res, setRes] = useState(null);
  const gen = useRef(0);
  const toggle = async (ev) => {
    const now = ev.currentTarget.open;
    const mine = ++gen.current;
    setOpen(now);
    setRes(null);
    if (onOpen) onOpen(now);
    if (!now) return;
    let r;
    try {
      r = { ok: await read() };
    } catch (e) {
      r = { err: e };
    }
    if (mine === gen.current) setRes(r);
  };
  const close = () => { gen.current++; setOpen(false); setRes(null); };
  return html`<details class="box" open=${open} onToggle=${toggle}><summary>${summary}</summary>
    <div>${!open ? null : !res ? html`<p class="muted">${reading}</p>` : res.err ? html`<p class="error">${problemText(res.err)}</p>` : children(res.ok, close)}</div>
  </details>`;
}

// ActionButtons are the body-less and id-only actions, as buttons; send,
// respond, approve and respond_interaction have forms of their own.
// done(a, r) is told what each answered; a sentence it returns is said
// next to the button.
export function ActionButtons({ actions, done }) {
  const acts = (actions || []).filter((a) => actionLabel[a.action]);
  if (!acts.length) return null;
  return html`<div class="actions">${acts.map((a) => {
    const text = actionLabel[a.action]; // what it does, never an id
    return html`<${Act} key=${a.action + a.path + (a.body && a.body.notification_id || "")} label=${text}
      cls=${a.action === "cancel" || a.action === "close" ? "danger" : ""}
      run=${async () => { const r = await call(a); return done ? done(a, r) : undefined; }} />`;
  })}</div>`;
}

// StepForm is a questionnaire step's answer form: a fieldset per question
// (radio buttons, checkboxes with their own words where an option takes
// them, or a text field, per response_kind) and, for an async question,
// how to deliver the answer. answer(extra) sends { answers, delivery_mode };
// it returns what to say ({ ok, text }) or throws.
export function StepForm({ step, answer, intro }) {
  const form = useRef(null);
  const [busy, setBusy] = useState(false);
  const [out, setOut] = useState(null);
  const id = step.interaction_id;
  const submit = async (ev) => {
    ev.preventDefault();
    const f = form.current;
    const answers = step.questions.map((q) => {
      const name = `q-${id}-${q.question_id}`;
      const ans = { question_id: q.question_id, response_kind: q.response_kind };
      if (q.response_kind === "free_text") {
        ans.text = f.querySelector(`[name="${name}"]`).value;
      } else {
        const picked = [...f.querySelectorAll(`[name="${name}"]:checked`)];
        ans.selected_option_ids = picked.map((x) => x.value);
        for (const x of picked) {
          const t = f.querySelector(`[data-text-for="${x.id}"]`);
          // Empty: the choice opens its own editor step, answered next.
          if (t && t.value !== "") ans.text = t.value;
        }
      }
      return ans;
    });
    const extra = { answers };
    const mode = f.querySelector(`[name="d-${id}"]:checked`);
    if (mode) extra.delivery_mode = mode.value;
    setBusy(true);
    try {
      setOut(await answer(extra));
    } catch (e) {
      setOut({ ok: false, text: problemText(e) });
      setBusy(false);
    }
  };
  // An async question's answer reaches the running turn, or (typed text)
  // waits for the agent's next turn.
  const modes = step.delivery_modes || [];
  const labels = { steer_current_turn: "Now, into the running task", queue_next_turn: "Queued for its next task (typed answers)" };
  return html`<form ref=${form} aria-label="Answer the question" onSubmit=${submit}>
    ${intro}
    ${step.questions.map((q) => {
      const name = `q-${id}-${q.question_id}`;
      return html`<fieldset class="box" key=${q.question_id} data-question=${q.question_id} data-kind=${q.response_kind}>
        <legend>${q.header ? `${q.header}: ${q.prompt}` : q.prompt}</legend>
        ${q.response_kind === "free_text" ? html`<label for=${name}>Answer</label><input type="text" id=${name} name=${name} maxlength=${step.free_text_limit || 200} />` :
          q.options.map((o) => {
            const oid = `${name}-${o.option_id}`;
            return html`<label class="opt" for=${oid} key=${o.option_id}>
                <input type=${q.response_kind === "multi_select" ? "checkbox" : "radio"} id=${oid} name=${name} value=${o.option_id} data-free=${o.free_text ? "1" : undefined} />
                <span>${o.label}${o.description && html`<span class="muted"> — ${o.description}</span>`}</span></label>
              ${o.free_text && html`<input type="text" aria-label=${`${o.label}: your words`} data-text-for=${oid} />`}`;
          })}
      </fieldset>`;
    })}
    ${modes.length > 1 && html`<fieldset class="box" data-delivery="1"><legend>Deliver the answer</legend>
      ${modes.map((m, i) => html`<label class="opt" for=${`d-${id}-${m}`} key=${m}>
        <input type="radio" id=${`d-${id}-${m}`} name=${`d-${id}`} value=${m} defaultChecked=${i === 0} />
        <span>${labels[m] || m}</span></label>`)}
    </fieldset>`}
    ${out && html`<p role="status" class=${out.ok ? "ok" : "error"}>${out.text}</p>`}
    <div class="actions"><button type="submit" class="primary" disabled=${busy}>Answer</button></div>
  </form>`;
}

// answered says what an answer's result proves.
export function answered(r) {
  return r.do_not_retry ? { ok: false, text: "Not proven: look at the pane; do not answer again." } : { ok: true, text: "Answered." };
}
