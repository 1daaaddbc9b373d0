package agentpane

import (
	"context"
	"testing"

	"akk/domain"

	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/discovery"
	"akk/terminaldrivers/tmux"
)

// newTestAdapter is an Adapter whose tmux is runner (a fake pane), with
// the given drivers' profiles (Claude Code's and Codex's when none).
func newTestAdapter(t *testing.T, runner tmux.Runner, cfg Config, drivers ...agent.Driver) *Adapter {
	t.Helper()
	d, err := discovery.New(discovery.Config{Tmux: runner, OnlyExtraSockets: true, Drivers: drivers})
	if err != nil {
		t.Fatal(err)
	}
	return New(d, cfg)
}

// startPane starts agent a ready in its own tmux server and returns its
// Env, an Adapter over that server only (reading with reg's profiles, the
// default ones when nil) and the one terminal it lists.
func startPane(t *testing.T, a agenttest.Agent, reg *agent.Registry) (*agenttest.Env, *Adapter, domain.Terminal) {
	t.Helper()
	e := agenttest.New(t, a, agenttest.Options{})
	e.StartReady()
	x, term := adapterFor(t, e, reg)
	return e, x, term
}

// adapterFor is an Adapter over e's tmux server only (reading with reg's
// profiles, the default ones when nil) and the one terminal it lists.
func adapterFor(t *testing.T, e *agenttest.Env, reg *agent.Registry) (*Adapter, domain.Terminal) {
	t.Helper()
	d, err := discovery.New(discovery.Config{Registry: reg, ExtraSockets: []string{e.SocketPath()}, OnlyExtraSockets: true})
	if err != nil {
		t.Fatal(err)
	}
	terms, err := d.Discover(context.Background())
	if err != nil || len(terms) != 1 || !terms[0].Agent.Profiled() {
		t.Fatalf("discover: %v, %+v", err, terms)
	}
	return New(d, Config{}), terms[0]
}
