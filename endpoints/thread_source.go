package endpoints

import (
	"context"
	"errors"
	"time"

	"github.com/coder/quartz"

	"akk/domain"
)

// follow follows a native turn of a loaded thread through its daemon;
// why says what kept it from being followed.
func (s *Thread) follow(ctx context.Context, threadID, turnID string) (<-chan domain.Observation, string) {
	th, err := s.thread(ctx, threadID)
	if err != nil {
		return nil, "the thread's " + s.kind.Name + " cannot be reached: " + errMessage(err)
	}
	events, err := s.calls.Follow(ctx, th, turnID)
	if err != nil {
		return nil, "the thread's " + s.kind.Name + " cannot be followed: " + err.Error()
	}
	return events, ""
}

// errMessage is a domain error's message, else the error's text.
func errMessage(err error) string {
	var de *domain.Error
	if errors.As(err, &de) {
		return de.Message
	}
	return err.Error()
}

// TurnSource follows a thread's Turn through its daemon to its end, the
// daemon's events as its observations. A daemon that cannot be reached,
// or goes away before the turn ends, stalls the Turn (renew or recover
// when it is back).
func (s *Thread) TurnSource(ctx context.Context, t domain.Turn) (domain.TurnSource, bool, string) {
	if t.NativeTurnID == "" {
		return nil, false, "the daemon's id of the turn was not recorded; recover or close the turn"
	}
	events, why := s.follow(ctx, t.NativeThreadID, t.NativeTurnID)
	if why != "" {
		return nil, false, why
	}
	return &threadTurnSource{turnID: t.NativeTurnID, threadEvents: threadEvents{s: s, events: events,
		hard: s.clock.NewTimer(s.clock.Until(t.HardDeadline()), "turn", "hard")}}, false, ""
}

// WatchSource follows a thread's Watch's turn through its daemon to its
// end, the daemon's events as its observations. A daemon that cannot be
// reached or goes away invalidates the Watch (the task may run on;
// nothing proves it).
func (s *Thread) WatchSource(ctx context.Context, w domain.Watch) (domain.WatchSource, string) {
	events, why := s.follow(ctx, w.Endpoint.ID, w.NativeTurnID)
	if why != "" {
		return nil, why
	}
	return &threadWatchSource{threadEvents{s: s, events: events,
		hard: s.clock.NewTimer(s.clock.Until(w.CreatedAt.Add(w.HardTimeout)), "watch", "hard")}}, ""
}

// threadEvents is what a thread's follower waits on: the daemon's next
// observation, the hard deadline (a round on the monitor's clock), or a
// channel closed before the turn ended (the daemon out of reach). Its
// events come once: what was not stored is decided again, not observed
// again.
type threadEvents struct {
	s      *Thread
	events <-chan domain.Observation
	hard   *quartz.Timer
	next   *domain.Observation // what the next round decides on
}

// take is what the last wait received, once.
func (p *threadEvents) take() (domain.Observation, bool) {
	o := p.next
	if o == nil {
		return domain.Observation{}, false
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
		p.next = &domain.Observation{Clock: true}
	case o, open := <-p.events:
		if !open {
			p.next = &domain.Observation{Lost: domain.EndpointUnreachable,
				Why: "the thread's " + p.s.kind.Name + " stopped answering before the turn ended"}
			break
		}
		o = o.Received(p.s.clock.Now().UTC())
		p.next = &o
	}
	return false, true
}

func (p *threadEvents) Replays() bool               { return false }
func (p *threadEvents) ReadFrom(domain.DurableMark) {}
func (p *threadEvents) LookNow()                    {}

func (p *threadEvents) Close() {
	if p.hard != nil {
		p.hard.Stop()
	}
}

// threadTurnSource is a thread's Turn observed through its daemon: the
// daemon's next event, or the hard deadline.
type threadTurnSource struct {
	threadEvents
	turnID string // the daemon's id of the turn
}

// Observe accepts a dispatching Turn (the daemon started it), then gives
// what the last wait received.
func (p *threadTurnSource) Observe(_ context.Context, now time.Time, t domain.Turn) ([]domain.Observation, bool) {
	var obs []domain.Observation
	if t.State == domain.TurnDispatching {
		obs = append(obs, domain.Observation{Record: &domain.TurnProgress{Accepted: true, LastActivity: now}})
	}
	if o, ok := p.take(); ok {
		obs = append(obs, o)
	}
	return obs, true
}

func (p *threadTurnSource) Looks(context.Context) domain.PromptLooks { return noLooks{} }
func (p *threadTurnSource) Mark(t domain.Turn) domain.DurableMark    { return t.Mark }
func (p *threadTurnSource) Foretold(time.Time, domain.Turn)          {}

// Step is the daemon's pending question of the turn, as one step.
func (p *threadTurnSource) Step(context.Context) (domain.AgentKind, domain.InteractionStep, bool) {
	st, ok := p.s.calls.Question(p.turnID)
	return p.s.kind.Agent, st, ok
}

// noLooks: a daemon's observations are never looks, so no decision asks
// for one.
type noLooks struct{}

func (noLooks) PromptFingerprint(domain.TurnState) string { return "" }
func (noLooks) ConfirmPrompt(string) bool                 { return true }
func (noLooks) AsyncQuestion() (string, bool)             { return "", false }

// threadWatchSource is a thread's Watch observed through its daemon
// (threadEvents).
type threadWatchSource struct{ threadEvents }

func (p *threadWatchSource) Observe(context.Context, time.Time) (domain.Observation, bool, bool) {
	o, has := p.take()
	return o, has, true
}

func (p *threadWatchSource) Read(context.Context, time.Time) (*domain.TurnProgress, bool) {
	return nil, false
}
func (p *threadWatchSource) Mark() domain.DurableMark         { return "" }
func (p *threadWatchSource) Foretold(time.Time, domain.Watch) {}
