// The overview: one row per conversation for a person with many agents,
// filtered by state and agent, sorted by what needs attention first. A row
// opens the conversation's card.
import { useEffect, useState } from "preact/hooks";
import { html, api, displayState, stateLabel, agentName, since, problemText, whereOf } from "./lib.js";
import { refresh, useMeasure, useStore } from "./store.js";

// How much a state asks of a person: lower first.
const attention = { blocked: 0, awaiting_approval: 1, awaiting_interaction: 1, unknown: 3, working: 4, idle: 5 };
const turnAttention = { waiting_for_host: 1, stalled: 2, delivery_uncertain: 2, response_uncertain: 2 };

// Progress lines of working Turns, read at most every 5 s per Turn.
const progress = new Map();
function latest(turnID, onRead) {
  const p = progress.get(turnID);
  const now = Date.now();
  if (!p || now - p.at > 5000) {
    progress.set(turnID, { at: now, text: p ? p.text : "" });
    api("GET", `/v1/turns/${turnID}`).then((st) => {
      const t = st.progress && st.progress.state === "ok" ? (st.progress.latest_text || "").split("\n").filter(Boolean).pop() || "" : "";
      const was = progress.get(turnID);
      progress.set(turnID, { at: was ? was.at : now, text: t });
      if (!was || was.text !== t) onRead();
    }, () => {});
  }
  return p ? p.text : "";
}

export function Overview() {
  const s = useStore();
  const [stateF, setStateF] = useState("all");
  const [agentF, setAgentF] = useState("all");
  const [sort, setSort] = useState("attention");
  const [, bump] = useState(0);
  useMeasure("overview");
  useEffect(() => { if (!s.loaded) refresh(true); }, []);
  const now = new Date().toISOString();
  // A Turn's wait since its state changed (the queue's), else since this tab saw the state.
  const waited = new Map(s.items.filter((i) => i.cid).map((i) => [i.cid, i.since]));
  const list = s.list ? s.list.conversations.filter((c) => c.terminal || c.backend) : [];
  let rows = list.map((c) => {
    const st = displayState(c);
    const cur = c.managed && c.managed.current_turn;
    const rank = Math.min(attention[st] ?? 3, cur && turnAttention[cur.state] !== undefined ? turnAttention[cur.state] : 9);
    const seen = s.since.get(c.conversation_id);
    return { c, st, cur, rank, since: waited.get(c.conversation_id) || (seen ? seen.at : now) };
  });
  const kinds = [...new Set(list.map((c) => c.agent.kind))].sort();
  const states = Object.keys(stateLabel).filter((k) => rows.some((r) => r.st === k));
  if (stateF !== "all") rows = rows.filter((r) => r.st === stateF);
  if (agentF !== "all") rows = rows.filter((r) => r.c.agent.kind === agentF);
  rows.sort(sort === "attention" ? (a, b) => a.rank - b.rank || (a.since < b.since ? -1 : a.since > b.since ? 1 : 0)
    : (a, b) => agentName(a.c).localeCompare(agentName(b.c)));
  const fleet = list.some((c) => c.node);
  return html`
    <h1>Overview</h1>
    ${s.error && html`<p class="error">${problemText(s.error)}</p>`}
    <form class="filters" aria-label="Filter and sort" onSubmit=${(e) => e.preventDefault()}>
      <div><label for="f-state">State</label><select id="f-state" name="state" value=${stateF} onChange=${(e) => setStateF(e.currentTarget.value)}>
        <option value="all">All</option>
        ${(stateF !== "all" && !states.includes(stateF) ? [...states, stateF] : states).map((k) => html`<option value=${k}>${stateLabel[k][0]}</option>`)}
      </select></div>
      <div><label for="f-agent">Agent</label><select id="f-agent" name="agent" value=${agentF} onChange=${(e) => setAgentF(e.currentTarget.value)}>
        <option value="all">All</option>
        ${kinds.map((k) => html`<option value=${k}>${k === "claude" ? "Claude Code" : k === "codex" ? "Codex" : k}</option>`)}
      </select></div>
      <div><label for="f-sort">Sort</label><select id="f-sort" name="sort" value=${sort} onChange=${(e) => setSort(e.currentTarget.value)}>
        <option value="attention">Needs attention first</option>
        <option value="name">By name</option>
      </select></div>
      <button type="button" onClick=${() => refresh(true)}>Refresh</button>
    </form>
    ${!s.loaded ? html`<p class="muted">Loading…</p>` : html`
    <p class="muted" role="status">${rows.length} of ${list.length} conversations</p>
    <ul class="rows" aria-label="Conversations">
      ${rows.map((r) => html`<${Row} key=${r.c.conversation_id} r=${r} fleet=${fleet} bump=${() => bump((n) => n + 1)} />`)}
    </ul>`}`;
}

function Row({ r, fleet, bump }) {
  const { c, st, cur } = r;
  const [label, icon] = stateLabel[st];
  const line = cur && cur.state === "working" ? latest(cur.turn_id, bump) : "";
  const turnState = cur && cur.state !== "working" ? cur.state.replaceAll("_", " ") : "";
  return html`
    <li class=${`row s-${st}`} data-conversation=${c.conversation_id} data-state=${st}>
      <a class="name" href=${`#/conversation/${c.conversation_id}`}>${agentName(c)}</a>
      <span class=${`badge b-${st}`}><span aria-hidden="true">${icon}</span>${label}</span>
      <span class="for">for <time data-since="1" datetime=${r.since}>${since(r.since)}</time></span>
      <span class="agent">${c.agent.kind} ${c.agent.version}</span>
      <span class="project muted">${c.project}${whereOf(c) ? ` · ${whereOf(c)}` : ""}${fleet && c.node ? ` · node ${c.node}${c.node_state === "unreachable" ? " (unreachable)" : ""}` : ""}</span>
      ${(line || turnState) && html`<span class="line">${turnState ? `Turn ${turnState}` : line}</span>`}
    </li>`;
}
