package agentpane

import (
	"errors"
	"time"

	"akk/domain"
)

// Several Codex 0.169.0 panes of one CODEX_HOME share one app-server
// daemon, which writes all their rollouts: a Turn binds the rollout that
// holds its exact request after its mark. Two Turns with the same request
// on panes of one daemon close together could not tell their rollouts
// apart (a mark taken just before the other's prompt was written sees that
// prompt too), so the same request on another pane of the same daemon is
// refused for flightTTL after a submit, accepted or not.

// flightKey is a request on one holder process incarnation.
type flightKey struct {
	holder      int
	holderStart uint64
	request     string
}

type flight struct {
	terminal string
	since    time.Time
}

// flightTTL is how long a request blocks the same request on another pane
// of the same daemon.
const flightTTL = 30 * time.Second

// ErrSameRequestInFlight: the same request was submitted less than
// flightTTL ago to another pane whose rollouts the same process writes.
var ErrSameRequestInFlight = errors.New("the same request is in flight on another pane of this agent's shared daemon")

// takeFlight records request as in flight on a shared holder for terminal,
// unless another terminal has it in flight.
func (x *Adapter) takeFlight(k flightKey, terminal string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	now := x.now()
	for key, f := range x.inFlight {
		if now.Sub(f.since) > flightTTL {
			delete(x.inFlight, key)
		}
	}
	if f, ok := x.inFlight[k]; ok && f.terminal != terminal {
		return ErrSameRequestInFlight
	}
	x.inFlight[k] = flight{terminal: terminal, since: now}
	return nil
}

// landFlight forgets a request that was never sent.
func (x *Adapter) landFlight(k flightKey) {
	x.mu.Lock()
	delete(x.inFlight, k)
	x.mu.Unlock()
}

// sharedHolder returns the flight key of a request to t when its record
// files are held by a process other than the agent itself.
func (x *Adapter) sharedHolder(t domain.Terminal, request string) (flightKey, bool, error) {
	prof, err := x.turnProfile(t)
	if err != nil {
		return flightKey{}, false, err
	}
	rules := prof.TurnRules()
	p, err := x.process(t)
	if err != nil {
		return flightKey{}, false, err
	}
	table, err := x.fs.Snapshot()
	if err != nil {
		return flightKey{}, false, err
	}
	set, err := rules.Records(x.fs, table, p)
	if err != nil {
		return flightKey{}, false, err
	}
	if set.Holder == 0 || set.Holder == p.Stat.PID {
		return flightKey{}, false, nil
	}
	return flightKey{holder: set.Holder, holderStart: set.HolderStart, request: request}, true, nil
}
