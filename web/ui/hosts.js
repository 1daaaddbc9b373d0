// Hosts and the webhook outbox (the operator's): register a host (its
// token and secret shown once), ping, rotate its secret, retry a delivery.
import { useEffect, useState } from "preact/hooks";
import { html, api, problemText } from "./lib.js";
import { Act, Time } from "./parts.js";
import { onEvent } from "./events.js";

export function Hosts() {
  const [data, setData] = useState(null);
  const [err, setErr] = useState(null);
  // Secrets just issued stay on the page across re-renders until the
  // person leaves the view: they are shown only once.
  const [shown, setShown] = useState(null);
  const load = async () => {
    try {
      const [hosts, outbox] = await Promise.all([api("GET", "/v1/hosts"), api("GET", "/v1/notifications?limit=50")]);
      setData({ hosts, outbox });
      setErr(null);
    } catch (e) {
      setErr(e);
    }
  };
  useEffect(() => { load(); return onEvent((t) => { if (t.startsWith("host.")) load(); }); }, []);
  if (err && !data) return html`<h1>Hosts</h1><p class="error">${problemText(err)}</p>`;
  if (!data) return html`<h1>Hosts</h1><p class="muted">Loading…</p>`;
  return html`
    <h1>Hosts</h1>
    <div aria-live="polite" id="reveal">${shown && html`<${Secrets} title=${shown.title} values=${shown.values} />`}</div>
    <${Register} done=${async (c) => { setShown({ title: `Host ${c.name} registered`, values: { Token: c.token, "Webhook secret": c.webhook_secret } }); await load(); }} />
    <div class="table-wrap"><table aria-label="Hosts">
      <thead><tr><th>Name</th><th>Webhook URL</th><th>Headers</th><th>Events</th><th>Created</th><th>Actions</th></tr></thead>
      <tbody>${data.hosts.hosts.map((x) => html`<tr key=${x.host_id} data-host=${x.host_id}>
        <td>${x.name}</td><td>${x.webhook_url}</td><td>${(x.webhook_header_names || []).join(", ")}</td>
        <td>${(x.webhook_events || []).length ? x.webhook_events.join(", ") : "all"}</td><td><${Time} iso=${x.created_at} /></td>
        <td><div class="actions">
          <${Act} label="Ping" run=${async () => { await api("POST", `/v1/hosts/${x.host_id}/ping`); await load(); }} />
          <${Act} label="Rotate secret" run=${async () => {
            const r = await api("POST", `/v1/hosts/${x.host_id}/rotate-secret`);
            setShown({ title: `New secret for ${x.name}`, values: { "Webhook secret": r.webhook_secret } });
            await load();
          }} />
        </div></td></tr>`)}</tbody>
    </table></div>
    <h2>Webhook outbox</h2>
    <div class="actions"><${Act} label="Refresh" run=${load} /></div>
    <div class="table-wrap"><table aria-label="Webhook outbox">
      <thead><tr>${["Type", "State", "Attempts", "Status", "Last error", "Created", ""].map((x) => html`<th>${x}</th>`)}</tr></thead>
      <tbody>${data.outbox.notifications.map((n) => html`<tr key=${n.notification_id} data-notification=${n.notification_id} data-state=${n.state}>
        <td>${n.type}</td><td>${n.state}</td><td>${n.attempts}</td><td>${n.last_status_code || ""}</td><td>${n.last_error || ""}</td>
        <td><${Time} iso=${n.created_at} /></td>
        <td>${n.state === "failed" && html`<${Act} label="Retry" run=${async () => { await api("POST", `/v1/notifications/${n.notification_id}/retry`); await load(); }} />`}</td>
      </tr>`)}</tbody>
    </table></div>`;
}

function Register({ done }) {
  const [f, setF] = useState({ name: "", url: "", headers: "", events: "" });
  const [err, setErr] = useState("");
  const set = (k) => (e) => setF({ ...f, [k]: e.currentTarget.value });
  const submit = async (ev) => {
    ev.preventDefault();
    setErr("");
    try {
      const body = { name: f.name.trim(), webhook_url: f.url.trim() };
      const hs = {};
      for (const line of f.headers.split("\n")) {
        if (!line.trim()) continue;
        const i = line.indexOf(":");
        if (i <= 0) throw new Error(`a header line needs "Name: value"`);
        hs[line.slice(0, i).trim()] = line.slice(i + 1).trim();
      }
      if (Object.keys(hs).length) body.webhook_headers = hs;
      const evs = f.events.split(/[\s,]+/).filter(Boolean);
      if (evs.length) body.webhook_events = evs;
      const c = await api("POST", "/v1/hosts", body);
      setF({ name: "", url: "", headers: "", events: "" });
      await done(c);
    } catch (e) {
      setErr(problemText(e));
    }
  };
  return html`
    <form class="box" aria-label="Register a host" onSubmit=${submit}>
      <h2>Register a host</h2>
      <label for="host-name">Name</label>
      <input type="text" id="host-name" required maxlength="100" value=${f.name} onInput=${set("name")} />
      <label for="host-url">Webhook URL</label>
      <input type="url" id="host-url" required placeholder="https://…" value=${f.url} onInput=${set("url")} />
      <label for="host-headers">Delivery headers (one per line, as Header: value; never shown again)</label>
      <textarea id="host-headers" rows="2" placeholder="Authorization: Bearer …" autocomplete="off" spellcheck="false" value=${f.headers} onInput=${set("headers")}></textarea>
      <label for="host-events">Event types (space or comma separated; empty: all)</label>
      <input type="text" id="host-events" placeholder="all (or: turn.completed turn.failed)" value=${f.events} onInput=${set("events")} />
      ${err && html`<p class="error" role="alert">${err}</p>`}
      <div class="actions"><button type="submit" class="primary">Register</button></div>
    </form>`;
}

function Secrets({ title, values }) {
  return html`<section class="box" aria-label=${title}><h2>${title}</h2>
    <p class="muted">Shown only now: copy them to the host's configuration.</p>
    ${Object.entries(values).map(([k, v]) => html`<div key=${k}>
      <label>${k}</label><code class="secret" data-secret=${k}>${v}</code>${" "}
      <${Act} label=${`Copy ${k.toLowerCase()}`} run=${async () => { await navigator.clipboard.writeText(v); }} />
    </div>`)}</section>`;
}
