// Command pgserve runs one PostgreSQL server for a whole test run, so the
// test packages make their databases on it instead of each starting one
// (storetest.SharedEnv). It prints the server's socket folder on its first
// line, then runs until its standard input closes or it is signalled, and
// stops the server and removes its folder.
//
//	go run ./persistence/storetest/pgserve
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"akk/persistence/storetest"
)

func main() {
	var p storetest.Server
	if err := p.Init(); err != nil {
		p.Stop()
		p.Remove()
		fmt.Fprintln(os.Stderr, "pgserve:", err)
		os.Exit(1)
	}
	fmt.Println(p.Dir())
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(done) }()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
	p.Stop()
	p.Remove()
}
