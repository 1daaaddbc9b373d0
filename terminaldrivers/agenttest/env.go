package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest/fakemodel"
)

// Fake credentials the agents are started with; they only reach the fake
// model. Each Env appends its own number (APIKey), so requests to a shared
// fake model can be told apart (fakemodel.Request.Client).
const (
	FakeAnthropicKey = "sk-ant-api03-akk-fake-test-key-"
	FakeOpenAIKeyEnv = "AKK_FAKE_OPENAI_KEY"
	FakeOpenAIKey    = "akk-fake-openai-key-"
	// CodexModel is a model every pinned Codex knows (no "model metadata not
	// found" warning) that gets the classic tools (exec_command,
	// request_user_input). Codex 0.169.0 offers to migrate it; the config
	// records that offer as seen.
	CodexModel = "gpt-5.5"
)

// Default pane size.
const (
	DefaultWidth  = 120
	DefaultHeight = 40
)

// Options tune an Env. The zero value is what most tests want.
type Options struct {
	// Model is a fake model shared by several Envs; nil starts one for this
	// Env, closed at cleanup.
	Model *fakemodel.Server
	// ProjectDir is the folder the agent starts in. Empty: a fresh temp dir
	// named akk-project-*.
	// When set, it is created if missing and removed at cleanup only if this
	// Env created it. Fixtures use a short neutral path so captured screens
	// do not show a machine's temp layout.
	ProjectDir string
	// Width and Height of the pane; zero means DefaultWidth x DefaultHeight.
	Width, Height int
	// Untrusted leaves the project folder untrusted, so the agent shows its
	// trust dialog at start.
	Untrusted bool
	// ShowOffers leaves out the settings that keep start-up offers away
	// (Claude Code's hasSeenAutoDefaultNotice and skipAutoPermissionPrompt,
	// Codex's record of the model migration offer), to capture them.
	ShowOffers bool
	// UnapprovedKey leaves Claude Code's API key unapproved, so it asks
	// "Detected a custom API key … Do you want to use this API key?".
	UnapprovedKey bool
	// BeforeAnswer, if set, is called when WaitReady meets a start-up offer
	// (DialogAutoMode, DialogModelMigrate), before it answers it.
	BeforeAnswer func(e *Env, dialog string)
	// ExtraEnv is added to the agent's environment (KEY=VALUE).
	ExtraEnv []string
	// MCPServers are Claude Code's user-scope MCP servers (name -> its
	// config, e.g. {"type":"http","url":...,"headers":{...}}); their tools
	// are allowed without a prompt. See AddMCPServer.
	MCPServers map[string]any
	// AsyncQuestions gives Codex a model catalog whose entry for CodexModel
	// lists request_user_input_async among its experimental tools, so the
	// model is offered the async question tool (Codex 0.154.0 and later;
	// without it no pinned version offers the tool to a custom provider).
	AsyncQuestions bool
	// ThreadTitle has Codex name its thread in the pane title
	// ([tui] terminal_title = ["thread-id"], Codex 0.158.0 and later).
	ThreadTitle bool
	// LongCatalog gives Codex a model catalog of fourteen models (CodexModel
	// among them, each with three efforts): a model list long enough to
	// scroll in every version's picker.
	LongCatalog bool
	// ThreadUnloadDelay, when set, is how long (seconds) Codex's app-server
	// daemon keeps a thread nobody listens to loaded.
	ThreadUnloadDelay int
	// ModelName names the model in Codex's config instead of CodexModel:
	// a model of the custom provider's own that no built-in catalogue
	// lists, as users of a local model, a proxy or a company gateway
	// configure.
	ModelName string
}

// AddMCPServer configures an MCP server for Claude Code before Start (its
// tools allowed without asking), for a server whose address is known only
// after New.
func (e *Env) AddMCPServer(name string, cfg map[string]any) {
	e.t.Helper()
	if e.Agent.Kind != KindClaude {
		e.t.Fatalf("agenttest: AddMCPServer is for Claude Code, not %s", e.Agent.Kind)
	}
	if e.opts.MCPServers == nil {
		e.opts.MCPServers = map[string]any{}
	}
	e.opts.MCPServers[name] = cfg
	if err := e.writeClaudeConfig(); err != nil {
		e.t.Fatal(err)
	}
}

// Env is one isolated agent environment: its own tmux server, HOME (and
// CODEX_HOME under it), fake model and project folder. Everything it starts is
// stopped by t.Cleanup, by pid.
type Env struct {
	t     testing.TB
	Agent Agent
	Model *fakemodel.Server
	Home  string // the agent's HOME
	// CodexHome is $HOME/.codex (set for both kinds; only Codex uses it).
	CodexHome  string
	ProjectDir string
	// SocketName is the tmux -L name; SocketPath the server's socket file.
	SocketName string
	Width      int
	Height     int

	opts      Options
	tmuxEnv   []string
	ownsModel bool
	seq       int64
	reader    *reader // shared by the Env's WithT copies
}

// APIKey is the fake API key this Env's agent presents to the model.
func (e *Env) APIKey() string {
	if e.Agent.Kind == KindCodex {
		return fmt.Sprintf("%s%012d", FakeOpenAIKey, e.seq)
	}
	return fmt.Sprintf("%s%012d", FakeAnthropicKey, e.seq)
}

// Requests are the fake model's recorded requests that came from this Env's
// agent (a shared model also serves others).
func (e *Env) Requests() []fakemodel.Request {
	id := fakemodel.ClientID(e.APIKey())
	var out []fakemodel.Request
	for _, r := range e.Model.Requests() {
		if r.Client == id {
			out = append(out, r)
		}
	}
	return out
}

// WaitModelRequest waits until the fake model has recorded a request from
// this Env's agent that satisfies match, and returns it.
func (e *Env) WaitModelRequest(what string, timeout time.Duration, match func(fakemodel.Request) bool) fakemodel.Request {
	e.t.Helper()
	timeout = Patient(timeout)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	id := fakemodel.ClientID(e.APIKey())
	r, err := e.Model.WaitRequest(ctx, func(r fakemodel.Request) bool { return r.Client == id && match(r) })
	if err != nil {
		screen, _ := e.Tmux("capture-pane", "-p", "-t", e.Target())
		e.t.Fatalf("%s: timed out after %s waiting for the model to see %s; requests: %+v\nlast screen:\n%s",
			e.Agent.Name(), timeout, what, e.Requests(), frame(screen))
	}
	return r
}

// WithT returns the same Env reporting to another test, e.g. a subtest that
// runs one step in the Env's pane. Cleanup stays with the test that made it.
func (e *Env) WithT(t testing.TB) *Env {
	c := *e
	c.t = t
	return &c
}

var envSeq atomic.Int64

// live is every Env not yet cleaned up, by project folder: how a test's
// failure message shows the screen of the pane it waited on.
var live sync.Map

// ByProject is the live Env whose project folder is dir, or nil.
func ByProject(dir string) *Env {
	if v, ok := live.Load(dir); ok {
		return v.(*Env)
	}
	return nil
}

// Screen is the pane's screen framed for a failure message ("" when it
// cannot be read).
func (e *Env) Screen() string {
	out, err := e.Tmux("capture-pane", "-p", "-t", e.Target())
	if err != nil {
		return ""
	}
	return frame(out)
}

// New prepares an Env for agent a: temp HOME with the agent's configuration,
// the fake model, the project folder and a unique tmux socket name. It does
// not start the agent; call Start (or StartReady).
func New(t testing.TB, a Agent, opts Options) *Env {
	t.Helper()
	RequireTmux(t)
	// A short base, not t.TempDir(): Codex 0.158.0 and later put a unix
	// socket under $CODEX_HOME, and a socket path must stay under 108 bytes
	// whatever the test's name.
	base, err := os.MkdirTemp("", "akk-env-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	e := &Env{t: t, Agent: a, opts: opts, Width: opts.Width, Height: opts.Height, reader: &reader{}}
	if e.Width == 0 {
		e.Width = DefaultWidth
	}
	if e.Height == 0 {
		e.Height = DefaultHeight
	}
	e.Home = filepath.Join(base, "home")
	e.CodexHome = filepath.Join(e.Home, ".codex")
	e.seq = envSeq.Add(1)
	e.SocketName = fmt.Sprintf("akk-test-%d-%d-%d", os.Getpid(), e.seq, time.Now().UnixNano()%1e6)
	for _, d := range []string{e.Home, e.CodexHome, filepath.Join(e.Home, "tmp"), filepath.Join(e.Home, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if opts.ProjectDir != "" {
		e.ProjectDir = opts.ProjectDir
		if _, err := os.Stat(e.ProjectDir); os.IsNotExist(err) {
			if err := os.MkdirAll(e.ProjectDir, 0o755); err != nil {
				t.Fatal(err)
			}
			dir := e.ProjectDir
			t.Cleanup(func() { os.RemoveAll(dir) })
		}
	} else {
		// A short, neutral path: it is shown in the agents' banners and
		// status lines, which truncate long paths.
		dir, err := os.MkdirTemp("", "akk-project-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		e.ProjectDir = dir
	}
	if p, err := filepath.EvalSymlinks(e.ProjectDir); err == nil {
		e.ProjectDir = p
	}
	e.Model = opts.Model
	if e.Model == nil {
		e.Model = fakemodel.New(fakemodel.Options{DumpDir: dumpDir(t)})
		if err := e.Model.Start("127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		e.ownsModel = true
	}
	// Registered after every TempDir call, so it runs before their removal.
	t.Cleanup(func() { live.Delete(e.ProjectDir); e.cleanup(t) })
	live.Store(e.ProjectDir, e)
	if err := e.writeConfig(); err != nil {
		t.Fatal(err)
	}
	e.tmuxEnv = append(e.baseEnv(), TestNameEnv+"=/"+t.Name())
	return e
}

// TestNameEnv names, in the environment of the tmux server and so of the
// agent and every command it runs, the test that made the Env: what a
// sampler of the machine's processes reads to say which test spent the
// CPU (TESTING.md, "Where the CPU goes").
const TestNameEnv = "AKK_TEST_NAME"

// DumpEnv names a folder where each Env's own fake model writes the raw
// request bodies it receives (<folder>/<test name>/NNNN-<api>.json): how the
// requests of a new agent version are studied.
const DumpEnv = "AKK_FAKEMODEL_DUMP"

func dumpDir(t testing.TB) string {
	root := os.Getenv(DumpEnv)
	if root == "" {
		return ""
	}
	dir := filepath.Join(root, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// baseEnv is the environment of the tmux server, and so of the pane: the
// test's HOME and nothing of the caller's session beyond PATH.
func (e *Env) baseEnv() []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.Home,
		"USER=" + userName(),
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"TERM=xterm-256color",
		"SHELL=/bin/bash",
		// A temp dir inside the test home: Codex refuses helper binaries when
		// CODEX_HOME is under the temp dir, and nothing should leak out.
		"TMPDIR=" + filepath.Join(e.Home, "tmp"),
		"XDG_CONFIG_HOME=" + filepath.Join(e.Home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(e.Home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(e.Home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(e.Home, ".local", "state"),
	}
	if d := os.Getenv("TMUX_TMPDIR"); d != "" {
		env = append(env, "TMUX_TMPDIR="+d)
	}
	return env
}

// AgentEnv is the environment the agent process gets on top of the tmux
// server's (HOME, TMPDIR, XDG dirs, PATH).
func (e *Env) AgentEnv() []string {
	var env []string
	switch e.Agent.Kind {
	case KindClaude:
		env = []string{
			"ANTHROPIC_BASE_URL=" + e.Model.URL(),
			"ANTHROPIC_API_KEY=" + e.APIKey(),
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1",
		}
	case KindCodex:
		env = []string{"CODEX_HOME=" + e.CodexHome, FakeOpenAIKeyEnv + "=" + e.APIKey()}
	}
	env = append(env, "HOME="+e.Home)
	return append(env, e.opts.ExtraEnv...)
}

func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "akk"
}

func (e *Env) writeConfig() error {
	switch e.Agent.Kind {
	case KindClaude:
		return e.writeClaudeConfig()
	case KindCodex:
		return e.writeCodexConfig()
	}
	return fmt.Errorf("agenttest: unknown agent kind %q", e.Agent.Kind)
}

func (e *Env) writeClaudeConfig() error {
	project := map[string]any{"hasTrustDialogAccepted": !e.opts.Untrusted}
	key := e.APIKey()
	approved := []string{key[len(key)-20:]}
	if e.opts.UnapprovedKey {
		approved = []string{}
	}
	cfg := map[string]any{
		"hasCompletedOnboarding":   true,
		"hasSeenAutoDefaultNotice": !e.opts.ShowOffers,
		// Claude Code remembers an approved key by its last 20 characters.
		"customApiKeyResponses": map[string]any{"approved": approved, "rejected": []string{}},
		"projects":              map[string]any{e.ProjectDir: project},
	}
	perms := map[string]any{"defaultMode": "default"}
	if len(e.opts.MCPServers) > 0 {
		cfg["mcpServers"] = e.opts.MCPServers
		var allow []string
		for name := range e.opts.MCPServers {
			allow = append(allow, "mcp__"+name)
		}
		perms["allow"] = allow
	}
	settings := map[string]any{"permissions": perms}
	if !e.opts.ShowOffers {
		settings["skipAutoPermissionPrompt"] = true
		// Claude Code 2.1.263 and later run a start-up migration that drops
		// skipAutoPermissionPrompt (when manual mode is the default) unless
		// this flag says it already ran; the auto-mode offer then appears
		// some time after the composer, under a test that took the pane as
		// ready.
		cfg["hasResetAutoModeOptInForDefaultOffer"] = true
		// The offer itself (2.1.328 and later, "Make auto mode your default
		// permission mode?") is shown once to a user whose settings name a
		// default mode other than auto, unless this says it was seen; it
		// can come a while after the composer.
		cfg["hasSeenAutoDefaultNudge"] = true
	}
	if err := writeJSONFile(filepath.Join(e.Home, ".claude.json"), cfg); err != nil {
		return err
	}
	return writeJSONFile(filepath.Join(e.Home, ".claude", "settings.json"), settings)
}

func (e *Env) writeCodexConfig() error {
	var b strings.Builder
	model := CodexModel
	if e.opts.ModelName != "" {
		model = e.opts.ModelName
	}
	fmt.Fprintf(&b, "model = %q\nmodel_provider = \"fake\"\ncheck_for_update_on_startup = false\n", model)
	if e.opts.AsyncQuestions || e.opts.LongCatalog {
		catalog := filepath.Join(e.CodexHome, "akk-model-catalog.json")
		cat := codexCatalog([]string{"request_user_input_async"})
		if !e.opts.AsyncQuestions {
			cat = codexCatalog([]string{})
		}
		if e.opts.LongCatalog {
			cat = longCodexCatalog()
		}
		if err := writeJSONFile(catalog, cat); err != nil {
			return err
		}
		fmt.Fprintf(&b, "model_catalog_json = %q\n", catalog)
	}
	if e.opts.ThreadUnloadDelay > 0 {
		fmt.Fprintf(&b, "thread_unload_delay_secs = %d\n", e.opts.ThreadUnloadDelay)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "[model_providers.fake]\nname = \"AKK fake model\"\nbase_url = %q\nwire_api = \"responses\"\nenv_key = %q\n\n",
		e.Model.OpenAIBaseURL(), FakeOpenAIKeyEnv)
	if !e.opts.Untrusted {
		fmt.Fprintf(&b, "[projects.%q]\ntrust_level = \"trusted\"\n\n", e.ProjectDir)
	}
	b.WriteString("[analytics]\nenabled = false\n\n")
	// /tmp is no writable root of the sandbox: Codex protects a writable
	// root's .codex when present, and many Codex instances at once on one
	// machine race over /tmp/.codex (one saw it, another removed it before
	// bwrap bound it: "Can't remount readonly on /newroot/tmp/.codex", a
	// command failed). The project folder, the pane's cwd, stays writable,
	// and so does $TMPDIR (in the Env's home).
	b.WriteString("[sandbox_workspace_write]\nexclude_slash_tmp = true\n\n")
	if e.opts.ThreadTitle {
		b.WriteString("[tui]\nterminal_title = [\"thread-id\"]\n\n")
	}
	if !e.opts.ShowOffers {
		fmt.Fprintf(&b, "[notice.model_migrations]\n%q = \"gpt-6-sol\"\n", CodexModel)
	}
	if err := os.WriteFile(filepath.Join(e.CodexHome, "config.toml"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	e.seedDaemonRelease()
	return nil
}

// seedDaemonRelease installs the agent's own release where Codex 0.158.0
// and later install the app-server daemon they start
// ($CODEX_HOME/packages/app-server-daemon/releases/<version>-<target>, with
// "current" and "auto-update-version" naming it), as hard links to the
// pinned install. Without it each new CODEX_HOME gets a ~430 MB copy before
// the composer shows: seconds of disk writes per test on a busy machine.
// Where links cannot be made, nothing is seeded and Codex copies as before.
func (e *Env) seedDaemonRelease() {
	native, err := filepath.EvalSymlinks(e.Agent.Native())
	if err != nil {
		return
	}
	vendor := filepath.Dir(filepath.Dir(native)) // <vendor>/<target>/bin/codex
	var pkg struct {
		Version string `json:"version"`
		Target  string `json:"target"`
	}
	data, err := os.ReadFile(filepath.Join(vendor, "codex-package.json"))
	if err != nil || json.Unmarshal(data, &pkg) != nil || pkg.Version == "" || pkg.Target == "" {
		return // a version whose TUI starts no managed daemon
	}
	root := filepath.Join(e.CodexHome, "packages", "app-server-daemon")
	name := pkg.Version + "-" + pkg.Target
	release := filepath.Join(root, "releases", name)
	err = filepath.Walk(vendor, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(vendor, p)
		dst := filepath.Join(release, rel)
		switch {
		case info.IsDir():
			return os.MkdirAll(dst, info.Mode().Perm())
		case info.Mode()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, dst)
		}
		return os.Link(p, dst)
	})
	if err == nil {
		err = os.Symlink("bin/codex", filepath.Join(release, "codex"))
	}
	if err == nil {
		err = os.Symlink(release, filepath.Join(root, "current"))
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(root, "auto-update-version"), []byte(name), 0o644)
	}
	if err != nil {
		os.RemoveAll(root)
	}
}

// longCodexCatalog is a catalog of fourteen models, CodexModel the
// seventh, each offering low, medium and high.
func longCodexCatalog() map[string]any {
	var models []any
	for i := 1; i <= 14; i++ {
		m := codexCatalog([]string{})["models"].([]any)[0].(map[string]any)
		if i != 7 {
			m["slug"] = fmt.Sprintf("acme-model-%02d", i)
			m["display_name"] = fmt.Sprintf("Acme Model %02d", i)
		}
		m["description"] = fmt.Sprintf("Test model number %d", i)
		m["priority"] = i
		m["supported_reasoning_levels"] = []map[string]string{{"effort": "low", "description": "Low"},
			{"effort": "medium", "description": "Medium"}, {"effort": "high", "description": "High"}}
		models = append(models, m)
	}
	return map[string]any{"models": models}
}

// codexCatalog is a model catalog with one entry, CodexModel, offering the
// given experimental tools. Codex requires instructions and these fields.
func codexCatalog(tools []string) map[string]any {
	m := map[string]any{
		"slug": CodexModel, "display_name": CodexModel, "description": "AKK fake model",
		"base_instructions":          "You are a coding agent answered by a fake model in tests.",
		"default_reasoning_level":    "medium",
		"supported_reasoning_levels": []map[string]string{{"effort": "medium", "description": "Medium"}},
		"shell_type":                 "shell_command", "visibility": "list", "supported_in_api": true, "priority": 1,
		"truncation_policy":            map[string]any{"mode": "tokens", "limit": 10000},
		"supports_parallel_tool_calls": true, "context_window": 272000,
		"support_verbosity": true, "apply_patch_tool_type": "freeform", "supports_reasoning_summaries": true,
		"input_modalities":             []string{"text", "image"},
		"experimental_supported_tools": tools,
	}
	return map[string]any{"models": []any{m}}
}

func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Tmux runs a tmux command against this Env's server. A read (a capture,
// a display-message) goes through the Env's control client when it runs
// (see reader).
func (e *Env) Tmux(args ...string) (string, error) {
	if out, ok := e.reader.read(e, args); ok {
		return out, nil
	}
	full := append([]string{"-L", e.SocketName}, args...)
	cmd := exec.Command("tmux", full...)
	cmd.Env = e.tmuxEnv
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}

func (e *Env) mustTmux(args ...string) string {
	e.t.Helper()
	out, err := e.Tmux(args...)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// Target is the tmux target of the agent's pane.
func (e *Env) Target() string { return "akk:0.0" }

// SocketPath is the tmux server's socket file, for pointing the product's
// tmux driver at this server (tmux -S <path>).
func (e *Env) SocketPath() string {
	if out, err := e.Tmux("display-message", "-p", "-t", e.Target(), "#{socket_path}"); err == nil {
		return strings.TrimSpace(out)
	}
	dir := os.Getenv("TMUX_TMPDIR")
	if dir == "" {
		dir = "/tmp"
	}
	return filepath.Join(dir, fmt.Sprintf("tmux-%d", os.Getuid()), e.SocketName)
}

// Start starts the tmux server with one pane in the project folder running
// the agent's npm entry point, as a human would start it.
func (e *Env) Start() {
	e.t.Helper()
	args := []string{"-f", "/dev/null", "new-session", "-d", "-s", "akk", "-n", e.Agent.Kind,
		"-x", strconv.Itoa(e.Width), "-y", strconv.Itoa(e.Height), "-c", e.ProjectDir, "--", "env"}
	args = append(args, e.AgentEnv()...)
	args = append(args, e.Agent.Entry())
	e.mustTmux(args...)
	// Keep a dead pane on screen, so a failure shows how the agent ended.
	e.mustTmux("set-option", "-t", "akk", "remain-on-exit", "on")
}

// StartReady starts the agent and waits until it is ready for input.
func (e *Env) StartReady() {
	e.t.Helper()
	e.Start()
	e.WaitReady(StartTimeout)
}

// PanePID is the pid of the process the pane runs (the agent's entry point).
func (e *Env) PanePID() int {
	e.t.Helper()
	out := e.mustTmux("display-message", "-p", "-t", e.Target(), "#{pane_pid}")
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		e.t.Fatalf("pane pid %q: %v", out, err)
	}
	return pid
}

// cleanup stops what this Env started: its tmux server, then any process
// still running under its HOME (Codex 0.169.0's app-server daemon outlives
// the TUI and the tmux server), then its fake model.
func (e *Env) cleanup(t testing.TB) {
	socket := e.SocketPath()
	if t.Failed() {
		// What the pane showed at the end, and what Codex logged: how a
		// failure on a machine nobody watches is understood.
		if s := e.Screen(); s != "" {
			t.Logf("%s: the pane at the end:\n%s", e.Agent.Name(), s)
		}
		logs, _ := filepath.Glob(filepath.Join(e.CodexHome, "log", "*.log"))
		for _, l := range logs {
			if b, err := os.ReadFile(l); err == nil {
				lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
				t.Logf("%s (last lines):\n%s", filepath.Base(l), strings.Join(lines[max(0, len(lines)-40):], "\n"))
			}
		}
		if tail := codexLogTail(e.CodexHome, 80); tail != "" {
			t.Logf("%s: what Codex logged last:\n%s", e.Agent.Name(), tail)
		}
		// Claude Code's transcripts (the record AKK reads a Turn from),
		// each record in brief: what a Turn's outcome was read from.
		transcripts, _ := filepath.Glob(filepath.Join(e.Home, ".claude", "projects", "*", "*.jsonl"))
		for _, l := range transcripts {
			if b, err := os.ReadFile(l); err == nil {
				lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
				lines = lines[max(0, len(lines)-30):]
				for i, ln := range lines {
					lines[i] = briefRecord(ln)
				}
				t.Logf("%s: transcript %s (last records):\n%s", e.Agent.Name(), filepath.Base(l), strings.Join(lines, "\n"))
			}
		}
	}
	e.reader.close()
	_, _ = e.Tmux("kill-server") // fails harmlessly when never started
	if err := stopProcessesUnder(e.Home, 10*time.Second); err != nil {
		t.Errorf("agenttest cleanup: %v", err)
	}
	// tmux may leave its socket file behind; the name is this Env's own.
	if _, err := e.Tmux("list-sessions"); err != nil {
		_ = os.Remove(socket)
	}
	if e.ownsModel {
		_ = e.Model.Close()
	}
}

// Respawn ends the agent in its pane (tmux respawn-pane -k) and starts it
// again in the same project, as a person quitting and starting it anew
// would: a new process, a new native thread. It waits until it is ready.
func (e *Env) Respawn() {
	e.t.Helper()
	args := []string{"respawn-pane", "-k", "-t", e.Target(), "-c", e.ProjectDir, "--", "env"}
	args = append(args, e.AgentEnv()...)
	args = append(args, e.Agent.Entry())
	e.mustTmux(args...)
	e.WaitReady(StartTimeout)
}

// briefRecord is one transcript record in brief: its type, time, ids and
// the start of its text.
func briefRecord(line string) string {
	var r map[string]any
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		return line[:min(len(line), 200)]
	}
	text := ""
	if m, ok := r["message"].(map[string]any); ok {
		switch c := m["content"].(type) {
		case string:
			text = c
		case []any:
			for _, part := range c {
				if p, ok := part.(map[string]any); ok {
					text += fmt.Sprintf("[%v %v%v] ", p["type"], p["name"], p["text"])
				}
			}
		}
		if sr, ok := m["stop_reason"]; ok && sr != nil {
			text += fmt.Sprintf(" stop_reason=%v", sr)
		}
	}
	if len(text) > 120 {
		text = text[:120] + "…"
	}
	return fmt.Sprintf("%v %v %v uuid=%v prompt=%v: %s", r["type"], r["subtype"], r["timestamp"], r["uuid"], r["promptId"], text)
}
