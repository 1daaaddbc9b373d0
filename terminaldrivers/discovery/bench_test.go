package discovery

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/tmux"
)

// BenchmarkDiscover reports the cost of one listing per pane.
//
// replayed: the scene's nine panes (four profiled agents, captured screens
// replayed through the runner) plus 20 shell panes, over a temp /proc tree:
// the cost of discovery's own work.
//
// tmux: a real tmux server with 24 panes running sleep, over the real /proc:
// the cost of list-panes and of walking every pane's processes.
//
// agents: real panes of every pinned agent version (one tmux server each,
// as the harness isolates them) plus 20 shell panes: everything, captures
// included. Skipped when the agents are not installed.
func BenchmarkDiscover(b *testing.B) {
	b.Run("replayed", func(b *testing.B) {
		m, sock := scene(b)
		bash := m.path("usr/bin/bash")
		for i := 0; i < 20; i++ {
			pid := 2000 + i
			m.process(spec{pid: pid, ppid: 1, pgrp: pid, tty: 40000 + i, tpgid: pid, start: uint64(20000 + i), comm: "bash", exe: bash, cwd: "/srv/s", argv: []string{"-bash"}})
			m.pane(sock, "%"+strconv.Itoa(100+i), pid, "/srv/s", "shells", "sh", "devbox", "$ \n")
		}
		d, err := New(m.config(sock))
		if err != nil {
			b.Fatal(err)
		}
		bench(b, d, 29, 5)
	})
	b.Run("tmux", func(b *testing.B) {
		if _, err := exec.LookPath("tmux"); err != nil {
			b.Skip("tmux not installed")
		}
		sock := filepath.Join(b.TempDir(), "bench")
		r := tmux.ExecRunner{}
		ctx := context.Background()
		if _, err := r.Run(ctx, "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "bench", "-x", "200", "-y", "50", "sleep 600"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _, _ = r.Run(context.Background(), "-S", sock, "kill-server") })
		for i := 1; i < 24; i++ {
			if _, err := r.Run(ctx, "-S", sock, "new-window", "-d", "-t", "bench", "sleep 600"); err != nil {
				b.Fatal(err)
			}
		}
		d, err := New(Config{ExtraSockets: []string{sock}, OnlyExtraSockets: true})
		if err != nil {
			b.Fatal(err)
		}
		bench(b, d, 24, 0)
	})
	b.Run("agents", func(b *testing.B) {
		agents := agenttest.RequireAgents(b)
		var envs []*agenttest.Env
		for _, a := range agents {
			e := agenttest.New(b, a, agenttest.Options{})
			e.Start()
			envs = append(envs, e)
		}
		var sockets []string
		for _, e := range envs {
			e.WaitReady(agenttest.StartTimeout)
			sockets = append(sockets, e.SocketPath())
		}
		for i := 0; i < 20; i++ {
			if _, err := envs[0].Tmux("new-window", "-d", "sleep", "600"); err != nil {
				b.Fatal(err)
			}
		}
		d, err := New(Config{ExtraSockets: sockets, OnlyExtraSockets: true})
		if err != nil {
			b.Fatal(err)
		}
		bench(b, d, len(envs)+20, len(envs))
	})
}

func bench(b *testing.B, d *Discovery, panes, agents int) {
	ctx := context.Background()
	terms, err := d.Discover(ctx)
	if err != nil || len(terms) != agents {
		b.Fatalf("Discover = %d terminals, %v; want %d", len(terms), err, agents)
	}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		if _, err := d.Discover(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N)/float64(panes), "µs/pane")
	b.ReportMetric(float64(panes), "panes")
}
