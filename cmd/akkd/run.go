package main

import (
	"github.com/coder/quartz"

	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"akk/callbacks"
	"akk/domain"
	"akk/endpoints"
	"akk/fleet"
	"akk/handlers"
	"akk/persistence"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agentpane"
	"akk/terminaldrivers/agentpane/claudehook"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/codexappserver"
	"akk/terminaldrivers/discovery"
	"akk/terminaldrivers/screen"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type config struct {
	listen    string
	stateDir  string
	store     string // "sqlite" or a postgres:// URL
	logLevel  slog.Level
	logFormat string // text or json
	// showVersion: print the version and exit.
	showVersion bool
	retry       domain.RetryPolicy
	sockets     []string
	retention   time.Duration
	accept      time.Duration
	noControl   bool
	onlyListed  bool // only the --tmux-sockets servers, not the user's socket folder
	noBackend   bool
	codexHomes  []string
	// codexProjects are folders given a backend conversation each, in the
	// daemon of codexHomes[0], started with codexBin when it is down.
	codexProjects []string
	codexBin      string
	// allowedHosts are host names requests may name besides the loopback
	// names and the listen address's host ("*": any).
	allowedHosts []string
	metricsToken string // when set, /metrics needs it as a bearer token
	pushContact  string // the VAPID contact push services may write to
	// node and advertiseURL make the daemon a node of the fleet that
	// shares a PostgreSQL store.
	node         string
	advertiseURL string
	// advertiseSet: --advertise-url was given (not derived from --listen).
	advertiseSet bool
}

// off reads an on/off flag: true for off.
func off(name, v string) (bool, error) {
	switch v {
	case "on":
		return false, nil
	case "off":
		return true, nil
	}
	return false, fmt.Errorf("--%s: %q is neither on nor off", name, v)
}

// parseConfig is the daemon's configuration from flags and environment.
// It is long because it is one flat list: one flag, its variable and its
// check per setting.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (config, error) {
	cfg := config{retry: domain.DefaultRetryPolicy()}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(out)
	r := declareFlags(fs, &cfg, getenv)
	if err := fs.Parse(args[1:]); err != nil {
		return cfg, err
	}
	if cfg.showVersion {
		return cfg, nil // nothing else is read
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	for _, step := range []func(*rawFlags) error{cfg.readDurations, cfg.readSwitches, cfg.readCodex, cfg.readLists, cfg.readLogging, cfg.readStore} {
		if err := step(r); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// rawFlags are the flags read as text, checked and turned into config by
// its read steps.
type rawFlags struct {
	level, schedule, sockets, defaults, control, backend, homes, projects, bin, accept, retention, allowed *string
}

// declareFlags declares akkd's flags on fs, each with its environment
// variable as its default; those that need no check go straight to cfg.
func declareFlags(fs *flag.FlagSet, cfg *config, getenv func(string) string) *rawFlags {
	r := &rawFlags{}
	fs.StringVar(&cfg.listen, "listen", envOr(getenv, "AKK_LISTEN", "127.0.0.1:7788"), "address to listen on (env AKK_LISTEN)")
	fs.StringVar(&cfg.stateDir, "state-dir", envOr(getenv, "AKK_STATE_DIR", defaultStateDir(getenv)), "directory for the database and operator token (env AKK_STATE_DIR)")
	fs.StringVar(&cfg.store, "store", envOr(getenv, "AKK_STORE", "sqlite"),
		"sqlite (akk.db in the state directory) or a postgres:// URL (env AKK_STORE, which keeps a password out of the process list)")
	r.level = fs.String("log-level", envOr(getenv, "AKK_LOG_LEVEL", "info"), "debug, info, warn or error (env AKK_LOG_LEVEL)")
	fs.StringVar(&cfg.logFormat, "log-format", envOr(getenv, "AKK_LOG_FORMAT", "text"), "text (key=value lines) or json (one JSON object a line) (env AKK_LOG_FORMAT)")
	fs.BoolVar(&cfg.showVersion, "version", false, "print akkd's version and exit")
	r.schedule = fs.String("webhook-retry-schedule", getenv("AKK_WEBHOOK_RETRY_SCHEDULE"),
		"comma-separated waits between webhook attempts, e.g. 5s,5m,30m (env AKK_WEBHOOK_RETRY_SCHEDULE; default 5s,5m,30m,2h,5h,10h,10h)")
	r.sockets = fs.String("tmux-sockets", getenv("AKK_TMUX_SOCKETS"),
		"colon-separated tmux server sockets to watch besides the current user's default ones (env AKK_TMUX_SOCKETS)")
	r.defaults = fs.String("tmux-default-sockets", envOr(getenv, "AKK_TMUX_DEFAULT_SOCKETS", "on"),
		"on: list the servers in the current user's tmux socket folder besides --tmux-sockets; off: only the --tmux-sockets servers (env AKK_TMUX_DEFAULT_SOCKETS)")
	r.control = fs.String("tmux-control", envOr(getenv, "AKK_TMUX_CONTROL", "on"),
		"on: monitors learn of pane writes from a read-only tmux control client per session with a monitored pane; off: they look on a clock (env AKK_TMUX_CONTROL)")
	r.backend = fs.String("codex-backend", envOr(getenv, "AKK_CODEX_BACKEND", "on"),
		"on: a Watch of a Codex pane whose threads a managed app-server daemon holds asks that daemon, read-only, which thread runs before it types any probe; off: it never connects to the daemon (env AKK_CODEX_BACKEND)")
	r.homes = fs.String("codex-homes", getenv("AKK_CODEX_HOMES"),
		"colon-separated Codex homes (CODEX_HOME) whose running app-server daemon is asked for threads even when no pane runs a Codex of that home; AKK never starts a daemon (env AKK_CODEX_HOMES)")
	r.projects = fs.String("codex-projects", getenv("AKK_CODEX_PROJECTS"),
		"colon-separated project folders that each get a Codex backend conversation with no terminal: a thread AKK starts (or loads again) in the app-server daemon of the first --codex-homes home, which AKK starts with --codex-bin when it does not run (env AKK_CODEX_PROJECTS)")
	r.bin = fs.String("codex-bin", getenv("AKK_CODEX_BIN"),
		"the codex executable that starts the daemon for --codex-projects; default: codex on PATH (env AKK_CODEX_BIN)")
	r.accept = fs.String("accept-window", envOr(getenv, "AKK_ACCEPT_WINDOW", "60s"),
		"how long a sent request may take to show in the agent's record before its Turn is delivery_uncertain (env AKK_ACCEPT_WINDOW)")
	r.retention = fs.String("retention", envOr(getenv, "AKK_RETENTION", "720h"),
		"how long delivered webhooks, their attempts, events and expired offers are kept (env AKK_RETENTION)")
	r.allowed = fs.String("allowed-hosts", getenv("AKK_ALLOWED_HOSTS"),
		"comma-separated HTTP Host names (not AKK hosts) requests may name in their Host and Origin headers besides localhost, 127.0.0.1, ::1 and the --listen host; * allows any, for a reverse proxy that checks it (env AKK_ALLOWED_HOSTS)")
	fs.StringVar(&cfg.metricsToken, "metrics-token", getenv("AKK_METRICS_TOKEN"),
		"when set, /metrics needs Authorization: Bearer with this token; default: /metrics is public (env AKK_METRICS_TOKEN, which keeps it out of the process list)")
	fs.StringVar(&cfg.pushContact, "push-contact", envOr(getenv, "AKK_PUSH_CONTACT", "akk@localhost"),
		"the contact Web Push services are given with each push (VAPID): an e-mail address or an https: URL (env AKK_PUSH_CONTACT)")
	hostname, _ := os.Hostname()
	fs.StringVar(&cfg.node, "node", envOr(getenv, "AKK_NODE", hostname),
		"with a postgres:// --store: this daemon's name in the fleet that shares the database (env AKK_NODE; default the host name)")
	fs.StringVar(&cfg.advertiseURL, "advertise-url", getenv("AKK_ADVERTISE_URL"),
		"with a postgres:// --store: the http:// URL the other nodes reach this daemon's API at (env AKK_ADVERTISE_URL; default http:// and the --listen address)")
	return r
}

func (cfg *config) readDurations(r *rawFlags) error {
	if d, err := time.ParseDuration(*r.accept); err != nil || d < time.Second {
		return fmt.Errorf("--accept-window: %q is not a duration of at least 1s", *r.accept)
	} else {
		cfg.accept = d
	}
	if d, err := time.ParseDuration(*r.retention); err != nil || d < time.Hour {
		return fmt.Errorf("--retention: %q is not a duration of at least 1h", *r.retention)
	} else {
		cfg.retention = d
	}
	if *r.schedule != "" {
		cfg.retry.Schedule = nil
		for _, part := range strings.Split(*r.schedule, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(part))
			if err != nil || d <= 0 {
				return fmt.Errorf("--webhook-retry-schedule: %q is not a positive duration", part)
			}
			cfg.retry.Schedule = append(cfg.retry.Schedule, d)
		}
	}
	return nil
}

func (cfg *config) readSwitches(r *rawFlags) error {
	var err error
	if cfg.noControl, err = off("tmux-control", *r.control); err != nil {
		return err
	}
	if cfg.onlyListed, err = off("tmux-default-sockets", *r.defaults); err != nil {
		return err
	}
	cfg.noBackend, err = off("codex-backend", *r.backend)
	return err
}

// readCodex reads the Codex homes, the backend projects and the codex
// executable that starts their daemon.
func (cfg *config) readCodex(r *rawFlags) error {
	for _, h := range strings.Split(*r.homes, ":") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if !filepath.IsAbs(h) {
			return fmt.Errorf("--codex-homes: %q is not an absolute path", h)
		}
		cfg.codexHomes = append(cfg.codexHomes, filepath.Clean(h))
	}
	if len(cfg.codexHomes) > 0 && cfg.noBackend {
		return errors.New("--codex-homes needs --codex-backend on")
	}
	for _, d := range strings.Split(*r.projects, ":") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		if !filepath.IsAbs(d) {
			return fmt.Errorf("--codex-projects: %q is not an absolute path", d)
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return fmt.Errorf("--codex-projects: %q is not a folder", d)
		}
		if d = filepath.Clean(d); !slices.Contains(cfg.codexProjects, d) {
			cfg.codexProjects = append(cfg.codexProjects, d)
		}
	}
	if len(cfg.codexProjects) == 0 {
		if *r.bin != "" {
			return errors.New("--codex-bin is only used with --codex-projects")
		}
		return nil
	}
	if len(cfg.codexHomes) == 0 {
		return errors.New("--codex-projects needs --codex-homes (its first home's daemon holds the threads)")
	}
	b := *r.bin
	if b == "" {
		b = "codex"
	}
	p, err := exec.LookPath(b)
	if err != nil {
		return fmt.Errorf("--codex-bin: %q is not an executable: %v", b, err)
	}
	if cfg.codexBin, err = filepath.Abs(p); err != nil {
		return fmt.Errorf("--codex-bin: %v", err)
	}
	return nil
}

func (cfg *config) readLists(r *rawFlags) error {
	for _, h := range strings.Split(*r.allowed, ",") {
		if h = strings.TrimSpace(h); h == "" {
			continue
		}
		if strings.ContainsAny(h, "/@ \t") {
			return fmt.Errorf("--allowed-hosts: %q is not a host name (no scheme or path)", h)
		}
		cfg.allowedHosts = append(cfg.allowedHosts, h)
	}
	for _, s := range strings.Split(*r.sockets, ":") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.sockets = append(cfg.sockets, s)
		}
	}
	return nil
}

func (cfg *config) readLogging(r *rawFlags) error {
	if cfg.logFormat != "text" && cfg.logFormat != "json" {
		return fmt.Errorf("--log-format: %q is neither text nor json", cfg.logFormat)
	}
	if err := cfg.logLevel.UnmarshalText([]byte(*r.level)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	return nil
}

// readStore checks the state directory, the store and, for a fleet, the
// node's name and the URL it is reached at.
func (cfg *config) readStore(*rawFlags) error {
	if cfg.stateDir == "" {
		return errors.New("no state directory: set --state-dir, AKK_STATE_DIR, XDG_STATE_HOME or HOME")
	}
	if cfg.store != "sqlite" && !persistence.IsPostgresURL(cfg.store) {
		return errors.New("--store: want sqlite or a postgres:// URL")
	}
	if !nodeName.MatchString(cfg.node) {
		return fmt.Errorf("--node: %q is not a name of 1 to 63 letters, digits, '.', '_' or '-'", cfg.node)
	}
	cfg.advertiseSet = cfg.advertiseURL != ""
	if cfg.advertiseURL == "" {
		cfg.advertiseURL = "http://" + cfg.listen
	}
	if u, err := url.Parse(cfg.advertiseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--advertise-url: %q is not an http:// or https:// URL of a host and port", cfg.advertiseURL)
	}
	return nil
}

var nodeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

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
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "akk")
	}
	return ""
}

// listenHosts is the host of the listen address, which requests may name,
// unless it is empty or unspecified (0.0.0.0, ::): the names that reach
// such a daemon are --allowed-hosts.
func listenHosts(listen string) []string {
	host, _, err := net.SplitHostPort(listen)
	if err != nil || host == "" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return nil
	}
	return []string{host}
}

// maxConnections bounds the HTTP connections served at once; when every
// one is serving a request, connReserve more are let in (for health and
// the operator). A connection must send its first byte within firstByte.
const (
	maxConnections = 512
	connReserve    = 64
	firstByte      = 5 * time.Second
)

// run is the whole daemon; main only calls it. It returns when ctx ends.
// It is long because it is the one place that wires every adapter into
// the service, in the order they depend on each other; read top to bottom.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig(args, getenv, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	if cfg.showVersion {
		fmt.Fprintf(stdout, "akkd %s\n", version)
		return nil
	}
	d := &parts{cfg: cfg, log: newLogger(cfg, stdout)}
	slog.SetDefault(d.log)
	release, err := d.openStore(ctx)
	if err != nil {
		return err
	}
	defer release()
	closeScreens, err := d.wire(ctx)
	if err != nil {
		return err
	}
	defer closeScreens()
	if d.store.Fleet() {
		if err := d.joinFleet(ctx); err != nil {
			return err
		}
	}
	if err := d.followChanges(ctx); err != nil {
		return err
	}
	return d.serve(ctx)
}

// parts are akkd's parts, as run wires them.
type parts struct {
	cfg   config
	log   *slog.Logger
	store *persistence.Store
	clock quartz.Clock

	svc           *domain.Service
	terms         *discovery.Discovery
	hooks         *claudehook.Broker
	projects      *codexappserver.Projects
	operatorToken string

	metrics *handlers.Metrics
	hub     *callbacks.Hub
	disp    *callbacks.Dispatcher
	allowed []string    // HTTP Host names the daemon answers
	node    *fleet.Node // nil on its own
}

// newLogger is akkd's log, as text or JSON, at the configured level.
func newLogger(cfg config, stdout io.Writer) *slog.Logger {
	var handler slog.Handler = slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: cfg.logLevel})
	if cfg.logFormat == "json" {
		handler = slog.NewJSONHandler(stdout, &slog.HandlerOptions{Level: cfg.logLevel})
	}
	return slog.New(handler)
}

// openStore makes the state dir (private), takes its lock and opens the
// store; release undoes both.
func (d *parts) openStore(ctx context.Context) (release func(), err error) {
	cfg := d.cfg
	if err := os.MkdirAll(cfg.stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	if err := os.Chmod(cfg.stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("secure state dir: %w", err)
	}
	unlock, err := lockStateDir(cfg.stateDir)
	if err != nil {
		return nil, err
	}
	if cfg.store == "sqlite" {
		d.store, err = persistence.Open(ctx, filepath.Join(cfg.stateDir, "akk.db"))
	} else {
		d.store, err = persistence.OpenPostgresNode(ctx, cfg.store, cfg.node)
	}
	if err != nil {
		unlock()
		return nil, err
	}
	return func() { d.store.Close(); unlock() }, nil
}

// wire builds the service on the store with every adapter: the panes
// (discovery, the pane adapter, Claude Code's hook), Codex's app-server
// daemons, Web Push, and the operator token. closeScreens ends the
// discovery's control clients.
func (d *parts) wire(ctx context.Context) (closeScreens func(), err error) {
	cfg, log := d.cfg, d.log
	d.clock = quartz.NewReal()
	if clockOffset != 0 {
		d.clock = offsetClock{d.clock, clockOffset}
	}
	svc := domain.NewService(d.store, d.clock, randomIDs{}, handlers.NewValidator())
	d.svc = svc
	svc.Retry = cfg.retry
	// One registry of version profiles, handed to every pane adapter.
	profiles, err := agent.RegistryOf([]agent.Driver{claude.Driver{}, codex.Driver{}})
	if err != nil {
		return nil, fmt.Errorf("version profiles: %w", err)
	}
	d.terms, err = discovery.New(discovery.Config{Registry: profiles, ExtraSockets: cfg.sockets, OnlyExtraSockets: cfg.onlyListed, NoControl: cfg.noControl})
	if err != nil {
		return nil, fmt.Errorf("terminal discovery: %w", err)
	}
	svc.UseTerminals(d.terms)
	// The pane transport: one adapter on the panes the discovery sees,
	// with its registry of profiles.
	panes := agentpane.New(d.terms, agentpane.Config{})
	turnCfg := domain.TurnConfig{AcceptWindow: cfg.accept}
	svc.UsePanes(panes, redactor{}, turnCfg)
	svc.UseEndpoint(domain.EndpointPane, endpoints.NewPane(panes, turnCfg, d.clock))
	if !cfg.noBackend {
		svc.UseBackendThreads(codexappserver.Identifier{Version: version})
		// The daemons' threads as conversations, sent to through them.
		endpoints.UseThreadTransport(svc, domain.CodexThreads, &codexappserver.Backend{Version: version, Homes: cfg.codexHomes}, d.terms)
	}
	if len(cfg.codexProjects) > 0 {
		d.projects = &codexappserver.Projects{Home: cfg.codexHomes[0], Codex: cfg.codexBin, Dirs: cfg.codexProjects,
			Version: version, Env: os.Environ(), Log: log}
	}
	// Claude Code's PermissionRequest hook: the exact channel of a pane
	// whose session sends it (see akk hooks install).
	hookToken := filepath.Join(cfg.stateDir, "claude-hook.token")
	if err := ensureHookToken(hookToken, svc.NewOperatorToken); err != nil {
		d.terms.CloseScreens()
		return nil, err
	}
	d.hooks = claudehook.New(claudehook.Config{TokenFile: hookToken, Bind: panes.BindHookSession, Log: log,
		Changed: func(terminalID string) { svc.TerminalChanged(context.WithoutCancel(ctx), terminalID) }})
	panes.UseClaudeHooks(d.hooks)
	svc.UseThreads(d.terms) // read from the agents' records only
	svc.UsePush(d.store, callbacks.WebPush{Contact: cfg.pushContact})
	if d.operatorToken, err = ensureOperatorToken(ctx, svc, filepath.Join(cfg.stateDir, "operator.token")); err != nil {
		d.terms.CloseScreens()
		return nil, err
	}
	d.metrics = handlers.NewMetrics()
	d.metrics.StateGauges(svc.Gauges)
	d.hub = callbacks.NewHub()
	d.disp = &callbacks.Dispatcher{Store: d.store, Clock: d.clock, Policy: cfg.retry, Log: log, Observe: d.metrics.ObserveDelivery}
	d.allowed = append(listenHosts(cfg.listen), cfg.allowedHosts...)
	return d.terms.CloseScreens, nil
}

// joinFleet makes the daemon a node of the fleet on its database: it joins
// before it serves, and looks for due webhooks at least every heartbeat (a
// dead node's leased ones become due without a wake).
func (d *parts) joinFleet(ctx context.Context) error {
	cfg, store := d.cfg, d.store
	key, err := store.FleetKey(ctx)
	if err != nil {
		return err
	}
	d.node = fleet.New(fleet.Config{Store: store, Name: cfg.node, AdvertiseURL: cfg.advertiseURL, AdvertiseSet: cfg.advertiseSet,
		Version: version, OperatorTokenHash: domain.HashToken(d.operatorToken), Key: key, Log: d.log,
		Now: func() time.Time { return d.clock.Now() },
		Changed: func(ctx context.Context) (string, error) {
			panes, err := d.terms.Fingerprint(ctx)
			if err != nil {
				return "", err
			}
			last, err := store.LastEventID(ctx)
			return fmt.Sprintf("%s %d", panes, last), err
		}})
	if err := d.node.Join(ctx); err != nil {
		return fmt.Errorf("join the fleet: %w", err)
	}
	d.svc.UseFleet(cfg.node, func(ctx context.Context) ([]string, error) {
		nodes, err := store.Nodes(ctx)
		names := make([]string, len(nodes))
		for i, x := range nodes {
			names[i] = x.Name
		}
		return names, err
	})
	d.disp.MaxWait = fleet.Heartbeat
	if u, err := url.Parse(cfg.advertiseURL); err == nil {
		d.allowed = append(d.allowed, u.Hostname())
	}
	return nil
}

// followChanges wakes the event streams and the dispatcher on each change
// the store commits, and counts the events stored.
func (d *parts) followChanges(ctx context.Context) error {
	var mu sync.Mutex
	lastSeen, err := d.store.LastEventID(ctx)
	if err != nil {
		return err
	}
	d.store.OnChange(func(c persistence.Change) {
		if c.LastEventID > 0 {
			mu.Lock()
			if c.LastEventID > lastSeen {
				d.metrics.EventsStored(c.LastEventID - lastSeen)
				lastSeen = c.LastEventID
			}
			mu.Unlock()
			d.hub.Notify()
		}
		if c.Notifications {
			d.disp.Wake()
		}
	})
	return nil
}

// serve answers HTTP until ctx ends, with the dispatcher, pruning, Web
// Push, the Codex projects, the fleet's loops and every monitor running
// beside it; then shuts down in order.
func (d *parts) serve(ctx context.Context) error {
	cfg, log, svc := d.cfg, d.log, d.svc
	deps := handlers.Deps{Service: svc, Hub: d.hub, Metrics: d.metrics, Version: version, Log: log,
		AllowedHosts: d.allowed, MetricsToken: cfg.metricsToken, ClaudeHooks: d.hooks}
	if d.node != nil {
		deps.Fleet = d.node
	}
	h, err := handlers.New(deps)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	warnIfExposed(log, cfg.listen)
	// A slow client may hold a connection only so long: its first byte
	// within 5 s, headers within 10 s, the whole request within 30 s (the
	// deadline ends when the request is read, so event streams stay open),
	// idle keep-alives 2 min; and at most maxConnections at once, the
	// oldest silent or idle ones closed to make room (never a wait).
	conns := newConnTracker(maxConnections, connReserve, firstByte)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute,
		ConnState: conns.track, BaseContext: func(net.Listener) context.Context { return ctx }}

	// This daemon holds the state dir's lock: leases are a dead one's.
	if err := d.store.ReleaseLeases(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	dctx, stopDispatch := context.WithCancel(ctx)
	d.background(dctx, &wg, h)
	// Resume monitoring every live Turn and Watch: no input, only observation.
	if err := svc.StartTurnMonitors(dctx); err != nil {
		stopDispatch()
		wg.Wait()
		return fmt.Errorf("resume monitors: %w", err)
	}

	engine := "sqlite"
	if cfg.store != "sqlite" {
		engine = "postgres" // the URL may hold a password: never logged
	}
	log.Info("akkd listening", "addr", ln.Addr().String(), "state_dir", cfg.stateDir, "store", engine, "version", version)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		d.shutdown(ctx, srv)
		err = nil
	}
	stopDispatch()
	wg.Wait()
	svc.WaitTurnMonitors()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// background starts the loops that run beside the server until ctx ends.
func (d *parts) background(ctx context.Context, wg *sync.WaitGroup, h http.Handler) {
	run := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	run(func() { d.disp.Run(ctx) })
	run(func() { prune(ctx, d.store, d.cfg.retention, d.log) })
	run(func() {
		wake, stop := d.hub.Subscribe()
		defer stop()
		d.svc.RunPush(ctx, wake, d.log)
	})
	if d.projects != nil {
		run(func() { d.projects.Run(ctx) })
	}
	if d.node == nil {
		return
	}
	d.node.Local = h
	run(func() { d.node.Run(ctx) })
	// The other nodes' events and webhooks wake this one's streams and
	// dispatcher.
	run(func() {
		d.store.Listen(ctx, func(c persistence.Change) {
			if c.LastEventID != 0 {
				d.hub.Notify()
			}
			if c.Notifications {
				d.disp.Wake()
			}
			for _, id := range c.Revoked {
				d.svc.HostRevokedElsewhere(id)
			}
		})
	})
}

// shutdown stops serving (5 s for answers under way) and lets a key
// sequence that started run to its end.
func (d *parts) shutdown(ctx context.Context, srv *http.Server) {
	d.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	cancel()
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), domain.KeySequenceBound)
	if werr := d.svc.WaitForInput(ictx); werr != nil {
		d.log.Warn("a key sequence was still running at shutdown", "err", werr)
	}
	cancel()
}

// ensureOperatorToken keeps the operator token in path (mode 0600), creating
// it on first start; the store holds only its hash.
func ensureOperatorToken(ctx context.Context, svc *domain.Service, path string) (string, error) {
	b, err := os.ReadFile(path)
	token := strings.TrimSpace(string(b))
	if errors.Is(err, os.ErrNotExist) || (err == nil && token == "") {
		token = svc.NewOperatorToken()
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(token+"\n"), 0o600); err != nil {
			return "", fmt.Errorf("write operator token: %w", err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return "", fmt.Errorf("write operator token: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("read operator token: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return "", fmt.Errorf("secure operator token: %w", err)
	}
	return token, svc.UseOperatorToken(ctx, token)
}

// ensureHookToken creates the Claude Code hook credential (mode 0600) if
// there is none: a credential of its own, neither a host's nor the
// operator's, that `akk hooks install` writes into the hook it installs.
// Replacing the file (`akk hooks revoke`) revokes it at once.
func ensureHookToken(path string, gen func() string) error {
	b, err := os.ReadFile(path)
	if err == nil && strings.TrimSpace(string(b)) != "" {
		return os.Chmod(path, 0o600)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read hook credential: %w", err)
	}
	tok := "akk_hook_" + strings.TrimPrefix(gen(), "akk_op_")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(tok+"\n"), 0o600); err != nil {
		return fmt.Errorf("write hook credential: %w", err)
	}
	return os.Rename(tmp, path)
}

// redactor hides secret-looking strings in text shown to controllers.
// prune applies the retention setting at start and then hourly.
func prune(ctx context.Context, store *persistence.Store, retention time.Duration, log *slog.Logger) {
	for {
		if p, err := store.Prune(ctx, time.Now().Add(-retention)); err != nil {
			if ctx.Err() == nil {
				log.Error("prune", "err", err)
			}
		} else if p != (persistence.Pruned{}) {
			log.Info("pruned", "events", p.Events, "notifications", p.Notifications, "attempts", p.Attempts, "offers", p.Offers)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Hour):
		}
	}
}

type redactor struct{}

func (redactor) Redact(s string) string { return screen.Redact(s) }

// RedactRows implements domain.RowRedactor.
func (redactor) RedactRows(rows []string) []string { return screen.RedactRows(rows) }

// Cut implements domain.GraphemeCutter.
func (redactor) Cut(s string, limit int) (string, bool) { return screen.CutGraphemes(s, limit) }

type randomIDs struct{}

const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// New returns prefix_ + 22 base62 characters (~131 bits).
func (randomIDs) New(prefix string) string {
	b := make([]byte, 22)
	rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return prefix + "_" + string(b)
}

func (randomIDs) Secret(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// warnIfExposed warns once when the daemon listens beyond loopback: it
// speaks plain HTTP, so tokens and cookies would cross the network in
// the clear unless a TLS proxy stands in front.
func warnIfExposed(log *slog.Logger, listen string) {
	host, _, err := net.SplitHostPort(listen)
	if err == nil && host == "localhost" {
		return
	}
	if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsLoopback() {
		return
	}
	log.Warn("listening beyond loopback over plain HTTP: put a TLS reverse proxy in front (see docs/configuration.md, Reverse proxy) and name its host in --allowed-hosts",
		"listen", listen)
}

// clockOffset moves this daemon's clock (a test build's AKK_CLOCK_OFFSET:
// a machine whose clock runs apart from the others').
var clockOffset time.Duration

// offsetClock is a clock clockOffset apart from the real one.
type offsetClock struct {
	quartz.Clock
	off time.Duration
}

func (c offsetClock) Now(tags ...string) time.Time { return c.Clock.Now(tags...).Add(c.off) }

func (c offsetClock) Since(t time.Time, tags ...string) time.Duration { return c.Now(tags...).Sub(t) }

func (c offsetClock) Until(t time.Time, tags ...string) time.Duration { return t.Sub(c.Now(tags...)) }
