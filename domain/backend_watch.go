package domain

import (
	"context"
	"time"
)

// backendWatchSource follows a backend Watch's turn through its daemon
// to its end, the daemon's events as its observations. A daemon that
// cannot be reached or goes away invalidates the Watch (the task may run
// on; nothing proves it).
func (s *ThreadCases) backendWatchSource(ctx context.Context, w Watch) (WatchSource, string) {
	events, why := s.followBackend(ctx, w.Endpoint, w.NativeTurnID)
	if why != "" {
		return nil, why
	}
	return &threadWatchSource{threadEvents{s: s, kind: w.Endpoint.Kind, events: events,
		hard: s.clock.NewTimer(s.clock.Until(w.CreatedAt.Add(w.HardTimeout)), "watch", "hard")}}, ""
}

// threadWatchSource is a backend Watch observed through its daemon
// (threadEvents). Its events come once: what was not stored is decided
// again.
type threadWatchSource struct{ threadEvents }

func (p *threadWatchSource) Observe(context.Context, time.Time) (Observation, bool, bool) {
	o, has := p.take()
	return o, has, true
}

func (p *threadWatchSource) Read(context.Context, time.Time) (*TurnProgress, bool) { return nil, false }
func (p *threadWatchSource) Mark() DurableMark                                     { return "" }
func (p *threadWatchSource) Foretold(time.Time, Watch)                             {}
