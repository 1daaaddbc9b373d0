package agentpane

import (
	"testing"

	"akk/terminaldrivers/agent"
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
