package domain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// AgentKind names a coding agent AKK can drive in a terminal.
type AgentKind string

const (
	AgentClaude AgentKind = "claude"
	AgentCodex  AgentKind = "codex"
)

// ScreenState is what the bounded live screen of an agent's pane proves.
// Anything a profile cannot prove is ScreenUnknown.
type ScreenState string

const (
	ScreenIdle                ScreenState = "idle"
	ScreenWorking             ScreenState = "working"
	ScreenAwaitingApproval    ScreenState = "awaiting_approval"
	ScreenAwaitingInteraction ScreenState = "awaiting_interaction"
	// ScreenStartupDialog is a dialog the agent shows before its composer
	// (trust, API key, "make auto mode your default?"): a human answers it.
	ScreenStartupDialog ScreenState = "startup_dialog"
	ScreenUnknown       ScreenState = "unknown"
)

// IdentityState says how far the native session (Claude session, Codex
// thread) in the pane's foreground is resolved. Never a guess.
type IdentityState string

const (
	// IdentityResolved: exactly one native session is proven for this process.
	IdentityResolved IdentityState = "resolved"
	// IdentityAmbiguous: several candidates, or a shared owner (Codex's
	// app-server daemon) that cannot tell which belongs to this pane.
	IdentityAmbiguous IdentityState = "ambiguous"
	// IdentityVerifiedAbsent: the agent's own evidence proves it has no
	// durable native session yet (for example no rollout opened).
	IdentityVerifiedAbsent IdentityState = "verified_absent"
	// IdentityUnavailable: the evidence could not be read or does not match
	// this process incarnation.
	IdentityUnavailable IdentityState = "unavailable"
)

// ActivityState is what the agent's durable record (Claude transcript,
// Codex rollout) says about the current native task.
type ActivityState string

const (
	ActivityIdle    ActivityState = "idle"
	ActivityWorking ActivityState = "working"
	ActivityUnknown ActivityState = "unknown"
)

// ProviderTmux is the only terminal provider so far.
const ProviderTmux = "tmux"

// ProfileUnprofiled is the profile of a known agent whose version has no
// profile: it is listed, but its screen is never trusted.
const ProfileUnprofiled = "unprofiled"

// Agent is the coding agent running in a terminal.
type Agent struct {
	Kind    AgentKind
	Version string // "" when it could not be determined
	Profile string // a profile name, or ProfileUnprofiled
	// Compatibility: the version has no profile of its own and is read
	// with Profile, its nearest lower neighbour's. Sends need that
	// profile's proof of an idle screen; prompts are never answered.
	Compatibility bool
	// ThreadProbe: the agent can be asked which thread its pane shows (its
	// status card, or its app-server daemon), so an identity its records
	// leave unproven can be probed (Codex). Without it (Claude Code) only
	// the agent's records prove a thread. Set from the profile.
	ThreadProbe bool
}

// Profiled reports whether a profile vouches for this agent's screens.
func (a Agent) Profiled() bool { return a.Profile != "" && a.Profile != ProfileUnprofiled }

// PaneLocator says where a pane lives. Private: never shown to a host.
type PaneLocator struct {
	Socket string // tmux server socket path
	PaneID string // tmux pane id, e.g. "%3"
}

// Incarnation identifies one run of a process. A pid alone is reused; with
// its start time (clock ticks since boot) and the boot id it is not.
type Incarnation struct {
	BootID     string
	PID        int
	StartTicks uint64
}

// Terminal is one tmux pane whose foreground process is a coding agent, as
// observed at one moment.
type Terminal struct {
	// ID is opaque and stable for one pane and one agent process
	// incarnation; it changes when the agent restarts (see TerminalIDFor).
	ID       string
	Provider string // ProviderTmux

	Pane        PaneLocator
	SessionName string // tmux session name
	WindowName  string // tmux window name
	Project     string // the pane's absolute working directory
	Title       string // the pane title the agent set, "" when none
	// DialogQuestion is what a start-up dialog asks (ScreenStartupDialog
	// only; read by the listing, redacted).
	DialogQuestion string
	Width          int
	Height         int

	Agent   Agent
	Process Incarnation

	ScreenState   ScreenState
	ComposerEmpty bool // the main composer is proven empty
	// AsyncQuestion: an async question waits on screen while the agent
	// works on (Codex's queued follow-up questions).
	AsyncQuestion bool

	NativeIdentity  IdentityState
	NativeThreadID  string // set only when NativeIdentity is resolved
	DurableActivity ActivityState

	// Warnings are short sentences a person can act on.
	Warnings []string

	// Channels: how AKK would answer a prompt or a question here.
	Channels TerminalChannels
	// ExactPrompt: the prompt this observation shows is held by an exact
	// channel (the agent's hook), not read from a drawing: it needs no
	// second look to be believed.
	ExactPrompt bool
}

// Channel is a way AKK answers what an agent asks.
type Channel string

// Channels.
const (
	// ChannelHook: the agent's own hook (Claude Code's PermissionRequest).
	ChannelHook Channel = "hook"
	// ChannelAppServer: the agent's app-server protocol (Codex's daemon).
	ChannelAppServer Channel = "app_server"
	// ChannelScreen: the screen, with the version's own profile.
	ChannelScreen Channel = "screen"
	// ChannelNone: AKK answers nothing here; the person does, in the pane.
	ChannelNone Channel = "none"
)

// TerminalChannels names the live channel of permission prompts and of
// questions.
type TerminalChannels struct {
	Permission Channel
	Question   Channel
}

// ChannelReader tells a terminal's channels (the pane adapter).
type ChannelReader interface {
	Channels(t Terminal) TerminalChannels
}

// SendReady reports whether AKK may type a new task into this terminal now:
// a profiled agent, idle, with a proven empty composer. Callers still
// revalidate the pane and process incarnation under the terminal lock.
func (t Terminal) SendReady() bool {
	return t.Agent.Profiled() && t.ScreenState == ScreenIdle && t.ComposerEmpty
}

// Watchable reports whether a task is visibly running in the terminal, so a
// Watch has something to observe.
func (t Terminal) Watchable() bool {
	return t.ScreenState == ScreenWorking || t.ScreenState == ScreenAwaitingApproval
}

// TerminalIDFor derives the opaque terminal id of one pane hosting one
// process incarnation.
func TerminalIDFor(pane PaneLocator, p Incarnation) string {
	h := sha256.New()
	for _, part := range []string{pane.Socket, pane.PaneID, p.BootID, strconv.Itoa(p.PID), strconv.FormatUint(p.StartTicks, 10)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return "term_" + hex.EncodeToString(h.Sum(nil))[:24]
}

// TerminalDiscovery lists the agent terminals visible on this machine. It
// sends no input to any pane.
type TerminalDiscovery interface {
	Discover(ctx context.Context) ([]Terminal, error)
}

// TerminalDiagnostics reports what the doctor needs about terminals.
type TerminalDiagnostics interface {
	Diagnose(ctx context.Context) (TerminalDiagnosis, error)
}

// TerminalDiagnosis is the terminal side of the doctor's report.
type TerminalDiagnosis struct {
	Tmux    TmuxStatus
	Servers []TmuxServerStatus
	// StaleSockets counts sockets in the user's tmux socket folder that no
	// server listens on (left by servers that died); they are skipped.
	StaleSockets int
	Agents       []AgentPresence
	Supported    []Agent // every agent version a profile exists for
	// Searched is where tmux servers were looked for: the user's socket
	// folder (unless only listed sockets are watched) and each listed
	// socket.
	Searched []string
}

// TmuxStatus says whether tmux can be run, and which version it is.
type TmuxStatus struct {
	Found   bool
	Version string // e.g. "3.3a"
	Problem string // why it was not found, "" when Found
}

// TmuxServerStatus is one tmux server socket AKK looked at.
type TmuxServerStatus struct {
	Socket  string
	Panes   int    // panes listed, agent or not
	Problem string // why it could not be listed, "" when it was
}

// AgentPresence counts the panes running one agent version.
type AgentPresence struct {
	Agent Agent
	Panes int
}

// Ready reports whether tmux works and every agent found has a profile.
func (d TerminalDiagnosis) Ready() bool {
	if !d.Tmux.Found {
		return false
	}
	for _, a := range d.Agents {
		if !a.Agent.Profiled() {
			return false
		}
	}
	return true
}

// Problems lists, in words a person can act on, what keeps terminals from
// being fully usable. A tmux server that cannot be listed (often a socket
// left by a crashed server) is listed here but does not make it not Ready.
func (d TerminalDiagnosis) Problems() []string {
	var out []string
	if !d.Tmux.Found {
		out = append(out, "tmux not usable: "+d.Tmux.Problem)
	}
	for _, s := range d.Servers {
		if s.Problem != "" {
			out = append(out, "tmux server "+s.Socket+" not listed: "+s.Problem)
		}
	}
	searched := strings.Join(d.Searched, ", ")
	if searched == "" {
		searched = "no place (--tmux-default-sockets off and no --tmux-sockets)"
	}
	if d.Tmux.Found && len(d.Servers) == 0 {
		out = append(out, "no tmux server found in "+searched+
			": start tmux and an agent in it as this user, or name another server's socket with --tmux-sockets")
	} else if d.Tmux.Found && len(d.Agents) == 0 {
		out = append(out, fmt.Sprintf("no Claude Code or Codex pane in the %d tmux server(s) found in %s", len(d.Servers), searched))
	}
	for _, a := range d.Agents {
		if !a.Agent.Profiled() {
			v := a.Agent.Version
			if v == "" {
				v = "of unknown version"
			}
			out = append(out, string(a.Agent.Kind)+" "+v+" has no profile (supported: "+supportedList(d.Supported, a.Agent.Kind)+"); its panes are listed but never sent to")
		} else if a.Agent.Compatibility {
			out = append(out, string(a.Agent.Kind)+" "+a.Agent.Version+" has no profile of its own and is read with "+a.Agent.Profile+" (compatibility); permission prompts and questionnaires on it are left to the pane")
		}
	}
	return out
}

func supportedList(agents []Agent, kind AgentKind) string {
	var vs []string
	for _, a := range agents {
		if a.Kind == kind {
			vs = append(vs, a.Version)
		}
	}
	if len(vs) == 0 {
		return "none"
	}
	return strings.Join(vs, ", ")
}
