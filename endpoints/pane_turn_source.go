package endpoints

import (
	"context"
	"log/slog"
	"time"

	"akk/domain"
)

// paneTurnSource is a pane's Turn observed: its observer looks at the
// pane and reads the record, each when it is due, and says how long to
// sleep: it wakes on a write to the record, the screen's next change, the
// slow tick and nudges.
type paneTurnSource struct {
	log   *slog.Logger
	obs   domain.PaneObserver
	panes domain.PaneTransport // its prompts' and steps' reads
}

// Observe is the round's observation: the observer's look at the screen
// and, unless the pane is gone, its read of the record (when gone, a last
// read when the pane was seen).
func (p *paneTurnSource) Observe(ctx context.Context, now time.Time, t domain.Turn) ([]domain.Observation, bool) {
	o, err := p.obs.Look(ctx, now)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, false
	case err != nil:
		p.log.Warn("monitor: observe", "err", err)
	case o.Lost != domain.EndpointThere:
		o.Why = "the terminal was gone when monitoring started"
		if p.obs.Screen().ID != "" {
			o.Why = "the pane closed or its agent exited before the turn ended"
			if rec, _, err := p.obs.Read(ctx, now, t.Request, true); err == nil {
				o.Record = rec
			}
		}
	}
	o.Clock = true
	if o.Lost != domain.EndpointThere {
		return []domain.Observation{o}, true
	}
	rec, moved, err := p.obs.Read(ctx, now, t.Request, false)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, false
	case err != nil:
		p.log.Warn("monitor: progress", "err", err)
		o.RecordFailed = true
	case rec != nil:
		o.Record, o.RecordMoved = rec, moved
	}
	return []domain.Observation{o}, true
}

func (p *paneTurnSource) Looks(ctx context.Context) domain.PromptLooks {
	return paneScreenLooks{ctx: ctx, p: p}
}
func (p *paneTurnSource) Mark(domain.Turn) domain.DurableMark { return p.obs.Mark() }
func (p *paneTurnSource) Replays() bool                       { return true }
func (p *paneTurnSource) ReadFrom(mark domain.DurableMark)    { p.obs.ReadFrom(mark) }
func (p *paneTurnSource) LookNow()                            { p.obs.LookNow() }
func (p *paneTurnSource) Close()                              { p.obs.Close() }

// Foretold: the record first. While it shows the Turn working with no
// tool call open, on an agent that records one before it asks, nothing
// the Turn waits on can be drawn; the screen is looked at closely again
// as soon as the record shows one.
func (p *paneTurnSource) Foretold(now time.Time, next domain.Turn) {
	p.obs.Foretold(now, domain.Foretelling{Quiet: next.State == domain.TurnWorking && !next.AcceptedAt.IsZero()})
}

func (p *paneTurnSource) Wait(ctx context.Context, nudge <-chan struct{}, now time.Time) (bool, bool) {
	return p.obs.Wait(ctx, nudge, now)
}

// paneScreenLooks reads them from the screen the observer believes.
type paneScreenLooks struct {
	ctx context.Context
	p   *paneTurnSource
}

// PromptFingerprint is the fingerprint of the permission prompt or
// questionnaire step a Turn in state waits on, "" when none is read.
func (l paneScreenLooks) PromptFingerprint(state domain.TurnState) string {
	term := l.p.obs.Screen()
	switch {
	case term.ID == "":
	case state == domain.TurnAwaitingApproval:
		if pr, err := l.p.panes.Prompt(l.ctx, term); err == nil && pr.Present {
			return pr.Fingerprint
		}
	case state == domain.TurnAwaitingInteraction:
		if st, err := l.p.panes.Step(l.ctx, term); err == nil && st.Present {
			return st.Fingerprint
		}
	}
	return ""
}

func (l paneScreenLooks) ConfirmPrompt(fp string) bool { return l.p.obs.ConfirmPrompt(fp) }

func (l paneScreenLooks) AsyncQuestion() (string, bool) {
	if st, err := l.p.panes.Step(l.ctx, l.p.obs.Screen()); err == nil && st.Present && st.Kind == domain.KindAsyncQuestion {
		return st.Fingerprint, true
	}
	return "", false
}

// Step reads the questionnaire step on the screen the observer believes.
func (p *paneTurnSource) Step(ctx context.Context) (domain.AgentKind, domain.InteractionStep, bool) {
	term := p.obs.Screen()
	if term.ID == "" {
		return "", domain.InteractionStep{}, false
	}
	st, err := p.panes.Step(ctx, term)
	return term.Agent.Kind, st, err == nil
}
