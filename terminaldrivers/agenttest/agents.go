package agenttest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Agent kinds, as in scripts/agents.txt.
const (
	KindClaude = "claude"
	KindCodex  = "codex"
)

// RequireEnv is the environment variable that turns a missing agent (or tmux)
// from a skip into a failure. CI sets it to 1 after installing the agents.
const RequireEnv = "AKK_REQUIRE_AGENTS"

// Agent is one pinned agent version and where its install lives.
type Agent struct {
	Kind    string // KindClaude or KindCodex
	Version string
	Package string // npm package
	Dir     string // <agents dir>/<kind>@<version>
}

// Name is "<kind>@<version>", the install folder's name; tests use it for
// subtest names.
func (a Agent) Name() string { return a.Kind + "@" + a.Version }

// Entry is the npm entry point a human would run (for Codex 0.155.1 a Node
// wrapper whose child is the native binary).
func (a Agent) Entry() string { return filepath.Join(a.Dir, "entry") }

// Native is the native binary inside the npm package.
func (a Agent) Native() string { return filepath.Join(a.Dir, "native") }

// Installed reports whether scripts/install-agents.sh finished this version.
func (a Agent) Installed() bool {
	if _, err := os.Stat(filepath.Join(a.Dir, ".installed")); err != nil {
		return false
	}
	_, err := os.Stat(a.Entry())
	return err == nil
}

// AgentsDir is where scripts/install-agents.sh installs: $AKK_AGENTS_DIR, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/akk/agents.
func AgentsDir() string { return CacheDir("AKK_AGENTS_DIR", "agents") }

// CacheDir is the folder an install script of the project uses: the
// environment variable env when set, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/akk/<name>.
func CacheDir(env, name string) string {
	if d := os.Getenv(env); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "akk", name)
}

// ModuleRoot walks up from the working directory to the folder with go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("agenttest: no go.mod above the working directory")
		}
		dir = parent
	}
}

// PinnedAgents reads scripts/agents.txt: every version AKK is tested against.
func PinnedAgents() ([]Agent, error) { return agentList("agents.txt") }

// UnprofiledAgents reads scripts/agents-unprofiled.txt: releases AKK has no
// profile for, on which the tests prove what works without one.
func UnprofiledAgents() ([]Agent, error) { return agentList("agents-unprofiled.txt") }

// RequireUnprofiled returns the unprofiled releases of the kinds given (all
// when none are given), gated like RequireAgents.
func RequireUnprofiled(t testing.TB, kinds ...string) []Agent {
	t.Helper()
	RequireTmux(t)
	all, err := UnprofiledAgents()
	if err != nil {
		t.Fatal(err)
	}
	var out []Agent
	for _, a := range all {
		if len(kinds) > 0 && !contains(kinds, a.Kind) {
			continue
		}
		if !a.Installed() {
			skipOrFail(t, fmt.Sprintf("agent not installed in %s: %s", AgentsDir(), a.Name()))
		}
		out = append(out, a)
	}
	return out
}

func agentList(name string) ([]Agent, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(root, "scripts", name))
	if err != nil {
		return nil, fmt.Errorf("agenttest: agent list: %w", err)
	}
	defer f.Close()
	var out []Agent
	dir := AgentsDir()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return nil, fmt.Errorf("agenttest: agents.txt: bad line %q", line)
		}
		a := Agent{Kind: fields[0], Version: fields[1], Package: fields[2]}
		a.Dir = filepath.Join(dir, a.Name())
		out = append(out, a)
	}
	return out, sc.Err()
}

// required reports whether missing agents must fail the test.
func required() bool { return os.Getenv(RequireEnv) == "1" }

// skipOrFail skips the test with msg, or fails it when AKK_REQUIRE_AGENTS=1.
func skipOrFail(t testing.TB, msg string) {
	t.Helper()
	if required() {
		t.Fatalf("%s (%s=1, so this is a failure, not a skip)", msg, RequireEnv)
	}
	t.Skipf("%s; install with scripts/install-agents.sh, set %s=1 to fail instead of skipping", msg, RequireEnv)
}

// RequireTmux skips (or fails, see RequireEnv) when tmux is not on PATH.
func RequireTmux(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (make check): no tmux or agents")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		skipOrFail(t, "tmux is not installed")
	}
}

// RequireAgents returns every pinned agent of the given kinds (all kinds when
// none are given). When one is not installed, or tmux is missing, the test is
// skipped with a message naming it, or fails when AKK_REQUIRE_AGENTS=1.
func RequireAgents(t testing.TB, kinds ...string) []Agent {
	t.Helper()
	RequireTmux(t)
	all, err := PinnedAgents()
	if err != nil {
		t.Fatal(err)
	}
	var out []Agent
	var missing []string
	for _, a := range all {
		if len(kinds) > 0 && !contains(kinds, a.Kind) {
			continue
		}
		if !a.Installed() {
			missing = append(missing, a.Name())
		}
		out = append(out, a)
	}
	if len(missing) > 0 {
		skipOrFail(t, fmt.Sprintf("agents not installed in %s: %s", AgentsDir(), strings.Join(missing, ", ")))
	}
	return out
}

// RequireAgent returns one pinned agent version, gated like RequireAgents.
func RequireAgent(t testing.TB, kind, version string) Agent {
	t.Helper()
	for _, a := range RequireAgents(t, kind) {
		if a.Version == version {
			return a
		}
	}
	t.Fatalf("agenttest: %s %s is not pinned in scripts/agents.txt", kind, version)
	return Agent{}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
