// Command akkd is the AKK daemon: it serves the REST contract, the SSE
// stream and metrics, and delivers signed webhooks.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"os/user"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bareEnvironment()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "akkd:", err)
		os.Exit(1)
	}
}

// defaultPath is the search path of a daemon started with none (`env -i`),
// the one service managers give: akkd finds tmux there.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// bareEnvironment fills in what an empty environment (`env -i`, a bare
// service unit) leaves out and akkd needs: a search path for tmux, and
// HOME (the default state directory, the agents' homes) from the user's
// account. The locale needs nothing: every tmux client runs with -u.
func bareEnvironment() {
	if os.Getenv("PATH") == "" {
		os.Setenv("PATH", defaultPath)
	}
	if os.Getenv("HOME") == "" {
		if u, err := user.Current(); err == nil && u.HomeDir != "" {
			os.Setenv("HOME", u.HomeDir)
		}
	}
}
