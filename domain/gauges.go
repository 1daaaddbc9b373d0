package domain

import (
	"context"
	"time"
)

// StoreCounts is what the store holds, counted: Turns by state, when the
// longest-waiting Turn that waits on a person last changed (when it began
// to wait: nothing changes a Turn while its prompt waits; zero when none
// waits), and outbox rows by state.
type StoreCounts struct {
	Turns         map[TurnState]int
	OldestWaiting time.Time
	Notifications map[NotificationState]int
}

// Gauges is the daemon's state for /metrics.
type Gauges struct {
	StoreCounts
	// Panes counts the agent panes listed now, by agent and screen state.
	Panes map[[2]string]int
	// Monitors is the number of Turn and Watch monitors running in this
	// daemon.
	Monitors int
	Now      time.Time
}

// Gauges reads the daemon's state for /metrics: the store's counts, the
// panes listed now, the monitors running.
func (s *Service) Gauges(ctx context.Context) (Gauges, error) {
	c, err := s.store.Counts(ctx)
	if err != nil {
		return Gauges{}, err
	}
	g := Gauges{StoreCounts: c, Panes: map[[2]string]int{}, Now: s.clock.Now().UTC()}
	if s.terminals != nil {
		if ts, err := s.terminals.Discover(ctx); err == nil {
			for _, t := range ts {
				g.Panes[[2]string{string(t.Agent.Kind), string(t.ScreenState)}]++
			}
		}
	}
	if tr := s.turns; tr != nil {
		tr.monMu.Lock()
		for _, h := range tr.monitors {
			if h.ctx.Err() == nil {
				g.Monitors++
			}
		}
		tr.monMu.Unlock()
	}
	return g, nil
}
