package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"akk/cmd/akk/client"
)

const usage = `akk: operator CLI for the AKK daemon

Usage:
  akk [global flags] <command> [flags]

Commands:
  health                          liveness and version
  list [--wide]                   the agent conversations (tmux panes, Codex threads) AKK can see
  doctor                          readiness: tmux, agents and profiles, store, hosts
  send [--wait] [--message-id K] <conversation_id|terminal_id|session_id|-> <text>
                                  send a task as one Turn (- : the only send-ready terminal)
  status [--wait] TURN_ID         a Turn's state, progress and result (--wait: follow it)
  turns [--state S]               your Turns
  respond TURN_ID <text>          answer a Turn waiting for you
  cancel TURN_ID                  interrupt a Turn once
  close TURN_ID [reason]          release a Turn without touching the pane
  renew TURN_ID                   resume monitoring a stalled Turn
  recover TURN_ID                 reconcile a Turn with the agent's record
  approve <turn_id|terminal_id> approve_once|reject
                                  answer the permission prompt the status shows
  interaction [--conversation C] TURN_ID
                                  the questionnaire step a Turn shows (offered to this conversation)
  respond-interaction TURN_ID --interaction ID --answer Q=OPT[,OPT] [--text Q=TEXT]
                                  answer that step with its semantic ids
  retry-callback <turn_id|watch_id> [notification_id]
                                  redeliver a failed webhook with its original identity
  threads TERMINAL_ID             the agent's own conversations in the pane's project (from its records)
  new-thread TERMINAL_ID          start a clean native thread in an idle pane (clear-thread: the same)
  resume-thread TERMINAL_ID NATIVE_THREAD_ID|--previous
                                  resume one of those threads (its complete id), or the one
                                  your last new-thread or resume there left
  inspect TERMINAL_ID             the agent's own status view, read once (version, model, thread)
  models TERMINAL_ID
                                  the agent's models and the reasoning effort in effect (its own UI, once)
  set-model TERMINAL_ID MODEL EFFORT
                                  set that model's effort, from the catalogue just read
  repair-model-control TERMINAL_ID
                                  close a model picker left open, or clear a bare /model (never selects)
  permissions TERMINAL_ID         the agent's permission mode and the modes it offers
  set-permissions TERMINAL_ID MODE
                                  change it (a mode id from permissions)
  identify TERMINAL_ID            which thread an idle Codex pane shows (diagnostic, authorizes nothing)
  screen TERMINAL_ID              the pane's screen as the agent shows it, redacted (sends nothing)
  watch TERMINAL_ID               watch a task a person started (no input, ever)
  watch-status WATCH_ID / unwatch WATCH_ID
  watch-renew WATCH_ID            restart a timed-out Watch
  watch-recover WATCH_ID          reconcile a Watch with the agent's record
  hosts list                      registered hosts
  hosts add --name N --webhook-url URL [--header 'Name: value' ...] [--event TYPE ...]
                                  register a host; prints its token and secret once
  hosts set-webhook HOST_ID --url URL [--header 'Name: value' ...] [--event TYPE ...]
                                  replace a host's webhook URL, delivery headers and event types
                                  (no --header: none; no --event: every type)
  hosts ping HOST_ID              send a signed host.ping webhook
  hosts rotate-secret HOST_ID     replace a host's webhook secret
  hosts rotate-token HOST_ID      replace a host's bearer token (the old one is refused at once)
  hosts delete HOST_ID            remove a host (its Turns stop calling back)
  hosts approval-policy HOST_ID [--rule 'touch notes.txt' ...|--off]
                                  show or replace a host's exact-command auto-approval rules
  nodes                           the daemons of the fleet and whether each is live
  nodes remove NAME               remove a node that is gone for good (refused while it runs)
  notifications [--state S]       the webhook outbox
  notifications retry ID          redeliver a notification now
  events [--follow] [--since N]   stream events (SSE) until interrupted
  hooks install|remove|status|revoke claude-code [--settings FILE]
                                  AKK's http hooks in Claude Code's user settings
                                  (default ~/.claude/settings.json): its permission prompts
                                  reach AKK exactly, on any version; revoke replaces the credential
  mcp [--conversation C]          serve the daemon's MCP tools on stdin/stdout (for agent hosts
                                  that start MCP servers as commands); use a host token
  completion bash|zsh|fish        a shell completion script (source <(akk completion bash))
  help [COMMAND]                  this text, or one command's

Global flags (before or after the command; after "hosts", --url only before it):
  --url URL          daemon address, http://HOST:PORT or HOST:PORT (env AKK_URL, default http://127.0.0.1:7788)
  --token TOKEN      bearer token (env AKK_TOKEN, default: the operator token in the state dir)
  --state-dir DIR    daemon state dir (env AKK_STATE_DIR, default $XDG_STATE_HOME/akk or ~/.local/state/akk)
  --json             print JSON instead of tables
  --version          print akk's version

Config file: $XDG_CONFIG_HOME/akk/config.toml (or AKK_CONFIG) may set url, token_file
and state_dir; flags and the environment win over it.

Exit codes: 0 done, 1 other failure, 2 usage, 3 akkd unreachable, 4 not found,
5 refused (conflict, forbidden, invalid, wrong token), 6 uncertain (do not repeat).
`

type cli struct {
	ctx    context.Context
	api    *client.ClientWithResponses
	url    string
	token  string
	json   bool
	out    io.Writer
	getenv func(string) string
	// stateDir is the daemon's state dir (its operator token and hook
	// credential).
	stateDir string
	// tokenFile is where the token was read from ("" when given).
	tokenFile string
}

// commands are the command words, for "did you mean".
var commands = []string{"health", "list", "doctor", "send", "status", "turns", "respond", "cancel", "close", "renew", "recover",
	"approve", "watch", "unwatch", "watch-status", "watch-renew", "watch-recover", "retry-callback", "interaction",
	"respond-interaction", "hosts", "notifications", "events", "mcp", "threads", "new-thread", "clear-thread", "resume-thread",
	"inspect", "identify", "screen", "permissions", "set-permissions", "models", "set-model", "repair-model-control", "hooks", "help", "completion"}

// hoistGlobals moves the global flags a person put after the command in
// front of it, so `akk list --json` is `akk --json list`. Nothing after
// "--" moves; --url stays with "hosts" (set-webhook has its own).
func hoistGlobals(args []string) []string {
	if len(args) < 2 {
		return args
	}
	var globals, rest []string
	cmd := ""
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if cmd == "" {
				cmd = a
			}
			rest = append(rest, a)
			continue
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		valued := name == "url" || name == "token" || name == "state-dir"
		if cmd != "" && name != "json" && name != "version" && (!valued || (name == "url" && cmd == "hosts")) {
			rest = append(rest, a) // the command's own flag
			continue
		}
		globals = append(globals, a)
		if valued && !inline && i+1 < len(args) {
			globals = append(globals, args[i+1])
			i++
		}
	}
	return append(append([]string{args[0]}, globals...), rest...)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	args = hoistGlobals(args)
	fs := flag.NewFlagSet("akk", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	url := fs.String("url", "", "")
	token := fs.String("token", getenv("AKK_TOKEN"), "")
	stateDir := fs.String("state-dir", "", "")
	asJSON := fs.Bool("json", false, "")
	showVersion := fs.Bool("version", false, "")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return nil
		}
		return usageErr(err.Error() + " (see akk help)")
	}
	if *showVersion {
		fmt.Fprintf(stdout, "akk %s\n", version)
		return nil
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprint(stdout, usage)
		return usageErr("no command")
	}
	if !slices.Contains(commands, rest[0]) && !strings.HasPrefix(rest[0], "__complete") {
		msg := fmt.Sprintf("unknown command %q", rest[0])
		if m := didYouMean(rest[0], commands); m != "" {
			msg += fmt.Sprintf(": did you mean %q?", m)
		}
		return usageErr(msg + " (see akk help)")
	}
	// Flags, then the environment, then the config file, then defaults.
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	pick := func(flagValue, env, fromFile, def string) string {
		for _, v := range []string{flagValue, getenv(env), fromFile} {
			if v != "" {
				return v
			}
		}
		return def
	}
	base, err := normalizeURL(pick(*url, "AKK_URL", cfg.URL, "http://127.0.0.1:7788"))
	if err != nil {
		return err
	}
	c := &cli{ctx: ctx, url: base, token: *token, json: *asJSON, out: stdout, getenv: getenv,
		stateDir: pick(*stateDir, "AKK_STATE_DIR", cfg.StateDir, defaultStateDir(getenv)), tokenFile: cfg.TokenFile}
	root := c.commandTree()
	root.SetArgs(rest)
	return root.ExecuteContext(ctx)
}

// connect readies the API client of a command that calls akkd: the token
// from --token or AKK_TOKEN, else the config file's token_file, else the
// operator token in the state dir.
func (c *cli) connect(needToken bool) error {
	if c.token == "" && needToken {
		if c.tokenFile == "" {
			c.tokenFile = filepath.Join(c.stateDir, "operator.token")
		}
		b, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return &cliError{code: exitUsage, msg: fmt.Sprintf("no token: akk reads the operator token from %s, which akkd writes at its first start (%v).\n"+
				"  Start akkd first (with the same --state-dir), or pass --token / AKK_TOKEN.", c.tokenFile, err)}
		}
		c.token = strings.TrimSpace(string(b))
	} else if c.token != "" {
		c.tokenFile = ""
	}
	api, err := client.NewClientWithResponses(c.url, client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		if c.token != "" {
			r.Header.Set("Authorization", "Bearer "+c.token)
		}
		return nil
	}))
	if err != nil {
		return err
	}
	c.api = api
	return nil
}

// dispatch runs the command rest names.
func (c *cli) dispatch(rest []string) error {
	switch rest[0] {
	case "health":
		return c.health()
	case "list":
		return c.list(rest[1:])
	case "doctor":
		return c.doctor()
	case "send":
		return c.send(rest[1:])
	case "status":
		return c.status(rest[1:])
	case "turns":
		return c.turns(rest[1:])
	case "respond", "cancel", "close", "renew", "recover":
		return c.turnAction(rest[0], rest[1:])
	case "approve":
		return c.approve(rest[1:])
	case "watch", "unwatch", "watch-status":
		return c.watch(rest[0], rest[1:])
	case "watch-renew", "watch-recover":
		return c.watchRecovery(rest[0], rest[1:])
	case "retry-callback":
		return c.retryCallback(rest[1:])
	case "interaction":
		return c.interaction(rest[1:])
	case "respond-interaction":
		return c.respondInteraction(rest[1:])
	case "hosts":
		return c.hosts(rest[1:])
	case "notifications":
		return c.notifications(rest[1:])
	case "nodes":
		return c.nodes(rest[1:])
	case "events":
		return c.events(rest[1:])
	case "mcp":
		return c.mcpBridge(rest[1:])
	case "threads":
		return c.threads(rest[1:])
	case "new-thread", "clear-thread", "resume-thread", "inspect", "identify", "permissions", "set-permissions", "models", "set-model", "repair-model-control":
		return c.native(rest[0], rest[1:])
	case "screen":
		return c.screen(rest[1:])
	}
	return usageErr(fmt.Sprintf("unknown command %q (see akk help)", rest[0]))
}

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func defaultStateDir(getenv func(string) string) string {
	if x := getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "akk")
	}
	return filepath.Join(getenv("HOME"), ".local", "state", "akk")
}

// check turns a non-2xx answer into an error carrying the problem's code.
func check(resp *http.Response, body []byte, err error) error {
	if err != nil {
		return err
	}
	if resp.StatusCode < 300 {
		return nil
	}
	var p client.Problem
	if json.Unmarshal(body, &p) == nil && p.Code != "" {
		detail := ""
		if p.Detail != nil {
			detail = ": " + *p.Detail
		}
		return &apiError{status: resp.StatusCode, code: p.Code, msg: fmt.Sprintf("%d %s%s", p.Status, p.Code, detail)}
	}
	return &apiError{status: resp.StatusCode, msg: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(body))}
}

func (c *cli) printJSON(body []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, body, "", "  "); err != nil {
		_, err = c.out.Write(body)
		return err
	}
	buf.WriteByte('\n')
	_, err := c.out.Write(buf.Bytes())
	return err
}

func (c *cli) table(header string, rows [][]string) {
	tw := tabwriter.NewWriter(c.out, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

func (c *cli) health() error {
	r, err := c.api.GetHealthWithResponse(c.ctx)
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	fmt.Fprintf(c.out, "%s (version %s) at %s\n", r.JSON200.Status, r.JSON200.Version, c.url)
	return nil
}
