package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// commandHelp is each command's line in akk's help: its arguments and what
// it does.
var commandHelp = []struct{ name, args, short string }{
	{"health", "", "liveness and version"},
	{"list", "[--wide]", "the agent conversations (tmux panes, Codex threads) AKK can see"},
	{"doctor", "", "readiness: tmux, agents and profiles, store, hosts"},
	{"send", "[--wait] [--message-id K] <conversation_id|terminal_id|session_id|-> <text>", "send a task as one Turn (--wait: follow it until it ends or waits on you)"},
	{"status", "[--wait] TURN_ID", "a Turn's state, progress and result (--wait: follow it)"},
	{"turns", "[--state S]", "your Turns"},
	{"respond", "TURN_ID <text>", "answer a Turn waiting for you"},
	{"cancel", "TURN_ID", "interrupt a Turn once"},
	{"close", "TURN_ID [reason]", "release a Turn without touching the pane"},
	{"renew", "TURN_ID", "resume monitoring a stalled Turn"},
	{"recover", "TURN_ID", "reconcile a Turn with the agent's record"},
	{"approve", "<turn_id|terminal_id> approve_once|reject", "answer the permission prompt the status shows"},
	{"interaction", "[--conversation C] TURN_ID", "the questionnaire step a Turn shows"},
	{"respond-interaction", "TURN_ID --interaction ID --answer Q=OPT[,OPT] [--text Q=TEXT]", "answer that step with its semantic ids"},
	{"retry-callback", "<turn_id|watch_id> [notification_id]", "redeliver a failed webhook with its original identity"},
	{"threads", "TERMINAL_ID", "the agent's own conversations in the pane's project"},
	{"new-thread", "TERMINAL_ID", "start a clean native thread in an idle pane"},
	{"clear-thread", "TERMINAL_ID", "the same as new-thread"},
	{"resume-thread", "TERMINAL_ID NATIVE_THREAD_ID|--previous", "resume one of the agent's threads"},
	{"inspect", "TERMINAL_ID", "the agent's own status view, read once"},
	{"screen", "TERMINAL_ID", "the pane's screen as the agent shows it, redacted (sends nothing)"},
	{"models", "TERMINAL_ID", "the agent's models and the reasoning effort in effect"},
	{"set-model", "TERMINAL_ID MODEL EFFORT", "set that model's effort, from the catalogue just read"},
	{"repair-model-control", "TERMINAL_ID", "close a model picker left open (never selects)"},
	{"permissions", "TERMINAL_ID", "the agent's permission mode and the modes it offers"},
	{"set-permissions", "TERMINAL_ID MODE", "change it (a mode id from permissions)"},
	{"identify", "TERMINAL_ID", "which thread an idle Codex pane shows (diagnostic)"},
	{"watch", "TERMINAL_ID", "watch a task a person started (no input, ever)"},
	{"watch-status", "WATCH_ID", "a Watch's state"},
	{"unwatch", "WATCH_ID", "stop watching"},
	{"watch-renew", "WATCH_ID", "restart a timed-out Watch"},
	{"watch-recover", "WATCH_ID", "reconcile a Watch with the agent's record"},
	{"hosts", "list|add|set-webhook|ping|rotate-secret|rotate-token|delete|approval-policy …", "the hosts that drive AKK and their webhooks"},
	{"nodes", "[remove NAME]", "the daemons of the fleet; remove one gone for good"},
	{"notifications", "[--state S] | retry ID", "the webhook outbox"},
	{"events", "[--follow] [--since N]", "stream events (SSE) until interrupted"},
	{"hooks", "install|remove|status|revoke claude-code [--settings FILE]", "AKK's http hooks in Claude Code's user settings"},
	{"mcp", "[--conversation C]", "serve the daemon's MCP tools on stdin/stdout (with a host token)"},
}

// commandTree is akk's commands for cobra: help, "did you mean" and
// completion scripts (akk completion bash|zsh|fish). Each command parses
// its own flags (pflag, before or after its arguments); the global flags
// were read before.
func (c *cli) commandTree() *cobra.Command {
	root := &cobra.Command{Use: "akk", Short: "operator CLI for the AKK daemon", SilenceErrors: true, SilenceUsage: true}
	root.SetOut(c.out)
	root.SetErr(c.out)
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) {
		if cmd == root {
			fmt.Fprint(c.out, usage)
			return
		}
		fmt.Fprintf(c.out, "%s\n\nUsage:\n  %s\n", cmd.Short, cmd.UseLine())
	})
	for _, h := range commandHelp {
		name := h.name
		use := name
		if h.args != "" {
			use += " " + h.args
		}
		sub := &cobra.Command{Use: use, Short: h.short, DisableFlagParsing: true, DisableFlagsInUseLine: true}
		sub.RunE = func(_ *cobra.Command, args []string) error {
			if len(args) == 1 && (args[0] == "--help" || args[0] == "-h") {
				return sub.Help()
			}
			return c.runCommand(name, args)
		}
		root.AddCommand(sub)
	}
	return root
}

// runCommand runs one command: local ones at once, the others with the
// API client.
func (c *cli) runCommand(name string, args []string) error {
	if name == "hooks" {
		// Local files only: the agent's settings and the hook credential.
		return c.hooksCmd(args, c.stateDir)
	}
	if err := c.connect(name != "health"); err != nil {
		return err
	}
	return c.explain(c.dispatch(append([]string{name}, args...)))
}
