// Package claude is the Claude Code driver: it recognises Claude Code's
// process, reads its session record for the native session id, and holds
// one screen profile per supported version.
package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/proc"
)

// Driver implements agent.Driver for Claude Code.
type Driver struct{}

// Kind implements agent.Driver.
func (Driver) Kind() domain.AgentKind { return domain.AgentClaude }

// Name implements agent.Driver.
func (Driver) Name() string { return "Claude Code" }

// Unprofiled implements agent.Driver.
func (Driver) Unprofiled(version string) domain.Agent {
	return domain.Agent{Kind: domain.AgentClaude, Version: version, Profile: domain.ProfileUnprofiled}
}

// Profiles implements agent.Driver: one value per supported version.
func (Driver) Profiles() []agent.Profile {
	out := make([]agent.Profile, len(Profiles))
	for i, p := range Profiles {
		out[i] = p
	}
	return out
}

// MatchExe implements agent.Driver. The npm package ships bin/claude.exe;
// the native installer keeps versions/<version> under a "claude" folder.
func (Driver) MatchExe(exe string) bool {
	exe = strings.TrimSuffix(exe, agent.Deleted)
	switch base := filepath.Base(exe); {
	case base == "claude.exe" || base == "claude":
		return true
	case semver.MatchString(base):
		dir := filepath.Dir(exe)
		return filepath.Base(dir) == "versions" && filepath.Base(filepath.Dir(dir)) == "claude"
	}
	return false
}

var semver = regexp.MustCompile(`^\d+\.\d+\.\d+$`)

// notInteractive are first arguments that run something other than the TUI.
var notInteractive = []string{"mcp", "config", "doctor", "update", "upgrade", "install", "migrate-installer", "setup-token", "plugin", "api-key", "--version", "-v", "--help", "-h"}

// IsTUI implements agent.Driver: print mode and subcommands are not
// conversations a person shares. No arguments at all (a process read
// between its fork and its exec, or while it exits: seen once in a listing,
// where it made the listing panic) proves nothing: not a TUI.
func (Driver) IsTUI(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	if len(argv) > 1 && slices.Contains(notInteractive, argv[1]) {
		return false
	}
	for _, a := range argv[1:] {
		if a == "-p" || a == "--print" || strings.HasPrefix(a, "--print=") {
			return false
		}
	}
	return true
}

// InstalledVersion implements agent.Driver.
func (Driver) InstalledVersion(exe string) (string, error) {
	if v, err := agent.PackageVersion(exe, 3, "@anthropic-ai/claude-code"); err == nil {
		return v, nil
	}
	base := filepath.Base(strings.TrimSuffix(exe, agent.Deleted))
	if semver.MatchString(base) && !strings.HasSuffix(exe, agent.Deleted) {
		return base, nil
	}
	return "", fmt.Errorf("no Claude Code package or version folder around %s", exe)
}

// ConfigDir is where a Claude Code process keeps its files:
// $CLAUDE_CONFIG_DIR, else $HOME/.claude.
func ConfigDir(env map[string]string) (string, bool) {
	if d := env["CLAUDE_CONFIG_DIR"]; d != "" {
		return d, true
	}
	if h := env["HOME"]; h != "" {
		return filepath.Join(h, ".claude"), true
	}
	return "", false
}

var errSessionRecordJSON = errors.New("Claude Code's session record is not valid JSON")

// readSessionRecord reads sessions/<pid>.json. Claude Code rewrites it in
// place whenever its status changes (a task starting, a prompt showing), so
// a read can meet it truncated or half written: a record that is not valid
// JSON is read again a few times (a few milliseconds apart) before it
// counts as broken.
func readSessionRecord(path string) (sessionRecord, error) {
	var rec sessionRecord
	for try := 0; ; try++ {
		b, err := os.ReadFile(path)
		if err != nil {
			return rec, err
		}
		rec = sessionRecord{}
		if err := json.Unmarshal(b, &rec); err == nil {
			return rec, nil
		} else if try >= 9 {
			return rec, fmt.Errorf("%w: %v", errSessionRecordJSON, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sessionRecord is sessions/<pid>.json, which Claude Code keeps while it
// runs. Beside it lies <pid>.<hash>.key, a peer secret AKK never opens.
type sessionRecord struct {
	PID       int    `json:"pid"`
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	ProcStart string `json:"procStart"`
	Version   string `json:"version"`
	Status    string `json:"status"`
	Kind      string `json:"kind"`
}

var uuid = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Inspect implements agent.Driver. The session record names the session of
// exactly this process incarnation (its pid and start time), so the
// identity is resolved from it alone; the transcript may not exist yet.
func (Driver) Inspect(_ proc.FS, _ *proc.Table, p agent.Process, _ string) agent.Native {
	n := agent.Native{Identity: domain.IdentityUnavailable, Activity: domain.ActivityUnknown}
	dir, ok := ConfigDir(p.Env)
	if !ok {
		n.Warnings = append(n.Warnings, "Claude Code's environment names no HOME or CLAUDE_CONFIG_DIR; its session cannot be located")
		return n
	}
	rec, err := readSessionRecord(filepath.Join(dir, "sessions", strconv.Itoa(p.Stat.PID)+".json"))
	if errors.Is(err, errSessionRecordJSON) {
		n.Warnings = append(n.Warnings, "Claude Code's session record is not valid JSON")
		return n
	}
	if err != nil {
		n.Warnings = append(n.Warnings, "Claude Code's session record for this process could not be read")
		return n
	}
	if rec.PID != p.Stat.PID || rec.ProcStart != strconv.FormatUint(p.Stat.StartTicks, 10) {
		n.Warnings = append(n.Warnings, "Claude Code's session record belongs to an earlier process with the same pid")
		return n
	}
	n.Version = rec.Version
	switch rec.Status {
	case "idle":
		n.Activity = domain.ActivityIdle
	case "busy":
		n.Activity = domain.ActivityWorking
	}
	if !uuid.MatchString(rec.SessionID) {
		n.Warnings = append(n.Warnings, "Claude Code's session record names no session id")
		return n
	}
	n.Identity, n.ThreadID = domain.IdentityResolved, rec.SessionID
	return n
}

// ProjectDir is the folder under <config>/projects that holds the
// transcripts of sessions started in cwd: every character other than a
// letter or digit becomes "-".
func ProjectDir(configDir, cwd string) string {
	var b strings.Builder
	for _, r := range cwd {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return filepath.Join(configDir, "projects", b.String())
}

// TranscriptPath returns the transcript of a session: in the project folder
// of cwd, or, when that folder name was shortened, wherever it is.
func TranscriptPath(configDir, cwd, sessionID string) (string, bool) {
	p := filepath.Join(ProjectDir(configDir, cwd), sessionID+".jsonl")
	if _, err := os.Stat(p); err == nil {
		return p, true
	}
	matches, _ := filepath.Glob(filepath.Join(configDir, "projects", "*", sessionID+".jsonl"))
	if len(matches) == 1 {
		return matches[0], true
	}
	return "", false
}
