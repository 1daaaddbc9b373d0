// AKK's OpenClaw plugin. Three things, nothing decided here:
//  - the capability handshake (../common/catalogue.js): before each turn,
//    on the turn's finished tool surface, every tool of AKK's catalogue
//    (GET /v1/tools) must be one the model may call, and each AKK tool the
//    model calls must be one of the catalogue. On a difference
//    the plugin refuses: AKK's tools are blocked in that session with the
//    reason, which the log and /akk show. OpenClaw gives a plugin no list
//    of the tools it took from an MCP server, so the check asks the turn's
//    tool authority about each catalogue tool, and each call about itself;
//  - /akk commands in a chat, answered by AKK's REST API with no model call
//    (../common/akk.js), as the chat's own conversation;
//  - each call of a tool of AKK's MCP server carries the OpenClaw session it
//    comes from (the akk_conversation argument, AKK's AKK-Conversation for
//    that call), so a Turn's callbacks name that session and OpenClaw's
//    hook mapping runs them in it. OpenClaw's MCP client sends one fixed
//    set of headers for every session; the model never types the session.
import { run } from "../common/akk.js";
import { compare, fetchCatalogue, refusal } from "../common/catalogue.js";

// The catalogue and the refusals are the gateway process's, not one
// module's: OpenClaw loads a plugin more than once (its command and its
// hooks come from different loads), and a session refused by a hook must
// be refused by /akk too.
const state = (globalThis[Symbol.for("akk.openclaw")] ??= { catalogue: null, refused: new Map() }); // refused: session key -> why

export default {
  id: "akk",
  name: "AKK",
  description: "the capability handshake, /akk commands and the session reference on AKK's MCP tool calls",
  register(api) {
    const cfg = api.pluginConfig ?? {};
    const prefix = `${(cfg.mcpServer ?? "akk").toLowerCase()}__`;
    const refused = state.refused;
    const load = async () => {
      state.catalogue ??= await fetchCatalogue(cfg);
      return state.catalogue;
    };
    const refuse = (key, why) => {
      if (refused.get(key) !== why) api.logger.error(`${why} (session ${key})`);
      refused.set(key, why);
    };

    api.on("gateway_start", async () => {
      try {
        const c = await load();
        api.logger.info(`AKK catalogue ${c.catalogue_version}: ${c.tools.length} tools`);
      } catch (err) {
        api.logger.error(`AKK connector: ${err?.message ?? err}; checked again before each turn`);
      }
    });

    api.on(
      "before_prompt_build",
      async (_event, ctx) => {
        const authority = ctx?.toolAuthority;
        const key = ctx?.sessionKey;
        if (!authority || !key) return undefined;
        let c;
        try {
          c = await load();
        } catch (err) {
          refuse(key, `AKK connector refused to start: ${err?.message ?? err}`);
          return undefined;
        }
        const registered = c.tools.filter((t) => authority.allows(prefix + t.name)).map((t) => ({ name: prefix + t.name }));
        const diffs = compare(c, prefix, registered);
        if (diffs.length) refuse(key, refusal(c, diffs));
        else refused.delete(key);
        return undefined;
      },
      { requiresToolAuthority: true },
    );

    api.registerCommand({
      name: "akk",
      description: "AKK: list, send, status, watch, approve, cancel the coding agents in your tmux panes",
      acceptsArgs: true,
      handler: async (ctx) => ({ text: refused.get(ctx.sessionKey) ?? (await run(cfg, ctx.sessionKey, ctx.args ?? "")) }),
    });

    api.on("before_tool_call", (event, ctx) => {
      const name = String(event?.toolName ?? "").toLowerCase();
      if (!name.startsWith(prefix) || !ctx?.sessionKey) {
        return undefined;
      }
      const why = refused.get(ctx.sessionKey);
      if (why) return { block: true, blockReason: why };
      const params = event.params ?? {};
      const c = state.catalogue;
      if (c && !c.tools.some((t) => prefix + t.name === name)) {
        return { block: true, blockReason: refusal(c, [`${name} is registered but not in AKK's catalogue`]) };
      }
      return { params: { ...params, akk_conversation: ctx.sessionKey } };
    });
  },
};
