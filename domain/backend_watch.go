package domain

import (
	"context"
	"log/slog"
	"time"
)

// backendWatchFollower follows a backend Watch's turn through its daemon
// to its end, the daemon's events as its observations, decided as every
// transport's are (watchFollow). It never sends input. A daemon that
// cannot be reached or goes away invalidates the Watch (the task may run
// on; nothing proves it).
func (s *ThreadCases) backendWatchFollower(ctx context.Context, w Watch) follower {
	events, why := s.followBackend(ctx, w.Endpoint, w.NativeTurnID)
	if why != "" {
		s.watchUnreachable(ctx, w, why)
		return nil
	}
	src := &threadWatchSource{threadEvents{s: s, kind: w.Endpoint.Kind, events: events,
		hard: s.clock.NewTimer(s.clock.Until(w.CreatedAt.Add(w.HardTimeout)), "watch", "hard")}}
	return &watchFollow{s: s.watches, src: src, log: slog.With("watch_id", w.ID), w: w}
}

// watchUnreachable invalidates w, its endpoint out of reach for why, as
// its monitor would.
func (s *ThreadCases) watchUnreachable(ctx context.Context, w Watch, why string) {
	m := &watchFollow{s: s.watches, src: &threadWatchSource{threadEvents{s: s, kind: w.Endpoint.Kind}}, log: slog.With("watch_id", w.ID), w: w}
	m.decide(ctx, s.clock.Now().UTC(), Observation{Lost: EndpointUnreachable, Why: why})
}

// threadWatchSource is a backend Watch observed through its daemon
// (threadEvents). Its events come once: what was not stored is decided
// again.
type threadWatchSource struct{ threadEvents }

func (p *threadWatchSource) observe(context.Context, time.Time) (Observation, bool, bool) {
	o, has := p.take()
	return o, has, true
}

func (p *threadWatchSource) read(context.Context, time.Time) (*TurnProgress, bool) { return nil, false }
func (p *threadWatchSource) mark() DurableMark                                     { return "" }
func (p *threadWatchSource) foretold(time.Time, Watch)                             {}
