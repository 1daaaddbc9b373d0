package domain

import (
	"context"
	"log/slog"
	"time"

	"github.com/coder/quartz"
)

// followBackend follows a native turn of a loaded thread through its
// daemon; why says what kept it from being followed.
func (s *ThreadCases) followBackend(ctx context.Context, ref EndpointRef, turnID string) (<-chan Observation, string) {
	tt, ok := s.threadsOf(ref.Kind)
	if !ok {
		return nil, "no " + string(ref.Kind) + " transport is configured"
	}
	th, err := s.backendThread(ctx, ref)
	if err != nil {
		return nil, "the thread's " + tt.Name + " cannot be reached: " + errMessage(err)
	}
	events, err := tt.calls.Follow(ctx, th, turnID)
	if err != nil {
		return nil, "the thread's " + tt.Name + " cannot be followed: " + err.Error()
	}
	return events, ""
}

// backendTurnSource follows a backend Turn through its daemon to its end,
// the daemon's events as its observations. A daemon that cannot be
// reached, or goes away before the turn ends, stalls the Turn (renew or
// recover when it is back).
func (s *ThreadCases) backendTurnSource(ctx context.Context, t Turn) (TurnSource, bool, string) {
	if t.NativeTurnID == "" {
		return nil, false, "the daemon's id of the turn was not recorded; recover or close the turn"
	}
	events, why := s.followBackend(ctx, EndpointRef{Kind: t.Endpoint.Kind, ID: t.NativeThreadID}, t.NativeTurnID)
	if why != "" {
		return nil, false, why
	}
	return &threadTurnSource{turnID: t.NativeTurnID, threadEvents: threadEvents{s: s, kind: t.Endpoint.Kind, events: events,
		hard: s.clock.NewTimer(s.clock.Until(t.HardDeadline()), "turn", "hard")}}, false, ""
}

// threadTurnSource is a backend Turn observed through its daemon: the
// daemon's next event, or the hard deadline. Its events come once: what
// was not stored is decided again, not observed again.
type threadTurnSource struct {
	threadEvents
	turnID string // the daemon's id of the turn
}

// Observe accepts a dispatching Turn (the daemon started it), then gives
// what the last wait received.
func (p *threadTurnSource) Observe(_ context.Context, now time.Time, t Turn) ([]Observation, bool) {
	var obs []Observation
	if t.State == TurnDispatching {
		obs = append(obs, Observation{Record: &TurnProgress{Accepted: true, LastActivity: now}})
	}
	if o, ok := p.take(); ok {
		obs = append(obs, o)
	}
	return obs, true
}

// threadEvents is what a thread's follower waits on: the daemon's next
// observation, the hard deadline (a round on the monitor's clock), or a
// channel closed before the turn ended (the daemon out of reach).
type threadEvents struct {
	s      *ThreadCases
	kind   EndpointKind
	events <-chan Observation
	hard   *quartz.Timer
	next   *Observation // what the next round decides on
}

// take is what the last wait received, once.
func (p *threadEvents) take() (Observation, bool) {
	o := p.next
	if o == nil {
		return Observation{}, false
	}
	p.next = nil
	return *o, true
}

// Wait receives the next observation; a thread's follower takes no
// nudges (it reads the record as stored before each decision).
func (p *threadEvents) Wait(ctx context.Context, _ <-chan struct{}, _ time.Time) (bool, bool) {
	select {
	case <-ctx.Done():
		return false, false
	case <-p.hard.C:
		p.next = &Observation{Clock: true}
	case o, open := <-p.events:
		if !open {
			p.next = &Observation{Lost: EndpointUnreachable,
				Why: "the thread's " + p.s.daemonName(p.kind) + " stopped answering before the turn ended"}
			break
		}
		o = o.received(p.s.clock.Now().UTC())
		p.next = &o
	}
	return false, true
}

func (p *threadEvents) Replays() bool        { return false }
func (p *threadEvents) ReadFrom(DurableMark) {}
func (p *threadEvents) LookNow()             {}

func (p *threadEvents) Close() {
	if p.hard != nil {
		p.hard.Stop()
	}
}

func (p *threadTurnSource) Looks(context.Context) PromptLooks { return noLooks{} }
func (p *threadTurnSource) Mark(t Turn) DurableMark           { return t.Mark }
func (p *threadTurnSource) Foretold(time.Time, Turn)          {}

// noLooks: a daemon's observations are never looks, so no decision asks
// for one.
type noLooks struct{}

func (noLooks) PromptFingerprint(TurnState) string { return "" }
func (noLooks) ConfirmPrompt(string) bool          { return true }
func (noLooks) AsyncQuestion() (string, bool)      { return "", false }

// storeRetry is how long a monitor waits before it writes again to a store
// out of reach.
const storeRetry = 500 * time.Millisecond

// waitForStore: err says the store is out of reach; it waits storeRetry
// and says true (write again), or false for another error or when ctx
// ends meanwhile.
func waitForStore(ctx context.Context, clock Clock, log *slog.Logger, err error) bool {
	if ErrorCode(err) != CodeStoreUnavailable || ctx.Err() != nil {
		return false
	}
	log.Warn("monitor: the store is out of reach; writing again shortly", "err", err)
	t := clock.NewTimer(storeRetry, "monitor", "store")
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Step is the daemon's pending question of the turn, as one step.
func (p *threadTurnSource) Step(context.Context) (AgentKind, InteractionStep, bool) {
	tt, ok := p.s.threadsOf(p.kind)
	if !ok {
		return "", InteractionStep{}, false
	}
	st, ok := tt.calls.Question(p.turnID)
	return tt.Agent, st, ok
}
