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
// done(a, r) is told what each answered.
export function ActionButtons({ actions, done }) {
  const acts = (actions || []).filter((a) => actionLabel[a.action]);
  if (!acts.length) return null;
  return html`<div class="actions">${acts.map((a) => {
    const what = a.path.split("/")[3] || "";
    const text = a.action === "retry_callback" ? `${actionLabel[a.action]} ${a.body.notification_id.slice(0, 10)}…` :
      a.action === "unwatch" ? `${actionLabel[a.action]} ${what.slice(0, 12)}` : actionLabel[a.action];
    return html`<${Act} key=${a.action + a.path + (a.body && a.body.notification_id || "")} label=${text}
      cls=${a.action === "cancel" || a.action === "close" ? "danger" : ""}
      run=${async () => { const r = await call(a); if (done) done(a, r); }} />`;
  })}</div>`;
}
