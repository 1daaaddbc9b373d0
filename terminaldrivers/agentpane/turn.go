// Turns: the adapter looks at one terminal again, marks where the agent's durable record
// (Claude Code transcript, Codex rollout) ends, types a request as one
// bracketed paste verified in the composer before a single Enter, presses
// the interrupt key, and reads the record after the mark for the native
// turn that carries the request. What differs between agent versions comes
// from their profiles (agent.TurnProfile); this package holds no version
// switch.
//
// What the record proves, per agent (measured on the pinned versions):
//
//   - Claude Code: the transcript of the session its sessions/<pid>.json
//     names. Accepted: a user record whose content is the request (2.1.328
//     wraps a collapsed paste in pasted_content tags, which are undone).
//     The prompt record may be appended after the reply it caused, so
//     replies stamped after it count. Completed: an end_turn assistant
//     message, then a turn_duration record. Failed: an assistant record
//     with isApiErrorMessage (2.1.267 writes turn_duration after it,
//     2.1.328 does not). Interrupted: a "[Request interrupted by user"
//     record; interrupted before any answer it writes nothing and puts
//     the request back in the composer, which the session record's status
//     turning idle proves after a two-second grace.
//   - Codex: rollouts held open by the TUI (0.155.1) or by the managed
//     app-server daemon of its CODEX_HOME (0.169.0, possibly for several
//     TUIs); until acceptance every rollout the holder has open, and any
//     it opens later, is read, and the one with a user message exactly
//     equal to the request binds the thread (the same request in two is
//     ErrAmbiguous). Completed: task_complete of that turn id with
//     last_agent_message; Failed: task_complete with an error; Interrupted:
//     turn_aborted.
//
// Limits the caller must respect (Submit refuses them with SubmitNothing,
// see CheckRequest): at most domain.MaxRequestBytes; no leading or trailing white
// space; no control character but newline (no tab); not starting with "/"
// or "!" (a pasted "!" switches both agents to shell mode, "/" opens Claude
// Code's command menu). Long requests are shown collapsed ("[Pasted text #1
// +4 lines]" by Claude Code over 800 characters or 3 lines, "[Pasted
// Content N chars]" by Codex over 1000 characters) and verified by that
// placeholder. A request the agent shows as text must fit its composer:
// Submit refuses (ErrRequestTooTall, SubmitNothing) one that would take
// more than half the pane's rows (Codex 0.169.0 loses its status line at
// 30 lines in a 40-row pane).

package agentpane

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/tmux"
)

// ErrNotReady: the terminal is not idle with an empty composer, so Submit
// sent nothing.
var ErrNotReady = errors.New("terminal not ready for a request")

// ErrNotProfiled: no profile of the terminal's agent version supports Turns.
var ErrNotProfiled = errors.New("agent version has no turn profile")

// Observe implements domain.TurnTerminal: the terminal's pane is looked at
// again (its server listed, the process table read, the screen captured).
// A terminal id not seen before is found by listing every server.
func (x *Adapter) Observe(ctx context.Context, terminalID string) (domain.Terminal, error) {
	return x.observe(ctx, terminalID, x.disc.Pane)
}

// Look implements paneSource: Observe with the process table and pane
// list shared between monitors for up to discovery.LookTTL.
func (x *Adapter) Look(ctx context.Context, terminalID string) (domain.Terminal, error) {
	return x.observe(ctx, terminalID, x.disc.LookPane)
}

func (x *Adapter) observe(ctx context.Context, terminalID string,
	pane func(context.Context, domain.PaneLocator) (domain.Terminal, bool, error)) (domain.Terminal, error) {
	x.mu.Lock()
	loc, known := x.panes[terminalID]
	x.mu.Unlock()
	if !known {
		// A terminal the last listing found is looked at in its pane alone.
		loc, known = x.disc.Listed(terminalID)
	}
	if !known {
		terms, err := x.disc.Discover(ctx)
		if err != nil {
			return domain.Terminal{}, fmt.Errorf("observe %s: %w", terminalID, err)
		}
		for _, t := range terms {
			if t.ID == terminalID {
				x.remember(t)
				return x.withHook(t), nil
			}
		}
		return domain.Terminal{}, domain.ErrTerminalGone
	}
	t, found, err := pane(ctx, loc)
	if err != nil {
		if serverGone(loc.Socket, err) {
			x.forget(terminalID)
			return domain.Terminal{}, domain.ErrTerminalGone
		}
		return domain.Terminal{}, fmt.Errorf("observe %s: %w", terminalID, err)
	}
	if !found || t.ID != terminalID {
		x.forget(terminalID)
		return domain.Terminal{}, domain.ErrTerminalGone
	}
	x.remember(t)
	return x.withHook(t), nil
}

func (x *Adapter) remember(t domain.Terminal) {
	x.mu.Lock()
	x.panes[t.ID] = t.Pane
	if t.Agent.Kind == domain.AgentClaude && t.NativeIdentity == domain.IdentityResolved && t.NativeThreadID != "" {
		x.sessions[t.NativeThreadID] = t.ID
	}
	x.mu.Unlock()
}

func (x *Adapter) forget(id string) {
	x.mu.Lock()
	delete(x.panes, id)
	for s, t := range x.sessions {
		if t == id {
			delete(x.sessions, s)
		}
	}
	x.mu.Unlock()
}

// serverGone tells a tmux server that no longer runs from one that could
// not be asked for another reason.
func serverGone(socket string, err error) bool {
	if _, serr := os.Stat(socket); errors.Is(serr, os.ErrNotExist) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "no server running") || strings.Contains(msg, "error connecting to") ||
		strings.Contains(msg, "server exited unexpectedly") // it was stopping as the command connected
}

// turnProfile returns the turn profile of t's agent version.
func (x *Adapter) turnProfile(t domain.Terminal) (agent.TurnProfile, error) {
	p, ok := x.disc.Profile(t.Agent.Kind, t.Agent.Version)
	if !ok {
		return nil, fmt.Errorf("%w: %s %s", ErrNotProfiled, t.Agent.Kind, t.Agent.Version)
	}
	tp, ok := p.(agent.TurnProfile)
	if !ok || tp.TurnRules().Parse == nil {
		return nil, fmt.Errorf("%w: %s %s", ErrNotProfiled, t.Agent.Kind, t.Agent.Version)
	}
	return tp, nil
}

// process reads what the agent's files are located by, after checking
// that the process is still the incarnation t names.
func (x *Adapter) process(t domain.Terminal) (agent.Process, error) {
	s, err := x.fs.Stat(t.Process.PID)
	if err != nil || s.StartTicks != t.Process.StartTicks {
		return agent.Process{}, domain.ErrTerminalGone
	}
	if boot, err := x.fs.BootID(); err == nil && t.Process.BootID != "" && boot != t.Process.BootID {
		return agent.Process{}, domain.ErrTerminalGone
	}
	env, err := x.fs.Environ(s.PID, agent.EnvNames...)
	if err != nil {
		return agent.Process{}, fmt.Errorf("read the agent's environment: %w", err)
	}
	cwd, _ := x.fs.Cwd(s.PID)
	return agent.Process{Stat: s, Env: env, Cwd: cwd}, nil
}

// Interrupt implements domain.TurnTerminal: after checking that the pane
// still holds the same agent process, the profile's interrupt key, once.
func (x *Adapter) Interrupt(ctx context.Context, t domain.Terminal) error {
	prof, err := x.turnProfile(t)
	if err != nil {
		return err
	}
	now, err := x.Observe(ctx, t.ID)
	if err != nil {
		return err
	}
	srv := tmux.Server{Socket: now.Pane.Socket, Runner: x.tmux}
	return srv.SendKeys(ctx, now.Pane.PaneID, prof.TurnRules().InterruptKey)
}

// bufferName is a fresh tmux buffer name, so a paste never picks up
// another paste's text.
func bufferName() (string, error) {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "akk-" + hex.EncodeToString(b), nil
}

// ScreenChanged implements paneSource: tmux reports the next
// write to the terminal's pane (discovery.ScreenChanged).
func (x *Adapter) ScreenChanged(ctx context.Context, terminalID string) (<-chan struct{}, func(), bool) {
	x.mu.Lock()
	loc, known := x.panes[terminalID]
	x.mu.Unlock()
	if !known {
		return nil, nil, false
	}
	return x.disc.ScreenChanged(ctx, loc)
}
