// AKK's DeepSeek Harness plugin: dsh as an AKK host. Loaded by the patch
// row in akk.yml, beside the dsh-mcp-client row that connects dsh to AKK's
// MCP server with the host's token. It decides nothing itself:
//  - the capability handshake (../common/catalogue.js): once dsh has
//    registered AKK's tools, they must be AKK's catalogue (GET /v1/tools),
//    or the plugin refuses to start: every AKK tool call is denied with what
//    differs, and no callback is taken;
//  - each call of an AKK tool carries its dsh session as the conversation
//    reference (akk_conversation = "dsh:<session id>"): dsh lets no plugin
//    change a tool's arguments, so the argument is added to the MCP
//    request dsh sends for that call, and only to AKK's;
//  - AKK's signed callbacks (AKK_CALLBACK_LISTEN) continue the session that
//    sent the Turn with one user message, queued when it is busy.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { compare, fetchCatalogue, refusal } from "../common/catalogue.js";
import { config, notStarted, splitAddr } from "../common/config.js";
import { receiver, wakeText } from "../common/webhook.js";

export const name = "akk";
export const inject = ["agents", "tools"];

// connectWait bounds the wait for dsh to register AKK's tools.
const connectWait = 30000;

export function apply(ctx) {
  const { cfg, missing } = config(process.env);
  const prefix = `mcp__${cfg.server}__`;
  const mcpURL = new URL("/mcp", cfg.url).toString();
  const log = (level, msg) => console.error(`[akk] ${level}: ${msg}`);
  let refused = missing.length ? notStarted(missing) : "AKK connector starting: its handshake with AKK's catalogue has not ended";
  let listener = null;

  // Until the handshake has passed, and after it failed, AKK's tools are
  // denied with the reason (the model reads it as the tool's result).
  ctx.effect(() => ctx.tools.guard((exec) => (String(exec?.name).startsWith(prefix) && refused ? refused : undefined)), "akk handshake guard");

  // The session of the AKK call in flight, and the MCP request that
  // carries it.
  const calls = new AsyncLocalStorage();
  ctx.on("tools/execute", (exec, next) => {
    if (!String(exec.name).startsWith(prefix)) return next();
    return calls.run({ session: exec.agent?.id }, next);
  });
  ctx.effect(() => {
    const original = globalThis.fetch;
    globalThis.fetch = function akkFetch(input, init) {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input?.url;
      const session = calls.getStore()?.session;
      if (session && url?.startsWith(mcpURL) && typeof init?.body === "string") {
        try {
          const msg = JSON.parse(init.body);
          if (msg.method === "tools/call" && msg.params) {
            msg.params.arguments = { ...(msg.params.arguments ?? {}), akk_conversation: `dsh:${session}` };
            init = { ...init, body: JSON.stringify(msg) };
          }
        } catch {
          // not JSON: sent as it is
        }
      }
      return original.call(this, input, init);
    };
    return () => {
      globalThis.fetch = original;
    };
  }, "akk session on AKK's MCP calls");

  // wake continues the session a callback names, as the web app's own
  // prompt does: queued behind a running turn, and a session no longer in
  // memory is loaded first.
  const wake = async (payload) => {
    const conv = String(payload?.data?.conversation ?? "");
    if (!conv.startsWith("dsh:")) {
      log("warn", `${payload?.type} for ${conv || "no session"}, not a dsh session: nothing was sent to a model`);
      return;
    }
    const session = conv.slice(4);
    const text = wakeText(payload);
    const api = ctx.get("apiProxy");
    if (api) {
      const res = await api.sessions.prompt({ rpcId: `akk-${randomUUID()}`, payload: { sessionId: session, mode: "queue", content: [{ type: "text", text }] } });
      if (!res?.result?.ok) log("error", `${payload?.type} for ${conv}: dsh refused the message: ${JSON.stringify(res?.result?.error)}`);
      return;
    }
    log("error", `${payload?.type} for ${conv}: this dsh has no web app to continue sessions with (run the web profile)`);
  };

  if (missing.length) {
    log("error", refused);
    return;
  }

  ctx.effect(() => {
    let stopped = false;
    (async () => {
      try {
        const catalogue = await fetchCatalogue(cfg);
        const registered = await registration(ctx, prefix, () => stopped);
        const diffs = compare(catalogue, prefix, registered);
        if (diffs.length) throw new Error(refusal(catalogue, diffs));
        const [host, port] = splitAddr(cfg.listen);
        listener = await new Promise((resolve, reject) => {
          const srv = createServer(receiver(cfg.secret, (p) => wake(p).catch((err) => log("error", String(err?.message ?? err)))));
          srv.once("error", reject);
          srv.listen(Number(port), host, () => resolve(srv));
        });
        if (stopped) {
          listener.close();
          return;
        }
        refused = null;
        log("info", `AKK connector ready: ${catalogue.tools.length} tools of catalogue ${catalogue.catalogue_version}; callbacks on ${cfg.listen}`);
      } catch (err) {
        refused = String(err?.message ?? err);
        if (!refused.startsWith("AKK connector")) refused = `AKK connector refused to start: ${refused}`;
        log("error", refused);
      }
    })();
    return () => {
      stopped = true;
      refused = "AKK connector stopped";
      if (listener) listener.close();
      listener = null;
    };
  }, "akk handshake and callbacks");
}

// registration is what dsh registered of AKK's server once it connected:
// the tools every session's model is offered, with their arguments.
async function registration(ctx, prefix, stopped) {
  const deadline = Date.now() + connectWait;
  for (;;) {
    const mine = ctx.tools.schemas().filter((s) => String(s.name).startsWith(prefix));
    if (mine.length) return mine.map((s) => ({ name: s.name, parameters: s.parameters }));
    if (stopped()) throw new Error("stopped before AKK's MCP server connected");
    if (Date.now() > deadline) throw new Error(`AKK's MCP server did not connect in ${connectWait / 1000} s (is akkd running, and is AKK_TOKEN a host token?)`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
