package domain

import "context"

// follower is what one monitor follows: a pane's Turn or Watch (rounds of
// looks at the screen and reads of the record, woken by the record, the
// screen and a tick) or a backend Turn or Watch (the daemon's events, one
// per round). Each transport gives one; runMonitor is the only loop.
type follower interface {
	// live says the Turn or Watch is still followed.
	live() bool
	// round observes, decides and stores one transition.
	round(ctx context.Context) monitorStep
	// wait blocks until the next round is due; false: the monitor ends.
	wait(ctx context.Context) bool
	// close releases what the follower waits on.
	close()
}

// monitorStep is how a monitor's round ends.
type monitorStep int

const (
	stepWait  monitorStep = iota // wait, then the next round
	stepAgain                    // the next round at once
	stepStop                     // the monitor ends
)

// runMonitor is every monitor: rounds of f until it is no longer live or
// a round or a wait ends it; no wait after a round that ended it (a
// backend follower's channel closes after the end, which a wait would
// take for the daemon going away). It never sends input.
func runMonitor(ctx context.Context, f follower) {
	defer f.close()
	for f.live() {
		switch f.round(ctx) {
		case stepStop:
			return
		case stepAgain:
			continue
		}
		if !f.live() || !f.wait(ctx) {
			return // a round that ended it waits for nothing more
		}
	}
}
