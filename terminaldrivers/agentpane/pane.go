// Package agentpane is the pane adapter: it implements the domain's
// terminal ports (TurnTerminal, WatchTerminal, ApprovalTerminal,
// InteractionTerminal) on a coding agent running in a tmux pane. It
// observes a pane again, marks and reads the agent's durable record,
// types a request, presses the interrupt key, and answers permission
// prompts and questionnaire steps with the closed key plans of the agent
// version's profile.
//
// Everything that differs between agent versions comes from their profile
// values (package agent's registry, built once by the daemon and read
// through the Discovery); this package holds no version switch. Capture,
// settle, fingerprint and key sending are written once, here, for every
// port.
//
// Wiring: New(d, Config{}) with the *discovery.Discovery the daemon lists
// terminals with.
package agentpane

import (
	"github.com/coder/quartz"

	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agentpane/claudehook"
	"akk/terminaldrivers/discovery"
	"akk/terminaldrivers/proc"
	"akk/terminaldrivers/screen"
	"akk/terminaldrivers/tmux"
)

// Config tunes an Adapter. The zero value is what the daemon wants.
type Config struct {
	// Clock tells the time and runs every wait (quartz.NewReal() when
	// nil); tests give a quartz.Mock.
	Clock quartz.Clock
	// PollEvery is how often Submit reads the composer back while it waits
	// for the paste to show; 25ms when zero.
	PollEvery time.Duration
	// AnswerPollEvery is the pause between recaptures while an answer to a
	// prompt or a step is verified; 40ms when zero.
	AnswerPollEvery time.Duration
	// VerifyWithin bounds each wait for the screen to show what a key
	// should have done (a highlight move, the editor, the typed text, the
	// prompt or step leaving); 10s when zero. Generous: it ends as soon as
	// the screen shows it, and a loaded machine redraws late.
	VerifyWithin time.Duration
	// ApprovalSettle is how long a permission prompt must have been on
	// screen, unchanged since AKK first read it, before its key (stretched
	// by four capture times; see settled); 1.5s when zero. Claude Code
	// ignores keys that come right after it draws a prompt (seen on 2.1.267
	// and 2.1.328; on 2.1.332 a key 100 ms after the draw is lost, and with
	// the prompt read as soon as it is drawn 800 ms was not always enough
	// on a loaded machine).
	ApprovalSettle time.Duration
	// StepSettle is the same for a questionnaire step; 500ms when zero.
	StepSettle time.Duration
}

// Adapter implements the domain's terminal ports over the panes a
// Discovery sees. It is safe for concurrent use; callers serialise the
// steps of one terminal (the domain holds the terminal's lock).
type Adapter struct {
	disc     *discovery.Discovery
	registry *agent.Registry
	tmux     tmux.Runner
	fs       proc.FS
	clock    quartz.Clock
	poll     time.Duration
	cfg      Config

	mu    sync.Mutex
	panes map[string]domain.PaneLocator // terminal id -> pane, as last seen
	// inFlight are requests submitted to panes whose record files a shared
	// process holds (a Codex app-server daemon), not yet accepted.
	inFlight map[flightKey]flight
	// seen is when each prompt or step fingerprint was first read, for the
	// occurrence on screen now: shown is the fingerprint each terminal's
	// last read showed (by terminal id and "prompt", "step" or "hook"). One that
	// went from the screen, or that AKK answered, is forgotten, so the same
	// prompt drawn again (the same command asked for in a later Turn)
	// settles anew.
	seen  map[string]time.Time
	shown map[string]string
	// hooks is Claude Code's hook channel (nil: none).
	hooks *claudehook.Broker
	// sessions: the terminal each Claude Code session was last seen in
	// (a hint for binding a hook event; always checked again).
	sessions map[string]string
	// answered: the request a pane's hook is answering or just answered,
	// and until when a dialog is taken for its (see lingering).
	answered map[string]hookAnswer
}

// hookAnswer is a hook request being answered: its fingerprint, and until
// when a dialog on the pane is taken for its.
type hookAnswer struct {
	fp    string
	until time.Time
}

// The Adapter is the pane transport, with every ability a pane may have.
var (
	_ domain.PaneTransport   = (*Adapter)(nil)
	_ domain.ScreenReader    = (*Adapter)(nil)
	_ domain.ComposerClearer = (*Adapter)(nil)
	_ domain.ChannelReader   = (*Adapter)(nil)
	_ domain.PaneObservers   = (*Adapter)(nil)
	_ domain.ThreadAnchor    = (*Adapter)(nil)
)

// New builds an Adapter on the Discovery the daemon lists terminals with
// (discovery.Default or discovery.New), so both see the same tmux servers,
// /proc and version profiles.
func New(d *discovery.Discovery, cfg Config) *Adapter {
	if cfg.Clock == nil {
		cfg.Clock = quartz.NewReal()
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 25 * time.Millisecond
	}
	if cfg.AnswerPollEvery <= 0 {
		cfg.AnswerPollEvery = 40 * time.Millisecond
	}
	if cfg.VerifyWithin <= 0 {
		cfg.VerifyWithin = 10 * time.Second
	}
	if cfg.ApprovalSettle <= 0 {
		cfg.ApprovalSettle = 1500 * time.Millisecond
	}
	if cfg.StepSettle <= 0 {
		cfg.StepSettle = 500 * time.Millisecond
	}
	return &Adapter{disc: d, registry: d.Registry(), tmux: d.Tmux(), fs: d.Proc(), clock: cfg.Clock, poll: cfg.PollEvery, cfg: cfg,
		panes: map[string]domain.PaneLocator{}, sessions: map[string]string{}, answered: map[string]hookAnswer{}, inFlight: map[flightKey]flight{}, seen: map[string]time.Time{}}
}

// capture takes t's screen, with escapes and its title, in one tmux call
// (through a control client of the server when one runs).
func (x *Adapter) capture(ctx context.Context, t domain.Terminal) (screen.Capture, error) {
	return parsed(x.disc.CapturePane(ctx, t.Pane.Socket, t.Pane.PaneID))
}

// parsed is a snapshot as a screen capture with its title.
func parsed(snap tmux.Snapshot, err error) (screen.Capture, error) {
	if err != nil {
		return screen.Capture{}, err
	}
	c := screen.Parse(snap.ANSI)
	c.Title = snap.Title
	return c, nil
}

// showing records what a read of terminal tid showed of kind ("prompt",
// "step" or "hook"): the fingerprint fp, or "" for none. A fingerprint the terminal
// showed before and shows no more is forgotten; one shown now for the
// first time is remembered from now (seenAt).
func (x *Adapter) showing(tid, kind, fp string) {
	key := tid + "\x00" + kind
	x.mu.Lock()
	if x.shown == nil {
		x.shown = map[string]string{}
	}
	prev, had := x.shown[key]
	if had && prev != fp {
		delete(x.seen, prev)
	}
	if fp == "" {
		delete(x.shown, key)
	} else {
		x.shown[key] = fp
	}
	x.mu.Unlock()
	if fp != "" && (!had || prev != fp) {
		x.seenAt(fp)
	}
}

// captureProcess is capture with a tmux process of its own, never the
// control client.
func (x *Adapter) captureProcess(ctx context.Context, t domain.Terminal) (screen.Capture, error) {
	return parsed(tmux.Server{Socket: t.Pane.Socket, Runner: x.tmux}.Capture(ctx, t.Pane.PaneID))
}

// seenAt records that a prompt or step with fingerprint fp is on screen
// now and returns when it was first read. Entries older than an hour are
// dropped.
func (x *Adapter) seenAt(fp string) time.Time {
	now := x.now()
	x.mu.Lock()
	defer x.mu.Unlock()
	first, ok := x.seen[fp]
	if !ok {
		first = now
		x.seen[fp] = now
		for k, at := range x.seen {
			if now.Sub(at) > time.Hour {
				delete(x.seen, k)
			}
		}
	}
	return first
}

// settled returns once the prompt or step with fingerprint fp (read by
// fingerprintOf, "" when absent) has held still long enough for its agent
// to take a key: a key sent right after an agent draws a prompt may be
// dropped. The wait adapts instead of being fixed: it counts from when AKK
// first read this exact prompt (an offer read a while ago needs no more
// wait), it stretches by four times the time a capture by a tmux process
// takes now (a loaded machine redraws and attaches its input late; a
// capture through the control client is quick even then, so it is no
// measure of load), and at least two captures
// in a row must show the prompt unchanged. A change ends it with
// ErrPromptChanged.
func (x *Adapter) settled(ctx context.Context, t domain.Terminal, settle time.Duration, fp string, fingerprintOf func(screen.Capture) string) error {
	first := x.seenAt(fp)
	begin := x.now()
	streak := 0
	var took time.Duration
	for {
		start := x.now()
		// The first capture is a tmux process of its own: the time it
		// takes (starting a process, the server and the agent scheduled
		// late) is the measure of the machine's load. The others go
		// through the server's control client, which answers quickly
		// however loaded the machine is.
		capture := x.capture
		if streak == 0 {
			capture = x.captureProcess
		}
		c, err := capture(ctx, t)
		if err != nil {
			return err
		}
		took = max(took, x.now().Sub(start))
		if fingerprintOf(c) != fp {
			return domain.ErrPromptChanged
		}
		streak++
		if streak >= 2 && x.now().Sub(first) >= settle+4*took {
			x.mu.Lock()
			delete(x.seen, fp) // answered now: a later occurrence settles anew
			x.mu.Unlock()
			return nil
		}
		// The bound stretches with the load as the wait does: a fixed one
		// (settle and VerifyWithin) was shorter than the wait itself once a
		// capture took a quarter of VerifyWithin, and a still screen failed.
		if x.now().After(begin.Add(settle + 4*took + x.cfg.VerifyWithin)) {
			return fmt.Errorf("%w: the screen never held still long enough", domain.ErrPromptChanged)
		}
		if x.sleep(ctx, x.cfg.AnswerPollEvery) != nil {
			return ctx.Err()
		}
	}
}

// now is the adapter's clock's time.
func (x *Adapter) now() time.Time { return x.clock.Now() }

// sleep waits d on the adapter's clock, or until ctx ends.
func (x *Adapter) sleep(ctx context.Context, d time.Duration) error {
	t := x.clock.NewTimer(d, "agentpane")
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// until recaptures until cond holds for the screen or VerifyWithin passes;
// it returns the capture cond held on.
func (x *Adapter) until(ctx context.Context, t domain.Terminal, cond func(screen.Capture) bool) (screen.Capture, bool) {
	deadline := x.now().Add(x.cfg.VerifyWithin)
	for {
		if c, err := x.capture(ctx, t); err == nil && cond(c) {
			return c, true
		}
		if x.now().After(deadline) || x.sleep(ctx, x.cfg.AnswerPollEvery) != nil {
			return screen.Capture{}, false
		}
	}
}

// twice reports whether left holds on two captures in a row within
// VerifyWithin: how an answered prompt or step is proven gone (one
// capture may catch a redraw half done).
func (x *Adapter) twice(ctx context.Context, t domain.Terminal, left func(screen.Capture) bool) bool {
	streak := 0
	_, ok := x.until(ctx, t, func(c screen.Capture) bool {
		if left(c) {
			streak++
		} else {
			streak = 0
		}
		return streak == 2
	})
	return ok
}

// keys sends keys to one pane and keeps the stage an answer reached: a
// tmux that could not run sent nothing; any other failure may have
// delivered the key.
type keys struct {
	runner tmux.Runner
	pane   domain.PaneLocator
	stage  domain.AnswerStage
	// opened: the command's Enter went out, so a native surface (a menu,
	// a picker, a panel) may be open until the plan proves it closed.
	opened bool
}

func (x *Adapter) keysFor(t domain.Terminal) *keys {
	return &keys{runner: x.tmux, pane: t.Pane, stage: domain.AnswerNothing}
}

// press sends key names ("Down", "Enter", "3").
func (k *keys) press(ctx context.Context, names ...string) error {
	return k.sent(tmux.Server{Socket: k.pane.Socket, Runner: k.runner}.SendKeys(ctx, k.pane.PaneID, names...))
}

// typeText sends text as typed, none of it read as a key name.
func (k *keys) typeText(ctx context.Context, text string) error {
	return k.sent(tmux.Server{Socket: k.pane.Socket, Runner: k.runner}.Type(ctx, k.pane.PaneID, text))
}

func (k *keys) sent(err error) error {
	if err != nil && k.stage == domain.AnswerNothing && errors.Is(err, tmux.ErrNoTmux) {
		return err
	}
	k.stage = domain.AnswerSent
	return err
}
