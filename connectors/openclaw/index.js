// AKK's OpenClaw plugin. Two things, nothing decided here:
//  - /akk commands in a chat, answered by AKK's REST API with no model call
//    (akk.js), as the chat's own conversation;
//  - each call of a tool of AKK's MCP server carries the OpenClaw session it
//    comes from (the akk_conversation argument, AKK's AKK-Conversation for
//    that call), so a Turn's callbacks name that session and OpenClaw's
//    hook mapping runs them in it. OpenClaw's MCP client sends one fixed
//    set of headers for every session; the model never types the session.
import { run } from "../common/akk.js";

export default {
  id: "akk",
  name: "AKK",
  description: "/akk commands and the session reference on AKK's MCP tool calls",
  register(api) {
    const cfg = api.pluginConfig ?? {};
    const prefix = `${(cfg.mcpServer ?? "akk").toLowerCase()}__`;
    api.registerCommand({
      name: "akk",
      description: "AKK: list, send, status, watch, approve, cancel the coding agents in your tmux panes",
      acceptsArgs: true,
      handler: async (ctx) => ({ text: await run(cfg, ctx.sessionKey, ctx.args ?? "") }),
    });
    api.on("before_tool_call", (event, ctx) => {
      const name = String(event?.toolName ?? "").toLowerCase();
      if (!name.startsWith(prefix) || !ctx?.sessionKey) {
        return undefined;
      }
      return { params: { ...(event.params ?? {}), akk_conversation: ctx.sessionKey } };
    });
  },
};
