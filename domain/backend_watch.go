package domain

import (
	"context"
	"log/slog"
	"time"
)

// startBackendWatch watches the turn a backend thread runs now (one a
// person or another client of its daemon started), exactly: the daemon
// names the turn, and its own events end the Watch. No input.
func (s *ThreadCases) startBackendWatch(ctx context.Context, p Principal, in NewWatchInput) (Watch, error) {
	tt, th, err := s.backendEndpointThread(ctx, in.TerminalID)
	if err != nil {
		return Watch{}, err
	}
	if err := s.watches.mayWatch(ctx, p, in.TerminalID, "thread"); err != nil {
		return Watch{}, err
	}
	turnID, err := tt.calls.RunningTurn(ctx, th)
	if err != nil {
		return Watch{}, &Error{Code: CodeUnavailable, Message: "could not read the thread from its daemon", Err: err}
	}
	if turnID == "" {
		return Watch{}, E(CodeNothingToWatch, "the thread runs no turn; a Watch follows a task that is working")
	}
	now := s.clock.Now().UTC()
	w := Watch{ID: s.ids.New("watch"), HostID: p.HostID, Conversation: p.Conversation, TerminalID: in.TerminalID,
		Endpoint: EndpointRef{Kind: tt.Endpoint, ID: th.ThreadID}, Mode: WatchModeExact, State: WatchActive, NativeTurnID: turnID, SeenActivity: true,
		HardTimeout: s.turns.cfg.DefaultHard, CreatedAt: now, UpdatedAt: now, Revision: 1}
	return s.watches.beginWatch(ctx, w, in)
}

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
