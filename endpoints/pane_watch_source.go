package endpoints

import (
	"context"
	"log/slog"
	"time"

	"akk/domain"
)

// paneWatchSource is a pane's Watch observed, as a Turn's pane is
// (paneTurnSource): an exact Watch wakes on a write to the record; the
// tick is then a safety net. Each read goes on from where the last ended
// (as a Turn's monitor's does), not from the Watch's anchor, which is
// stored only when the Watch changes.
type paneWatchSource struct {
	log   *slog.Logger
	exact bool
	obs   domain.PaneObserver
}

// Observe is the round's look at the screen, when one is due: what a
// believed look shows, or the pane gone; nothing else.
func (p *paneWatchSource) Observe(ctx context.Context, now time.Time) (domain.Observation, bool, bool) {
	o, err := p.obs.Look(ctx, now)
	switch {
	case err != nil && ctx.Err() != nil:
		return domain.Observation{}, false, false
	case err != nil:
		p.log.Warn("watch monitor: observe", "err", err)
	case o.Lost != domain.EndpointThere:
		return domain.Observation{Lost: o.Lost, Why: "the pane closed or its agent restarted", Clock: true}, true, true
	case o.Looked:
		o.Clock = true
		return o, true, true
	}
	return domain.Observation{Clock: true}, true, true
}

// Read is the observer's Read of an exact Watch's record, when one is
// due; a failed Read changes nothing.
func (p *paneWatchSource) Read(ctx context.Context, now time.Time) (*domain.TurnProgress, bool) {
	rec, moved, err := p.obs.Read(ctx, now, "", false)
	if err != nil {
		return nil, false
	}
	return rec, moved
}

func (p *paneWatchSource) Mark() domain.DurableMark         { return p.obs.Mark() }
func (p *paneWatchSource) Replays() bool                    { return true }
func (p *paneWatchSource) ReadFrom(mark domain.DurableMark) { p.obs.ReadFrom(mark) }
func (p *paneWatchSource) LookNow()                         { p.obs.LookNow() }
func (p *paneWatchSource) Close()                           { p.obs.Close() }

// Foretold: an exact Watch looks closely only while the record shows a
// tool call open, as a Turn's monitor does (an activity Watch reads no
// record).
func (p *paneWatchSource) Foretold(now time.Time, next domain.Watch) {
	p.obs.Foretold(now, domain.Foretelling{Asks: next.ApprovalShown, Quiet: p.exact && !next.ApprovalShown})
}

func (p *paneWatchSource) Wait(ctx context.Context, nudge <-chan struct{}, now time.Time) (bool, bool) {
	return p.obs.Wait(ctx, nudge, now)
}
