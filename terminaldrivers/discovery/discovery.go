// Package discovery implements the domain's TerminalDiscovery: it lists the
// panes of every tmux server of the current user, walks each pane's process
// tree to a coding agent, reads the agent's own files for its version and
// native identity, captures the screen once and classifies it with the
// version's profile. A pane running anything else is not a conversation.
// Listing sends no input to any pane.
package discovery

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/proc"
	"akk/terminaldrivers/screen"
	"akk/terminaldrivers/tmux"
)

// Config says where to look. The zero value looks at the current user's
// tmux sockets with the tmux on PATH and the real /proc.
type Config struct {
	// Tmux runs tmux; tmux.ExecRunner{} when nil.
	Tmux tmux.Runner
	// SocketDir is scanned for server sockets; when empty,
	// $TMUX_TMPDIR/tmux-<uid> or /tmp/tmux-<uid>.
	SocketDir string
	// ExtraSockets are more server sockets (tmux -S paths) to list.
	ExtraSockets []string
	// OnlyExtraSockets skips SocketDir: only the named servers are listed
	// (akkd --tmux-default-sockets off; tests, each at its own server).
	OnlyExtraSockets bool
	// Proc reads the process table; the real /proc when zero.
	Proc proc.FS
	// Drivers recognise agents; Claude Code and Codex when nil.
	Drivers []agent.Driver
	// Registry holds the version profiles the screens are read with: the
	// daemon's one registry. Built from Drivers' profiles when nil.
	Registry *agent.Registry
	// Getenv and UID locate the default socket dir and own its sockets;
	// os.Getenv and os.Getuid() when nil or zero.
	Getenv func(string) string
	UID    int
	// Hostname is tmux's default pane title, which says nothing about a
	// conversation; os.Hostname when empty.
	Hostname string
	// Parallel bounds concurrent captures; 4 when zero.
	Parallel int
	// TmuxPath is the tmux binary control clients run ("tmux" when empty).
	TmuxPath string
	// NoControl: no control clients; monitors look on their clock.
	NoControl bool
}

// Discovery lists agent terminals. It is safe for concurrent use.
type Discovery struct {
	cfg      Config
	drivers  []agent.Driver
	registry *agent.Registry

	mu       sync.Mutex
	versions map[versionKey]string         // installed version per binary
	listed   map[string]domain.PaneLocator // terminal id -> pane, of the last listing

	look    shared  // what monitors' looks share (LookPane)
	screens screens // control clients that report pane writes (ScreenChanged)
}

type versionKey struct {
	path  string
	size  int64
	mtime time.Time
}

// maxDepth bounds the walk from a pane's process to the agent: a shell, a
// wrapper (env, npx, node) and the agent leave room to spare.
const maxDepth = 4

// New builds a Discovery.
func New(cfg Config) (*Discovery, error) {
	if cfg.Tmux == nil {
		cfg.Tmux = tmux.ExecRunner{}
	}
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.UID == 0 {
		cfg.UID = os.Getuid()
	}
	if cfg.SocketDir == "" {
		cfg.SocketDir = tmux.SocketDir(cfg.Getenv, cfg.UID)
	}
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 4
	}
	drivers := cfg.Drivers
	if drivers == nil {
		drivers = []agent.Driver{claude.Driver{}, codex.Driver{}}
	}
	reg := cfg.Registry
	if reg == nil {
		var err error
		if reg, err = agent.RegistryOf(drivers); err != nil {
			return nil, err
		}
	}
	return &Discovery{cfg: cfg, drivers: drivers, registry: reg, versions: map[versionKey]string{}}, nil
}

// Default is a Discovery of the current user's tmux servers plus extra
// sockets, as the daemon runs it.
func Default(reg *agent.Registry, extraSockets ...string) (*Discovery, error) {
	return New(Config{Registry: reg, ExtraSockets: extraSockets})
}

// Registry is the registry of version profiles the Discovery reads with.
func (d *Discovery) Registry() *agent.Registry { return d.registry }

// Supported lists every profiled agent version.
func (d *Discovery) Supported() []domain.Agent { return d.registry.Supported() }

// Discover implements domain.TerminalDiscovery. A server that cannot be
// listed (a socket left by a dead server) is skipped; Diagnose reports it.
func (d *Discovery) Discover(ctx context.Context) ([]domain.Terminal, error) {
	terms, _, err := d.discover(ctx)
	return terms, err
}

// Diagnose implements domain.TerminalDiagnostics.
func (d *Discovery) Diagnose(ctx context.Context) (domain.TerminalDiagnosis, error) {
	diag := domain.TerminalDiagnosis{Supported: d.registry.Supported()}
	v, err := tmux.Version(ctx, d.cfg.Tmux)
	if err != nil {
		diag.Tmux.Problem = err.Error()
		return diag, nil
	}
	diag.Tmux = domain.TmuxStatus{Found: true, Version: v}
	terms, servers, err := d.discover(ctx)
	if err != nil {
		return diag, err
	}
	diag.Servers = servers
	_, diag.StaleSockets, _ = d.sockets()
	if !d.cfg.OnlyExtraSockets {
		diag.Searched = append(diag.Searched, d.cfg.SocketDir+" (this user's tmux sockets)")
	}
	diag.Searched = append(diag.Searched, d.cfg.ExtraSockets...)
	for _, t := range terms {
		i := slices.IndexFunc(diag.Agents, func(a domain.AgentPresence) bool { return a.Agent == t.Agent })
		if i < 0 {
			diag.Agents = append(diag.Agents, domain.AgentPresence{Agent: t.Agent})
			i = len(diag.Agents) - 1
		}
		diag.Agents[i].Panes++
	}
	return diag, nil
}

// ErrPaneGone: the pane closed, or its foreground no longer runs an agent.
// It is a domain.ErrTerminalGone.
var ErrPaneGone = fmt.Errorf("pane gone or no longer running an agent: %w", domain.ErrTerminalGone)

// Observe looks at one known pane again, as Discover would, to revalidate it
// before input: one list-panes of its server, one process table read, one
// capture. The caller compares the returned Terminal's ID with the one it
// holds: equal means the same pane and the same agent process incarnation.
func (d *Discovery) Observe(ctx context.Context, loc domain.PaneLocator) (domain.Terminal, error) {
	c, table, err := d.locate(ctx, loc)
	if err != nil {
		return domain.Terminal{}, err
	}
	bootID, err := d.cfg.Proc.BootID()
	if err != nil {
		return domain.Terminal{}, fmt.Errorf("read boot id: %w", err)
	}
	t := d.terminal(ctx, table, bootID, c, nil)
	return t, ctx.Err()
}

// locate finds the agent process of the live pane at loc, with the
// process snapshot it was found in; ErrPaneGone when the pane is gone or
// runs no agent.
func (d *Discovery) locate(ctx context.Context, loc domain.PaneLocator) (candidate, *proc.Table, error) {
	panes, err := tmux.Server{Socket: loc.Socket, Runner: d.cfg.Tmux}.ListPanes(ctx)
	if err != nil {
		if errors.Is(err, tmux.ErrNoTmux) || ctx.Err() != nil {
			return candidate{}, nil, err
		}
		return candidate{}, nil, fmt.Errorf("%w: %v", ErrPaneGone, err)
	}
	i := slices.IndexFunc(panes, func(p tmux.Pane) bool { return p.ID == loc.PaneID })
	if i < 0 || panes[i].Dead {
		return candidate{}, nil, fmt.Errorf("%w: no live pane %s", ErrPaneGone, loc.PaneID)
	}
	table, err := d.cfg.Proc.Snapshot()
	if err != nil {
		return candidate{}, nil, err
	}
	c, ok := d.findAgent(table, panes[i])
	if !ok {
		return candidate{}, nil, fmt.Errorf("%w: pane %s runs no agent", ErrPaneGone, loc.PaneID)
	}
	return c, table, nil
}

// Listed returns the pane of a terminal the last listing (Discover) found.
// It proves nothing about the pane now: the caller looks at it again.
func (d *Discovery) Listed(terminalID string) (domain.PaneLocator, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	loc, ok := d.listed[terminalID]
	return loc, ok
}

// Find returns the terminal with this id, observed now, or ErrPaneGone
// when no pane runs that agent process incarnation any more.
func (d *Discovery) Find(ctx context.Context, terminalID string) (domain.Terminal, error) {
	terms, err := d.Discover(ctx)
	if err != nil {
		return domain.Terminal{}, err
	}
	for _, t := range terms {
		if t.ID == terminalID {
			return t, nil
		}
	}
	return domain.Terminal{}, fmt.Errorf("%w: no terminal %s", ErrPaneGone, terminalID)
}

// sockets returns the server sockets to list, each once: the live ones of
// the socket folder and every extra one, and how many in the folder are
// stale (skipped without running tmux: a folder may hold many).
func (d *Discovery) sockets() ([]string, int, error) {
	var found []string
	stale := 0
	if !d.cfg.OnlyExtraSockets {
		s, err := tmux.Sockets(d.cfg.SocketDir, d.cfg.UID)
		if err != nil {
			return nil, 0, err
		}
		live, dead := tmux.Live(d.cfg.Proc.Root, s)
		found, stale = live, len(dead)
	}
	found = append(found, d.cfg.ExtraSockets...)
	var out []string
	seen := map[string]bool{}
	for _, s := range found {
		key := filepath.Clean(s)
		if real, err := filepath.EvalSymlinks(key); err == nil {
			key = real
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, s)
		}
	}
	return out, stale, nil
}

// candidate is a pane whose foreground runs an agent.
type candidate struct {
	pane    tmux.Pane
	driver  agent.Driver
	process agent.Process
	// installed is the version of the agent's package, when already read
	// for this process incarnation (a look's candidate, see lookAgent).
	installed     string
	haveInstalled bool
	// native is what the agent's own files said of it, when already read
	// for this process incarnation (a look's candidate, see lookAgent).
	native *agent.Native
}

func (d *Discovery) discover(ctx context.Context) ([]domain.Terminal, []domain.TmuxServerStatus, error) {
	panes, servers, err := d.panes(ctx)
	if err != nil || len(panes) == 0 {
		return nil, servers, err
	}
	table, err := d.cfg.Proc.Snapshot()
	if err != nil {
		return nil, servers, err
	}
	bootID, err := d.cfg.Proc.BootID()
	if err != nil {
		return nil, servers, fmt.Errorf("read boot id: %w", err)
	}
	var cands []candidate
	for _, p := range panes {
		if p.Dead {
			continue
		}
		if c, ok := d.findAgent(table, p); ok {
			cands = append(cands, c)
		}
	}
	capture := d.captureAll(ctx, cands)
	terms := make([]domain.Terminal, len(cands))
	var wg sync.WaitGroup
	sem := make(chan struct{}, d.cfg.Parallel)
	for i, c := range cands {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			terms[i] = d.terminal(ctx, table, bootID, c, capture)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, servers, err
	}
	listed := make(map[string]domain.PaneLocator, len(terms))
	for _, t := range terms {
		listed[t.ID] = t.Pane
	}
	d.mu.Lock()
	d.listed = listed
	d.mu.Unlock()
	// Terminals keep list-panes order: server, session, window, pane.
	return terms, servers, nil
}

// panes lists the panes of every tmux server AKK looks at, and what each
// server answered.
func (d *Discovery) panes(ctx context.Context) ([]tmux.Pane, []domain.TmuxServerStatus, error) {
	sockets, _, err := d.sockets()
	if err != nil {
		return nil, nil, err
	}
	var panes []tmux.Pane
	var servers []domain.TmuxServerStatus
	for _, s := range sockets {
		ps, err := d.listPanes(ctx, s)
		if err != nil {
			if errors.Is(err, tmux.ErrNoTmux) {
				return nil, nil, err
			}
			if cerr := ctx.Err(); cerr != nil {
				return nil, nil, cerr
			}
			servers = append(servers, domain.TmuxServerStatus{Socket: s, Problem: err.Error()})
			continue
		}
		servers = append(servers, domain.TmuxServerStatus{Socket: s, Panes: len(ps)})
		panes = append(panes, ps...)
	}
	return panes, servers, nil
}

// listPanes lists a server's panes through a control client of the
// server, and as a tmux process when none runs or it fails. Listing keeps a
// client of the server's first session running (screens.go: it ends once
// nothing used it for controlIdle), so a host that lists every few hundred
// milliseconds costs no tmux process per list; captureAll reads the
// screens through it too.
func (d *Discovery) listPanes(ctx context.Context, socket string) ([]tmux.Pane, error) {
	if ctl := d.anyControl(socket); ctl != nil {
		if ps, err := ctl.ListPanes(ctx); err == nil {
			return ps, nil
		}
	}
	ps, err := tmux.Server{Socket: socket, Runner: d.cfg.Tmux}.ListPanes(ctx)
	if err == nil && len(ps) > 0 {
		d.control(ctx, socket, ps[0].SessionName)
	}
	return ps, err
}

// captureAll captures every candidate's screen with one tmux process per
// server; the capture it returns reads those, or captures a pane alone.
func (d *Discovery) captureAll(ctx context.Context, cands []candidate) func(context.Context, tmux.Pane) (tmux.Snapshot, error) {
	bySocket := map[string][]string{}
	for _, c := range cands {
		bySocket[c.pane.Socket] = append(bySocket[c.pane.Socket], c.pane.ID)
	}
	snaps := map[string]map[string]tmux.Snapshot{}
	for socket, ids := range bySocket {
		if ctl := d.anyControl(socket); ctl != nil {
			got := map[string]tmux.Snapshot{}
			for _, id := range ids {
				if snap, err := ctl.Capture(ctx, id); err == nil {
					got[id] = snap
				}
			}
			if len(got) == len(ids) {
				snaps[socket] = got
				continue
			}
		}
		snaps[socket] = tmux.Server{Socket: socket, Runner: d.cfg.Tmux}.CaptureAll(ctx, ids)
	}
	return func(ctx context.Context, p tmux.Pane) (tmux.Snapshot, error) {
		if s, ok := snaps[p.Socket][p.ID]; ok {
			return s, nil
		}
		return d.CapturePane(ctx, p.Socket, p.ID)
	}
}

// findAgent walks from the pane's process to the first process, breadth
// first, that runs in the foreground of the pane's terminal and is an
// agent's interactive TUI.
func (d *Discovery) findAgent(table *proc.Table, p tmux.Pane) (candidate, bool) {
	root, ok := table.Stat(p.PID)
	if !ok {
		return candidate{}, false
	}
	for _, pid := range table.Descendants(p.PID, maxDepth) {
		s, _ := table.Stat(pid)
		if s.TTY != root.TTY || !s.Foreground() {
			continue
		}
		exe, err := d.cfg.Proc.Exe(pid)
		if err != nil {
			continue
		}
		for _, drv := range d.drivers {
			if !drv.MatchExe(exe) {
				continue
			}
			argv, err := d.cfg.Proc.Cmdline(pid)
			if err != nil || !drv.IsTUI(argv) {
				continue
			}
			cwd, _ := d.cfg.Proc.Cwd(pid)
			env, _ := d.cfg.Proc.Environ(pid, agent.EnvNames...)
			return candidate{pane: p, driver: drv, process: agent.Process{Stat: s, Exe: exe, Argv: argv, Cwd: cwd, Env: env}}, true
		}
	}
	return candidate{}, false
}

// capturer takes a pane's snapshot.
type capturer func(context.Context, tmux.Pane) (tmux.Snapshot, error)

// terminal reads everything about one agent pane; capture takes its
// snapshot (a tmux process when nil).
func (d *Discovery) terminal(ctx context.Context, table *proc.Table, bootID string, c candidate, snapshot capturer) domain.Terminal {
	p := c.process
	t := domain.Terminal{
		Provider:    domain.ProviderTmux,
		Pane:        domain.PaneLocator{Socket: c.pane.Socket, PaneID: c.pane.ID},
		SessionName: c.pane.SessionName,
		WindowName:  c.pane.WindowName,
		Project:     p.Cwd,
		Title:       d.title(c.pane.Title),
		Width:       c.pane.Width,
		Height:      c.pane.Height,
		Process:     domain.Incarnation{BootID: bootID, PID: p.Stat.PID, StartTicks: p.Stat.StartTicks},
		ScreenState: domain.ScreenUnknown,
	}
	if t.Project == "" {
		t.Project = c.pane.CurrentPath
	}
	t.ID = domain.TerminalIDFor(t.Pane, t.Process)
	kind := c.driver.Kind()
	name := c.driver.Name()

	installed := c.installed
	if !c.haveInstalled {
		var err error
		if installed, err = d.installedVersion(c.driver, p); err != nil {
			installed = ""
		}
	}
	var native agent.Native
	if c.native != nil {
		native = *c.native
	} else {
		native = c.driver.Inspect(d.cfg.Proc, table, p, installed)
	}
	version := installed
	switch {
	case native.Version != "" && installed != "" && native.Version != installed:
		t.Warnings = append(t.Warnings, fmt.Sprintf("%s reports version %s but its installed package is %s; using the running agent's own", name, native.Version, installed))
		version = native.Version
	case native.Version != "":
		version = native.Version
	}
	t.NativeIdentity, t.NativeThreadID, t.DurableActivity = native.Identity, native.ThreadID, native.Activity
	t.Warnings = append(t.Warnings, native.Warnings...)

	// An unprofiled agent is never typed into; its driver says only what
	// its kind could be asked.
	t.Agent = c.driver.Unprofiled(version)
	profile, exact, ok := d.registry.Resolve(kind, version)
	if !ok {
		if version == "" {
			t.Warnings = append(t.Warnings, name+"'s version could not be determined; AKK lists the pane but never sends to it")
		} else {
			t.Warnings = append(t.Warnings, fmt.Sprintf("%s %s has no profile (profiled: %s); AKK lists the pane but never sends to it", name, version, d.profiled(kind)))
		}
		return t
	}
	t.Agent = profile.Agent()
	if !exact {
		// An unknown version stays callable through its nearest lower
		// neighbour's grammar: only what that grammar proves is trusted.
		t.Agent.Version, t.Agent.Compatibility = version, true
		t.Warnings = append(t.Warnings, fmt.Sprintf("compatibility: %s %s has no profile of its own; AKK reads it with the profile %s (the nearest lower version) and sends only when that profile proves an idle screen and an empty composer; permission prompts and questionnaires are left to the pane", name, version, t.Agent.Profile))
	}
	if snapshot == nil {
		snapshot = func(ctx context.Context, p tmux.Pane) (tmux.Snapshot, error) {
			return d.CapturePane(ctx, p.Socket, p.ID)
		}
	}
	snap, err := snapshot(ctx, c.pane)
	if err != nil {
		t.Warnings = append(t.Warnings, "the pane's screen could not be captured")
		return t
	}
	capture := screen.Parse(snap.ANSI)
	capture.Title = snap.Title
	t.Title = d.title(snap.Title)
	r := profile.Classify(capture)
	t.ScreenState, t.ComposerEmpty, t.AsyncQuestion = r.State, r.ComposerEmpty, r.AsyncQuestion
	return t
}

func (d *Discovery) profiled(kind domain.AgentKind) string {
	var vs []string
	for _, a := range d.registry.Supported() {
		if a.Kind == kind {
			vs = append(vs, a.Version)
		}
	}
	return strings.Join(vs, ", ")
}

// installedVersion reads the version of the agent's package once per
// binary (path, size and modification time).
func (d *Discovery) installedVersion(drv agent.Driver, p agent.Process) (string, error) {
	info, err := os.Stat(d.cfg.Proc.ExePath(p.Stat.PID))
	if err != nil {
		return "", err
	}
	key := versionKey{path: p.Exe, size: info.Size(), mtime: info.ModTime()}
	d.mu.Lock()
	v, ok := d.versions[key]
	d.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err = drv.InstalledVersion(p.Exe)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	d.versions[key] = v
	d.mu.Unlock()
	return v, nil
}

// title cleans the title an agent gave its pane: the leading activity glyph
// (a spinner, "✳") goes; tmux's default title (the host name) is no title.
func (d *Discovery) title(s string) string {
	s = strings.TrimSpace(s)
	if r, size := utf8.DecodeRuneInString(s); size > 0 && !unicode.IsLetter(r) && !unicode.IsDigit(r) && strings.HasPrefix(s[size:], " ") {
		s = strings.TrimSpace(s[size:])
	}
	if s == d.cfg.Hostname {
		return ""
	}
	return s
}

// Threads implements domain.ThreadReader: the native threads of the agent
// process that is terminal t, from its own records (never its screen). The
// pane must still run that very process incarnation.
func (d *Discovery) Threads(ctx context.Context, t domain.Terminal) ([]domain.NativeThread, error) {
	c, _, err := d.locate(ctx, t.Pane)
	if err != nil {
		return nil, err
	}
	if c.process.Stat.PID != t.Process.PID || c.process.Stat.StartTicks != t.Process.StartTicks {
		return nil, fmt.Errorf("%w: pane %s runs another process now", ErrPaneGone, t.Pane.PaneID)
	}
	r, ok := c.driver.(agent.ThreadReader)
	if !ok {
		return nil, fmt.Errorf("%s keeps no thread records AKK can read", c.driver.Kind())
	}
	return r.Threads(c.process)
}
