package agenttest

import (
	"syscall"

	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/proc"
)

// KillCodexDaemon kills (SIGKILL) the managed app-server daemon of the
// env's Codex home, as a crash would.
func (e *Env) KillCodexDaemon() {
	e.t.Helper()
	fs := proc.FS{}
	table, err := fs.Snapshot()
	if err != nil {
		e.t.Fatal(err)
	}
	daemon := codex.ManagedDaemon(fs, table, e.CodexHome)
	if daemon == 0 {
		e.t.Fatal("no managed daemon found for the Codex home")
	}
	if err := syscall.Kill(daemon, syscall.SIGKILL); err != nil {
		e.t.Fatal(err)
	}
}
