// A Turn's page: its state, progress, result, the redacted screen, its
// actions and callbacks, and a timeline from its own event stream (which
// replays its events from the first, then goes live).
import { useEffect, useState } from "preact/hooks";
import { html, api, byName, call, problemText } from "./lib.js";
import { Time, ActionButtons } from "./parts.js";
import { eventTypes } from "./events.js";

export function Turn({ id }) {
  const [st, setSt] = useState(null);
  const [acts, setActs] = useState([]);
  const [err, setErr] = useState(null);
  const [timeline, setTimeline] = useState([]);
  const [changes, setChanges] = useState(null);
  const load = async () => {
    try {
      // The changes are read on their own: a failed read shows in their
      // section, and the rest of the Turn still shows.
      const [s, list, ch] = await Promise.all([api("GET", `/v1/turns/${id}`), api("GET", "/v1/conversations"),
        api("GET", `/v1/turns/${id}/changes`).then((data) => ({ data }), (error) => ({ error }))]);
      setChanges(ch);
      const a = [];
      for (const c of list.conversations) for (const x of c.available_actions) if (x.path.includes(id)) a.push(x);
      for (const u of list.unavailable_managed_turns || []) if (u.turn_id === id) a.push(...u.available_actions);
      setSt(s); setActs(a); setErr(null);
    } catch (e) {
      setErr(e);
    }
  };
  useEffect(() => {
    let live = true;
    let es = null;
    load().then(() => {
      if (!live) return;
      es = new EventSource(`/v1/turns/${id}/events`);
      for (const t of eventTypes.filter((x) => x.startsWith("turn."))) {
        es.addEventListener(t, (e) => {
          let env = null;
          try { env = JSON.parse(e.data); } catch { /* ignore */ }
          setTimeline((l) => [...l, { t, at: env && env.timestamp, key: e.lastEventId || `${l.length}` }]);
          load();
        });
      }
    });
    return () => { live = false; if (es) es.close(); };
  }, [id]);
  const p = st && st.progress;
  return html`
    <h1>Turn <span class="secret">${id}</span></h1>
    <div>
      ${err ? html`<p class="error">${problemText(err)}</p>` : !st ? html`<p class="muted">Loading…</p>` : html`
        <dl class="facts">
          <dt>State</dt><dd data-turn-state=${st.state}>${st.state}</dd>
          <dt>Path</dt><dd>${st.delivery_path}</dd>
          <dt>Terminal</dt><dd>${st.terminal_id}</dd>
          <dt>Created</dt><dd><${Time} iso=${st.created_at} /></dd>
          ${st.ended_at && html`<dt>Ended</dt><dd><${Time} iso=${st.ended_at} /></dd>`}
          ${st.watch_id && html`<dt>Watch</dt><dd>${st.watch_id}</dd>`}
        </dl>
        <h2>Progress</h2>
        <div class="progress">${p.state === "ok" ? [p.actions.map((a) => `[${a.type} ${a.status}] `), p.latest_text] : p.state.replaceAll("_", " ")}</div>
        ${st.result && (st.result.final_message || st.result.reason) && html`<h2>Result</h2>
          <div class="final" aria-label="Final message">${st.result.final_message || st.result.reason}</div>`}
        ${st.screen && html`<h2>Screen (redacted)</h2><pre>${st.screen}</pre>`}
        <${Changes} ch=${changes} />
        ${byName(acts, "respond")[0] && html`<${Respond} a=${byName(acts, "respond")[0]} done=${load} />`}
        <${ActionButtons} actions=${acts} done=${load} />
        <h2>Callbacks</h2>
        <p>${st.callbacks.delivered} delivered, ${st.callbacks.pending} pending, ${st.callbacks.failed} failed</p>
        <div class="table-wrap"><table>
          <thead><tr><th>Type</th><th>State</th><th>Attempts</th><th>Last error</th></tr></thead>
          <tbody>${st.callbacks.notifications.map((n) => html`<tr><td>${n.type}</td><td>${n.state}</td><td>${n.attempts}</td><td>${n.last_error || ""}</td></tr>`)}</tbody>
        </table></div>`}
    </div>
    <h2>Timeline</h2>
    <ol class="timeline" aria-label="Events">
      ${timeline.map((e) => html`<li key=${e.key}><strong>${e.t}</strong> ${e.at && html`<${Time} iso=${e.at} />`}</li>`)}
    </ol>`;
}

// Changes lists the files the Turn's agent changed, each with its diff
// (from the agent's own record, redacted), lines marked by kind.
function Changes({ ch: read }) {
  if (!read) return null;
  if (read.error) {
    return html`<h2>Changes</h2><p class="error">The changes could not be read: ${problemText(read.error)}</p>`;
  }
  const ch = read.data;
  const files = new Set(ch.changes.map((c) => c.path));
  return html`<h2>Changes</h2>
    <section aria-label="Changes">
      ${ch.changes.length === 0 ? html`<p class="muted">No file changed so far.</p>` : html`<p>${files.size} ${files.size === 1 ? "file" : "files"}, ${ch.changes.length} ${ch.changes.length === 1 ? "change" : "changes"}${ch.limit_reached ? " (only the first 500 are kept)" : ""}</p>`}
      ${ch.changes.map((c) => html`<details class="change" key=${c.seq} open=${ch.changes.length <= 5}>
        <summary><span class="change-op">${c.operation}</span> <code class="change-path">${c.path}</code>${c.recorded_at && html` <${Time} iso=${c.recorded_at} />`}</summary>
        <pre class="diff">${c.diff.split("\n").map((l) => html`<span class=${diffClass(l)}>${l}\n</span>`)}</pre>
        ${c.truncated && html`<p class="muted">The diff is cut at 64 KiB.</p>`}
      </details>`)}
    </section>`;
}

function diffClass(l) {
  if (l.startsWith("+++") || l.startsWith("---")) return "diff-file";
  if (l.startsWith("@@")) return "diff-hunk";
  if (l.startsWith("+")) return "diff-add";
  if (l.startsWith("-")) return "diff-del";
  return "";
}

function Respond({ a, done }) {
  const [text, setText] = useState("");
  const [out, setOut] = useState("");
  const submit = async (ev) => {
    ev.preventDefault();
    try {
      await call(a, { request: text.trim() });
      setText("");
      setOut("");
      done();
    } catch (e) {
      setOut(problemText(e));
    }
  };
  return html`<form class="box" onSubmit=${submit}>
    <label for="respond">Respond inside this Turn</label>
    <textarea id="respond" rows="2" value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>
    ${out && html`<p role="status" class="error">${out}</p>`}
    <div class="actions"><button type="submit" class="primary">Respond</button></div>
  </form>`;
}
