// The doctor: what the daemon needs to work, read once per visit.
import { useEffect, useState } from "preact/hooks";
import { html, api, problemText } from "./lib.js";

export function Doctor() {
  const [d, setD] = useState(null);
  const [err, setErr] = useState(null);
  useEffect(() => { api("GET", "/v1/doctor").then(setD, setErr); }, []);
  if (err) return html`<h1>Doctor</h1><p class="error">${problemText(err)}</p>`;
  if (!d) return html`<h1>Doctor</h1><p class="muted">Loading…</p>`;
  return html`
    <h1>Doctor</h1>
    <p><strong data-readiness=${d.status}>${d.status.replaceAll("_", " ")}</strong></p>
    ${d.reasons.length ? html`<ul class="warn">${d.reasons.map((r) => html`<li>${r}</li>`)}</ul>` : html`<p class="ok">Nothing to fix.</p>`}
    <h2>tmux</h2>
    <p>${d.tmux.found ? `tmux ${d.tmux.version || ""}` : `not found${d.tmux.problem ? `: ${d.tmux.problem}` : ""}`}</p>
    <div class="table-wrap"><table aria-label="tmux servers">
      <thead><tr><th>Socket</th><th>Panes</th><th>Problem</th></tr></thead>
      <tbody>${d.tmux_servers.map((s) => html`<tr><td>${s.socket}</td><td>${s.panes}</td><td>${s.problem || ""}</td></tr>`)}</tbody>
    </table></div>
    <h2>Agents in panes</h2>
    <div class="table-wrap"><table aria-label="Agents">
      <thead><tr><th>Agent</th><th>Version</th><th>Profile</th><th>Panes</th></tr></thead>
      <tbody>${d.agents.map((a) => html`<tr><td>${a.kind}</td><td>${a.version}</td><td>${a.profiled ? a.profile : "no profile"}</td><td>${a.panes}</td></tr>`)}</tbody>
    </table></div>
    <h2>Store</h2>
    <p>${d.store.writable ? "writable" : `not writable: ${d.store.problem || ""}`}</p>`;
}
