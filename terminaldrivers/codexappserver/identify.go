package codexappserver

import (
	"context"
	"slices"
	"time"

	"akk/domain"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/proc"
)

// Identifier implements domain.BackendThreads for Codex panes whose
// threads a managed app-server daemon holds: it asks the pane's own daemon
// (the one of the CODEX_HOME in the agent's environment) which of its
// loaded threads run a turn. A working pane's thread runs one, so when
// exactly one thread does, that thread is the pane's. Threads without a
// record (ephemeral helpers the TUI starts beside a turn) cannot be a
// pane's foreground and are not counted; an agent started --ephemeral is
// never identified. Several running threads (another client of the same
// daemon, a sub-agent), a daemon that does not answer, or a thread whose
// folder is not the pane's: not identified.
type Identifier struct {
	Proc    proc.FS
	Version string        // AKK's, named to the daemon
	Timeout time.Duration // for one identification; 0: 3 s
}

// ForegroundThread implements domain.BackendThreads.
func (id Identifier) ForegroundThread(ctx context.Context, t domain.Terminal) (string, bool, error) {
	if t.Agent.Kind != domain.AgentCodex {
		return "", false, nil
	}
	st, err := id.Proc.Stat(t.Process.PID)
	if err != nil || st.StartTicks != t.Process.StartTicks {
		return "", false, nil
	}
	argv, err := id.Proc.Cmdline(t.Process.PID)
	if err != nil || slices.Contains(argv, "--ephemeral") {
		return "", false, nil
	}
	env, err := id.Proc.Environ(t.Process.PID, "CODEX_HOME", "HOME")
	if err != nil {
		return "", false, nil
	}
	home, ok := codex.Home(env)
	if !ok {
		return "", false, nil
	}
	timeout := id.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := Dial(ctx, SocketPath(home), id.Version)
	if err != nil {
		return "", false, err
	}
	defer c.Close()
	ids, err := c.LoadedThreads(ctx)
	if err != nil {
		return "", false, err
	}
	var running []Thread
	for _, tid := range ids {
		th, err := c.ReadThread(ctx, tid, false)
		if err != nil {
			return "", false, err
		}
		if th.Status.Type == "active" && !th.Ephemeral && th.Path != nil && *th.Path != "" {
			running = append(running, th)
		}
	}
	if len(running) != 1 || (t.Project != "" && running[0].Cwd != t.Project) {
		return "", false, nil
	}
	return running[0].ID, true, nil
}
