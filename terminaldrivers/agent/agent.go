// Package agent is the contract between terminal discovery and the drivers
// of each coding agent (claude, codex): how a driver recognises its agent's
// process, reads the agent's own files, and which version profiles it has.
package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/proc"
	"akk/terminaldrivers/screen"
)

// Process is an agent process found in a pane's foreground.
type Process struct {
	Stat proc.Stat
	Exe  string   // executable path; ends in " (deleted)" if replaced since start
	Argv []string // argument vector
	Cwd  string
	Env  map[string]string // only the variables in EnvNames
}

// EnvNames are the environment variables discovery reads from an agent
// process: where each agent keeps its own files.
var EnvNames = []string{"HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME"}

// Reading is what a profile proved from one capture.
type Reading struct {
	State         domain.ScreenState
	ComposerEmpty bool
	// AsyncQuestion: an async question waits (collapsed above the composer
	// or opened in its place) while the turn works on.
	AsyncQuestion bool
	// Region is the bottom-most region the state was read from (the
	// composer, a prompt, a dialog); empty when nothing was recognised.
	Region screen.Region
	// Reason says in a few words why, for logs and tests.
	Reason string
}

// Profile is one agent version's screen grammar. Adding a version is adding
// a Profile value (and its fixtures), not editing shared code.
type Profile interface {
	Agent() domain.Agent // kind, version and profile name
	Classify(c screen.Capture) Reading
}

// Native is what the agent's own files say about a process.
type Native struct {
	Identity domain.IdentityState
	ThreadID string // set only when Identity is resolved
	Activity domain.ActivityState
	// Version is the version the running agent wrote in its own files, ""
	// when it wrote none.
	Version  string
	Warnings []string
}

// Driver recognises one kind of coding agent.
type Driver interface {
	Kind() domain.AgentKind
	// Name is the agent's name as people know it ("Claude Code").
	Name() string
	// Unprofiled is an agent of this kind at version that no profile
	// covers: never typed into; only what the kind can be asked whatever
	// its version (Codex: its threads, through its app-server) is set.
	Unprofiled(version string) domain.Agent
	// MatchExe reports whether an executable path may be this agent's
	// binary; cheap, called for every foreground process of every pane.
	MatchExe(exe string) bool
	// IsTUI reports whether a process of a matching executable run with
	// argv is the interactive TUI (not a print mode, server or subcommand).
	IsTUI(argv []string) bool
	// InstalledVersion reads the version of the package that holds exe
	// from files beside it. It never runs the binary.
	InstalledVersion(exe string) (string, error)
	// Inspect reads the agent's own files (session records, transcripts,
	// rollouts, open files) for the native identity and durable activity of
	// p. version is the best known version, "" if none.
	Inspect(fs proc.FS, table *proc.Table, p Process, version string) Native
	Profiles() []Profile
}

// Registry holds profiles keyed by kind and version.
type Registry struct {
	byKey map[string]Profile
}

func key(kind domain.AgentKind, version string) string { return string(kind) + "@" + version }

// NewRegistry registers profiles; two profiles for one kind and version is
// a programming error.
func NewRegistry(profiles ...Profile) (*Registry, error) {
	r := &Registry{byKey: map[string]Profile{}}
	for _, p := range profiles {
		a := p.Agent()
		k := key(a.Kind, a.Version)
		if _, dup := r.byKey[k]; dup {
			return nil, fmt.Errorf("two profiles for %s", k)
		}
		if a.Version == "" || a.Profile == "" || a.Profile == domain.ProfileUnprofiled {
			return nil, fmt.Errorf("profile %q for %s: needs a version and a name", a.Profile, k)
		}
		r.byKey[k] = p
	}
	return r, nil
}

// Lookup returns the profile of one agent version.
func (r *Registry) Lookup(kind domain.AgentKind, version string) (Profile, bool) {
	p, ok := r.byKey[key(kind, version)]
	return p, ok
}

// Resolve returns the profile that reads an agent version: its own
// (exact), else, for a complete x.y.z version of a known kind, the nearest
// lower profile of that kind. The operator guide keeps unknown versions
// callable with a compatibility warning; only what the borrowed profile
// proves on screen is trusted, and prompts are never answered on it.
func (r *Registry) Resolve(kind domain.AgentKind, version string) (p Profile, exact, ok bool) {
	if p, ok := r.Lookup(kind, version); ok {
		return p, true, true
	}
	want, ok := ParseVersion(version)
	if !ok {
		return nil, false, false
	}
	var best Profile
	var bestV Version
	for _, c := range r.byKey {
		a := c.Agent()
		if a.Kind != kind {
			continue
		}
		v, ok := ParseVersion(a.Version)
		if !ok || want.Less(v) || (best != nil && v.Less(bestV)) {
			continue
		}
		best, bestV = c, v
	}
	return best, false, best != nil
}

// Version is a complete x.y.z version.
type Version [3]int

// ParseVersion reads a complete x.y.z version (no pre-release suffix).
func ParseVersion(s string) (Version, bool) {
	var v Version
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, part := range parts {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 || part == "" || (len(part) > 1 && part[0] == '0') {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

// Less reports whether v comes before w.
func (v Version) Less(w Version) bool {
	for i := range v {
		if v[i] != w[i] {
			return v[i] < w[i]
		}
	}
	return false
}

// Supported lists every profiled agent version, sorted.
func (r *Registry) Supported() []domain.Agent {
	out := make([]domain.Agent, 0, len(r.byKey))
	for _, p := range r.byKey {
		out = append(out, p.Agent())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		vi, _ := ParseVersion(out[i].Version)
		vj, _ := ParseVersion(out[j].Version)
		return vi.Less(vj)
	})
	return out
}

// Deleted is the suffix the kernel adds to the executable path of a process
// whose binary was replaced or removed since it started (an upgrade).
const Deleted = " (deleted)"

// PackageVersion finds, in the folders above exe (at most levels of them),
// the package.json of one of the named npm packages and returns its version.
// It reads files only; it never runs the binary.
func PackageVersion(exe string, levels int, names ...string) (string, error) {
	if strings.HasSuffix(exe, Deleted) {
		return "", fmt.Errorf("executable %s was replaced since the process started", strings.TrimSuffix(exe, Deleted))
	}
	dir := filepath.Dir(exe)
	for i := 0; i < levels && dir != "/" && dir != "."; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			var pkg struct{ Name, Version string }
			if json.Unmarshal(b, &pkg) == nil && slices.Contains(names, pkg.Name) && pkg.Version != "" {
				return pkg.Version, nil
			}
		}
		dir = filepath.Dir(dir)
	}
	return "", fmt.Errorf("no package.json of %s above %s", strings.Join(names, " or "), exe)
}
