// Package codex is the Codex driver: it recognises Codex's native TUI
// process (under its Node wrapper), proves its thread from the rollout the
// process holds open where the version allows it, and holds one screen
// profile per supported version.
package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/proc"
)

// Driver implements agent.Driver for Codex.
type Driver struct{}

// Kind implements agent.Driver.
func (Driver) Kind() domain.AgentKind { return domain.AgentCodex }

// Name implements agent.Driver.
func (Driver) Name() string { return "Codex" }

// Unprofiled implements agent.Driver.
func (Driver) Unprofiled(version string) domain.Agent {
	return domain.Agent{Kind: domain.AgentCodex, Version: version, Profile: domain.ProfileUnprofiled, ThreadProbe: true}
}

// Profiles implements agent.Driver: one value per supported version.
func (Driver) Profiles() []agent.Profile {
	out := make([]agent.Profile, len(Profiles))
	for i, p := range Profiles {
		out[i] = p
	}
	return out
}

func profile(version string) (Profile, bool) {
	for _, p := range Profiles {
		if p.Version == version {
			return p, true
		}
	}
	return Profile{}, false
}

// MatchExe implements agent.Driver: the native binary is named codex (the
// Node wrapper runs as node and is not the agent).
func (Driver) MatchExe(exe string) bool {
	return filepath.Base(strings.TrimSuffix(exe, agent.Deleted)) == "codex"
}

// notInteractive are first arguments that run something other than the TUI.
var notInteractive = []string{"exec", "e", "app-server", "mcp-server", "mcp", "login", "logout", "apply", "a", "completion", "sandbox", "debug", "proto", "cloud", "features", "help", "generate-ts", "--version", "-V", "--help", "-h"}

// IsTUI implements agent.Driver.
func (Driver) IsTUI(argv []string) bool {
	return len(argv) > 0 && !(len(argv) > 1 && slices.Contains(notInteractive, argv[1]))
}

// InstalledVersion implements agent.Driver: codex-package.json beside the
// binary's bin folder, else the platform package's package.json, whose
// version carries a platform suffix ("0.169.0-linux-x64").
func (Driver) InstalledVersion(exe string) (string, error) {
	if strings.HasSuffix(exe, agent.Deleted) {
		return "", fmt.Errorf("executable %s was replaced since the process started", strings.TrimSuffix(exe, agent.Deleted))
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(exe)), "codex-package.json")); err == nil {
		var pkg struct{ Version string }
		if json.Unmarshal(b, &pkg) == nil && semver.MatchString(pkg.Version) {
			return pkg.Version, nil
		}
	}
	v, err := agent.PackageVersion(exe, 5, "@openai/codex")
	if err != nil {
		return "", err
	}
	if m := semverPrefix.FindString(v); m != "" {
		return m, nil
	}
	return "", fmt.Errorf("codex package version %q is not a version", v)
}

var (
	semver       = regexp.MustCompile(`^\d+\.\d+\.\d+$`)
	semverPrefix = regexp.MustCompile(`^\d+\.\d+\.\d+`)
)

// Home is where a Codex process keeps its files: $CODEX_HOME, else
// $HOME/.codex.
func Home(env map[string]string) (string, bool) {
	if d := env["CODEX_HOME"]; d != "" {
		return d, true
	}
	if h := env["HOME"]; h != "" {
		return filepath.Join(h, ".codex"), true
	}
	return "", false
}

// rolloutName matches sessions/YYYY/MM/DD/rollout-<time>-<thread uuid>.jsonl.
var rolloutName = regexp.MustCompile(`/sessions/\d{4}/\d{2}/\d{2}/rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$`)

// Rollout is one rollout file a process holds open.
type Rollout struct {
	Path     string
	ThreadID string
}

// OpenRollouts returns the rollouts a process holds open, once each.
func OpenRollouts(fs proc.FS, pid int) ([]Rollout, error) {
	files, err := fs.OpenFiles(pid)
	if err != nil {
		return nil, err
	}
	var out []Rollout
	for _, f := range files {
		m := rolloutName.FindStringSubmatch(f)
		if m == nil || slices.ContainsFunc(out, func(r Rollout) bool { return r.Path == f }) {
			continue
		}
		out = append(out, Rollout{Path: f, ThreadID: m[1]})
	}
	return out, nil
}

// Inspect implements agent.Driver.
//
// Where the version's TUI holds its rollout itself (0.155.1), the open
// rollouts decide: one proves the thread, several are ambiguous, none
// proves there is no thread yet. Where a managed app-server daemon holds
// them (0.169.0), nothing on disk ties a thread to this pane: ambiguous
// while the daemon runs, until a native /status probe or the acceptance of
// a request proves it.
func (Driver) Inspect(fs proc.FS, table *proc.Table, p agent.Process, version string) agent.Native {
	n := agent.Native{Identity: domain.IdentityUnavailable, Activity: domain.ActivityUnknown}
	home, ok := Home(p.Env)
	if !ok {
		n.Warnings = append(n.Warnings, "Codex's environment names no HOME or CODEX_HOME; its rollouts cannot be located")
		return n
	}
	rollouts, err := OpenRollouts(fs, p.Stat.PID)
	if err != nil {
		n.Warnings = append(n.Warnings, "Codex's open files could not be read")
		return n
	}
	prof, profiled := profile(version)
	switch {
	case len(rollouts) == 1:
		n.Identity, n.ThreadID = domain.IdentityResolved, rollouts[0].ThreadID
		n.Activity = RolloutActivity(rollouts[0].Path)
		return n
	case len(rollouts) > 1:
		n.Identity = domain.IdentityAmbiguous
		n.Warnings = append(n.Warnings, fmt.Sprintf("Codex holds %d rollouts open; the foreground thread is not proven", len(rollouts)))
		return n
	case profiled && prof.RolloutInProcess:
		n.Identity = domain.IdentityVerifiedAbsent
		return n
	}
	if daemon := ManagedDaemon(fs, table, home); daemon > 0 {
		n.Identity = domain.IdentityAmbiguous
		n.Warnings = append(n.Warnings, domain.WarnDaemonThread)
		return n
	}
	n.Warnings = append(n.Warnings, "Codex holds no rollout and no app-server daemon for its home was found; its thread cannot be located")
	return n
}

// ManagedDaemon returns the pid of the managed app-server daemon that serves
// a Codex home, 0 when none runs. It runs the copy of codex installed under
// <home>/packages/app-server-daemon/ and has no terminal.
func ManagedDaemon(fs proc.FS, table *proc.Table, home string) int {
	if table == nil {
		return 0
	}
	prefix := filepath.Join(home, "packages", "app-server-daemon") + "/"
	best := 0
	for _, s := range table.All() {
		if s.TTY != 0 || s.Comm != "codex" {
			continue
		}
		exe, err := fs.Exe(s.PID)
		if err != nil || !strings.HasPrefix(exe, prefix) {
			continue
		}
		argv, err := fs.Cmdline(s.PID)
		if err != nil || !slices.Contains(argv, "--managed-daemon") {
			continue
		}
		if best == 0 || s.PID < best {
			best = s.PID
		}
	}
	return best
}

// RolloutActivity reads the end of a rollout: the last task_started not
// followed by task_complete or turn_aborted means a turn is running.
func RolloutActivity(path string) domain.ActivityState {
	lines, err := agent.TailLines(path, 256<<10)
	if err != nil {
		return domain.ActivityUnknown
	}
	for i := len(lines) - 1; i >= 0; i-- {
		// Most lines are other records: only those naming a turn's start
		// or end are decoded (a look reads this at every pane).
		if !bytes.Contains(lines[i], []byte("task_started")) && !bytes.Contains(lines[i], []byte("task_complete")) &&
			!bytes.Contains(lines[i], []byte("turn_aborted")) {
			continue
		}
		var rec struct {
			Type    string `json:"type"`
			Payload struct {
				Type string `json:"type"`
			} `json:"payload"`
		}
		if json.Unmarshal(lines[i], &rec) != nil || rec.Type != "event_msg" {
			continue
		}
		switch rec.Payload.Type {
		case "task_started":
			return domain.ActivityWorking
		case "task_complete", "turn_aborted":
			return domain.ActivityIdle
		}
	}
	// A rollout without any turn yet: nothing runs.
	if len(lines) > 0 {
		return domain.ActivityIdle
	}
	return domain.ActivityUnknown
}
