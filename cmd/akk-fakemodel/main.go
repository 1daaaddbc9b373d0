// Command akk-fakemodel runs the scripted fake model server on loopback, for
// demos and for trying a real agent by hand. See package fakemodel for the
// scenario markers. GET /_fake/requests lists what it was asked.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"akk/terminaldrivers/agenttest/fakemodel"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "akk-fakemodel:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("akk-fakemodel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 0, "loopback port to listen on (0 picks a free one)")
	dump := fs.String("dump", "", "directory to write each raw request body to")
	quiet := fs.Bool("quiet", false, "do not log each request")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := fakemodel.Options{Log: stderr, DumpDir: *dump}
	if *quiet {
		opts.Log = nil
	}
	if *dump != "" {
		if err := os.MkdirAll(*dump, 0o755); err != nil {
			return err
		}
	}
	srv := fakemodel.New(opts)
	if err := srv.Start(fmt.Sprintf("127.0.0.1:%d", *port)); err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "fakemodel listening on %s\n", srv.URL())
	fmt.Fprintf(stdout, "  Claude Code: ANTHROPIC_BASE_URL=%s\n", srv.URL())
	fmt.Fprintf(stdout, "  Codex model provider base_url: %s\n", srv.OpenAIBaseURL())
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}
