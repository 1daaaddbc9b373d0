// AKK's Pi extension: Pi as an AKK host.
//  - It registers AKK's MCP server (AKK_URL/mcp, the host's token) for the
//    session, then makes the capability handshake: the tools Pi registered
//    must be AKK's catalogue (GET /v1/tools), or it refuses to start and
//    says what differs (catalogue.js).
//  - Each call of an AKK tool carries the Pi session as its conversation
//    reference (akk_conversation = "pi:<session id>"), so a Turn's
//    callbacks name that session.
//  - It listens for AKK's signed callbacks (AKK_CALLBACK_LISTEN) and wakes
//    the session that sent the Turn with a user message, as a follow-up
//    when it is busy. One listener per Pi process, for one AKK host each.
//  - /akk commands, answered by AKK's REST API with no model call.
// It decides nothing: offers, fences and refusals are AKK's.
import { createServer } from "node:http";
import { run } from "../common/akk.js";
import { compare, fetchCatalogue, refusal } from "../common/catalogue.js";
import { config, notStarted, splitAddr } from "../common/config.js";
import { receiver, wakeText } from "../common/webhook.js";

// connectWait bounds the wait for Pi to connect AKK's MCP server.
const connectWait = 30000;

export default function akk(pi) {
  const { cfg, missing } = config(process.env);
  const prefix = `mcp__${cfg.server}__`;
  // refused holds why the connector did not start (null once it has).
  let refused = missing.length ? notStarted(missing) : "starting";
  let session = null; // "pi:<session id>"
  let listener = null;
  let stopped = false; // the session ended (a listener opened after it is closed at once)

  if (!missing.length) {
    pi.registerMcpServer(cfg.server, {
      url: new URL("/mcp", cfg.url).toString(),
      headers: { Authorization: `Bearer ${cfg.token}` },
      exposure: "direct",
      description: "AKK: the Claude Code and Codex agents in this machine's tmux panes",
    });
  }

  pi.on("tool_call", (event, ctx) => {
    if (!String(event.toolName).startsWith(prefix)) return undefined;
    if (refused) return { block: true, reason: refused };
    event.input.akk_conversation = `pi:${ctx.sessionManager.getSessionId()}`;
    return undefined;
  });

  pi.registerCommand("akk", {
    description: "AKK: list, send, status, watch, approve, cancel the coding agents in your tmux panes",
    handler: async (args, ctx) => {
      if (refused) {
        ctx.ui.notify(refused, "error");
        return;
      }
      ctx.ui.notify(await run(cfg, `pi:${ctx.sessionManager.getSessionId()}`, args ?? ""), "info");
    },
  });

  // wake hands one verified callback to the session it names.
  const wake = (payload, ctx) => {
    const conv = payload?.data?.conversation;
    if (conv !== session) {
      ctx.ui.notify(`AKK: ${payload?.type} for ${conv ?? "no session"}, which this Pi does not hold; nothing was sent to the model`, "warning");
      return;
    }
    // An idle session starts a turn with it; a busy one takes it once its
    // run has ended (a follow-up), never in the middle of its tool calls.
    pi.sendUserMessage(wakeText(payload), { deliverAs: "followUp" });
  };

  const listen = (ctx) =>
    new Promise((resolve, reject) => {
      const [host, port] = splitAddr(cfg.listen);
      const srv = createServer(receiver(cfg.secret, (payload) => wake(payload, ctx)));
      srv.once("error", reject);
      srv.listen(Number(port), host, () => resolve(srv));
    });

  // handshake runs beside the session's start: Pi connects MCP servers
  // once the session has started, so session_start must not wait for it.
  const handshake = async (ctx) => {
    try {
      const catalogue = await fetchCatalogue(cfg);
      const registered = await registration(pi, prefix);
      const diffs = compare(catalogue, prefix, registered);
      if (diffs.length) throw new Error(refusal(catalogue, diffs));
      const srv = await listen(ctx);
      if (stopped) {
        srv.close();
        return;
      }
      listener = srv;
      refused = null;
      ctx.ui.notify(`AKK connector ready: ${catalogue.tools.length} tools of catalogue ${catalogue.catalogue_version}; callbacks on ${cfg.listen} for ${session}`, "info");
    } catch (err) {
      refused = String(err?.message ?? err);
      if (!refused.startsWith("AKK connector")) refused = `AKK connector refused to start: ${refused}`;
      pi.unregisterMcpServer(cfg.server);
      ctx.ui.notify(refused, "error");
    }
  };

  pi.on("session_start", (_event, ctx) => {
    session = `pi:${ctx.sessionManager.getSessionId()}`;
    if (missing.length) {
      ctx.ui.notify(refused, "error");
      return;
    }
    handshake(ctx);
  });

  pi.on("session_shutdown", async () => {
    stopped = true;
    refused = "AKK connector stopped with its session";
    if (listener) await new Promise((r) => listener.close(() => r()));
    listener = null;
  });
}

// registration is what Pi registered of AKK's server, once it connected:
// the tools the model can call (active), with their arguments.
async function registration(pi, prefix) {
  const deadline = Date.now() + connectWait;
  for (;;) {
    const active = new Set(pi.getActiveTools());
    const all = pi.getAllTools().filter((t) => t.name.startsWith(prefix));
    if (all.length) {
      return all.filter((t) => active.has(t.name)).map((t) => ({ name: t.name, parameters: t.parameters }));
    }
    if (Date.now() > deadline) throw new Error(`AKK's MCP server did not connect in ${connectWait / 1000} s (is akkd running, and is AKK_TOKEN a host token?)`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
