package panetest

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/coder/quartz"

	"akk/domain"
)

// PaneObserver is the observer of a test's pane: a look every
// ScreenInterval, a read of the record every round (clockObserver).
func (p Panes) PaneObserver(f domain.PaneFollow, clock domain.Clock, cfg domain.TurnConfig) domain.PaneObserver {
	return &clockObserver{term: p.TurnTerminal, cfg: cfg, f: f, mark: f.Mark, tick: clock.NewTicker(cfg.PollInterval, f.Kind, "poll")}
}

// clockObserver looks at a pane every ScreenInterval and reads its record
// every round (PollInterval), believing every look: the observer of a
// test's pane, which reports no changes (the product's adapter has its
// own).
type clockObserver struct {
	term    domain.TurnTerminal
	cfg     domain.TurnConfig
	f       domain.PaneFollow
	tick    *quartz.Ticker
	screen  domain.Terminal
	last    time.Time
	mark    domain.DurableMark
	actions []domain.ProgressAction
}

func (o *clockObserver) Look(ctx context.Context, now time.Time) (domain.Observation, error) {
	seen := domain.ScreenObservation(o.screen)
	if o.screen.ID != "" && now.Before(o.last.Add(o.cfg.ScreenInterval)) {
		return seen, nil
	}
	o.last, seen.Looked = now, true
	obs, err := o.term.Observe(ctx, o.f.TerminalID)
	switch {
	case errors.Is(err, domain.ErrTerminalGone):
		seen.Lost = domain.EndpointClosed
		return seen, nil
	case err != nil:
		return seen, err
	}
	o.screen = obs
	seen = domain.ScreenObservation(obs)
	seen.Looked = true
	return seen, nil
}

func (o *clockObserver) Read(ctx context.Context, _ time.Time, request string, last bool) (*domain.TurnProgress, bool, error) {
	if !o.f.Record || o.screen.ID == "" {
		return nil, false, nil
	}
	p, err := o.term.Progress(ctx, o.screen, o.mark, request)
	if err != nil {
		return nil, false, err
	}
	if last {
		return &p, false, nil
	}
	moved := !slices.Equal(p.Actions, o.actions)
	o.mark, o.actions = p.Mark, p.Actions
	return &p, moved, nil
}

func (o *clockObserver) Screen() domain.Terminal                { return o.screen }
func (o *clockObserver) Mark() domain.DurableMark               { return o.mark }
func (o *clockObserver) ReadFrom(mark domain.DurableMark)       { o.mark = mark }
func (o *clockObserver) LookNow()                               { o.last = time.Time{} }
func (o *clockObserver) ConfirmPrompt(string) bool              { return true }
func (o *clockObserver) Foretold(time.Time, domain.Foretelling) {}
func (o *clockObserver) Close()                                 { o.tick.Stop() }

func (o *clockObserver) Wait(ctx context.Context, nudge <-chan struct{}, now time.Time) (bool, bool) {
	d := o.cfg.PollInterval
	if until := o.last.Add(o.cfg.ScreenInterval).Sub(now); o.screen.ID != "" && until < d {
		d = until
	}
	o.tick.Reset(max(d, time.Millisecond))
	select {
	case <-ctx.Done():
		return false, false
	case <-o.tick.C:
		return false, true
	case <-nudge:
		return true, true
	}
}
