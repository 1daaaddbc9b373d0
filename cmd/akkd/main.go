// Command akkd is the AKK daemon: it serves the REST contract, the SSE
// stream and metrics, and delivers signed webhooks.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "akkd:", err)
		os.Exit(1)
	}
}
