package domain

import (
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
