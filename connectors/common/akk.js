// The /akk chat command, as AKK's REST API answers it. This module decides
// nothing: it turns a command line into one REST call (with the host's token
// and the chat's session as AKK-Conversation) and the answer into text.
// Offers, fences and refusals are AKK's.

export const usage = [
  "/akk list: the conversations AKK sees, with their actions",
  "/akk <task>: send a task when AKK can prove one send-ready pane",
  "/akk <conversation, terminal or session id>: <task>: send to that one",
  "/akk status <turn, watch or conversation id>",
  "/akk watch <terminal id> | /akk unwatch <watch id>",
  "/akk approve <turn id> | /akk reject <turn id> (after /akk status showed the prompt)",
  "/akk cancel <turn id> | /akk close <turn id>",
].join("\n");

// parse reads the text after "/akk" into one REST call, or an error.
export function parse(text) {
  const line = (text ?? "").trim();
  if (line === "" || line === "help") {
    return { help: true };
  }
  const [word, ...rest] = line.split(/\s+/);
  const arg = rest.join(" ");
  const one = (what) => {
    if (rest.length !== 1) {
      return { error: `/akk ${word} takes one ${what}` };
    }
    return null;
  };
  const id = encodeURIComponent(rest[0] ?? "");
  switch (word) {
    case "list":
      return rest.length ? { error: "/akk list takes nothing" } : { method: "GET", path: "/v1/conversations", show: "list" };
    case "status": {
      const bad = one("id");
      if (bad) return bad;
      if (rest[0].startsWith("turn_")) return { method: "GET", path: `/v1/turns/${id}`, show: "status" };
      if (rest[0].startsWith("watch_")) return { method: "GET", path: `/v1/watches/${id}`, show: "status" };
      return { method: "GET", path: `/v1/conversations/${id}`, show: "conversation" };
    }
    case "watch":
      return one("terminal id") ?? { method: "POST", path: "/v1/watches", body: { terminal_id: rest[0] }, show: "result" };
    case "unwatch":
      return one("watch id") ?? { method: "DELETE", path: `/v1/watches/${id}`, show: "result" };
    case "cancel":
      return one("turn id") ?? { method: "POST", path: `/v1/turns/${id}/cancel`, show: "result" };
    case "close":
      return one("turn id") ?? { method: "POST", path: `/v1/turns/${id}/close`, show: "result" };
    case "approve":
    case "reject":
      return one("turn id") ?? {
        method: "POST",
        path: `/v1/turns/${id}/approval`,
        body: { decision: word === "approve" ? "approve_once" : "reject" },
        show: "result",
      };
  }
  // A task, to the one selector before ": " or to the one pane AKK can prove.
  const m = /^(\S+):\s+([\s\S]+)$/.exec(line);
  if (m && /^(term_|sess_|conv_|cx_)/.test(m[1])) {
    const key = m[1].startsWith("term_") ? "terminal_id" : m[1].startsWith("sess_") ? "session_id" : "conversation_id";
    return { method: "POST", path: "/v1/turns", body: { [key]: m[1], request: m[2] }, show: "result" };
  }
  return { method: "POST", path: "/v1/turns", body: { request: line }, show: "result" };
}

// call makes one REST call and returns [status, parsed body].
export async function call(cfg, conversation, req) {
  const headers = { Authorization: `Bearer ${cfg.token}`, Accept: "application/json" };
  if (conversation) headers["AKK-Conversation"] = conversation;
  let body;
  if (req.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(req.body);
  }
  const res = await fetch(new URL(req.path, cfg.url), {
    method: req.method,
    headers,
    body,
    signal: AbortSignal.timeout(cfg.timeoutMs ?? 60000),
  });
  const text = await res.text();
  let value = null;
  try {
    value = text ? JSON.parse(text) : null;
  } catch {
    value = { detail: text };
  }
  return [res.status, value];
}

// run answers one /akk command with text for the chat.
export async function run(cfg, conversation, text) {
  const req = parse(text);
  if (req.help) return usage;
  if (req.error) return `${req.error}\n\n${usage}`;
  let status, v;
  try {
    [status, v] = await call(cfg, conversation, req);
  } catch (err) {
    return `AKK did not answer (${err?.message ?? err}); nothing is known to have happened.`;
  }
  if (status >= 400) return refusal(status, v);
  switch (req.show) {
    case "list":
      return list(v);
    case "status":
      return statusText(v);
    case "conversation":
      return conversationText(v);
    default:
      return resultText(v);
  }
}

function refusal(status, v) {
  const code = v?.code ? ` ${v.code}` : "";
  return `Refused (${status}${code}): ${v?.detail ?? v?.title ?? "no detail"}`;
}

function actions(c) {
  return (c.available_actions ?? []).map((a) => a.action).join(", ");
}

function stateOf(c) {
  if (c.terminal) return c.terminal.screen_state ?? "";
  if (c.backend) return `backend ${c.backend.thread_status ?? ""}`.trim();
  return "";
}

function list(v) {
  const rows = v?.conversations ?? [];
  if (rows.length === 0) return "AKK sees no Claude Code or Codex conversation.";
  const out = rows.map((c, i) => {
    const agent = `${c.agent?.kind ?? "?"} ${c.agent?.version ?? ""}`.trim();
    const title = c.title ? ` "${c.title}"` : "";
    return `${i + 1}. ${c.conversation_id}  ${agent}  ${c.project}${title}  [${stateOf(c)}]  actions: ${actions(c) || "none"}`;
  });
  for (const t of v?.unavailable_managed_turns ?? []) {
    out.push(`- ${t.turn_id}: ${t.state} (its pane is gone)`);
  }
  return out.join("\n");
}

function statusText(v) {
  const id = v.turn_id ?? v.watch_id;
  const parts = [`${id}: ${v.state}`];
  if (v.result?.final_message) parts.push(`final message: ${v.result.final_message}`);
  if (v.result?.reason) parts.push(`reason: ${v.result.reason}`);
  if (v.final_message) parts.push(`final message: ${v.final_message}`);
  if (v.reason) parts.push(`reason: ${v.reason}`);
  if (v.approval) {
    const a = v.approval;
    parts.push(`approval: ${a.prompt_kind}${a.command_excerpt ? ` \`${a.command_excerpt}\`` : ""}; decisions: ${(a.decisions ?? []).join(", ") || "none (manual_required)"}`);
  }
  if (v.progress?.latest_text) parts.push(`progress: ${v.progress.latest_text}`);
  if (v.do_not_retry) parts.push("do not retry");
  return parts.join("\n");
}

function conversationText(v) {
  return list({ conversations: [v] });
}

function resultText(v) {
  const id = v.turn_id ?? v.watch_id ?? v.terminal_id ?? "";
  const parts = [`${id}: ${v.outcome ?? v.state ?? "done"}`.trim()];
  if (v.state && v.outcome) parts.push(`state: ${v.state}`);
  if (v.watch_id && v.turn_id) parts.push(`watch: ${v.watch_id}`);
  if (v.detail) parts.push(v.detail);
  for (const w of v.warnings ?? []) parts.push(`warning: ${w}`);
  if (v.do_not_retry) parts.push("do not retry: look at the pane and /akk status first");
  return parts.join("\n");
}
