package interaction

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/claude"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/screen"
	"akk/terminaldrivers/tmux"
)

// Config says how to reach panes. The zero value runs the tmux on PATH with
// the Claude Code and Codex drivers.
type Config struct {
	// Tmux runs tmux; tmux.ExecRunner{} when nil. Give it the runner
	// discovery uses.
	Tmux tmux.Runner
	// Registry holds the version profiles: the daemon's one registry, the
	// one its discovery reads with. Built from Drivers when nil.
	Registry *agent.Registry
	// Drivers hold the version profiles when Registry is nil; Claude Code
	// and Codex when nil.
	Drivers []agent.Driver
	// VerifyWithin bounds each wait for the screen to show what a key
	// should have done (a highlight move, the editor, the typed text, the
	// step leaving); 10s when zero.
	VerifyWithin time.Duration
	// PollEvery is the pause between recaptures; 40ms when zero.
	PollEvery time.Duration
	// Settle is how long a step must stay unchanged on screen before the
	// first key; 500ms when zero (keys that come right after the agent
	// draws a step may be dropped).
	Settle time.Duration
}

// Interactions implements domain.InteractionTerminal. It is safe for
// concurrent use; callers serialise answers per terminal (the domain's
// terminal lock).
type Interactions struct {
	cfg      Config
	registry *agent.Registry
}

var _ domain.InteractionTerminal = (*Interactions)(nil)

// New builds Interactions.
func New(cfg Config) (*Interactions, error) {
	if cfg.Tmux == nil {
		cfg.Tmux = tmux.ExecRunner{}
	}
	if cfg.Drivers == nil {
		cfg.Drivers = []agent.Driver{claude.Driver{}, codex.Driver{}}
	}
	if cfg.VerifyWithin <= 0 {
		// Generous: it ends as soon as the step left, and a loaded machine
		// redraws late.
		cfg.VerifyWithin = 10 * time.Second
	}
	if cfg.Settle <= 0 {
		cfg.Settle = 500 * time.Millisecond
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 40 * time.Millisecond
	}
	reg := cfg.Registry
	if reg == nil {
		var err error
		if reg, err = agent.RegistryOf(cfg.Drivers); err != nil {
			return nil, err
		}
	}
	return &Interactions{cfg: cfg, registry: reg}, nil
}

// ErrUnprofiled: the terminal's agent version has no questionnaire
// grammar, so its questionnaires are never read or answered.
var ErrUnprofiled = errors.New("no questionnaire grammar for this agent version")

// Kind is the only kind of step the pinned versions draw.
const Kind = "questionnaire"

// Step implements domain.InteractionTerminal.
func (x *Interactions) Step(ctx context.Context, t domain.Terminal) (domain.InteractionStep, error) {
	prof, g, perr := x.profile(t)
	if perr != nil && prof == nil {
		return domain.InteractionStep{}, perr
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return domain.InteractionStep{}, err
	}
	if perr != nil {
		return unanswerable(t, prof, c, perr), nil
	}
	s, _ := project(t, prof, g, c)
	return s, nil
}

// project turns the capture's bottom-most step into the domain's terms. A
// questionnaire the grammar cannot isolate but the profile's classifier
// sees is present and not answerable.
func project(t domain.Terminal, prof agent.InteractionProfile, g agent.InteractionGrammar, c screen.Capture) (domain.InteractionStep, agent.StepReading) {
	r := g.ReadStep(c)
	if !r.Found {
		if cl := prof.Classify(c); cl.State == domain.ScreenAwaitingInteraction {
			return domain.InteractionStep{
				Present: true, Kind: Kind,
				Reason:      "a questionnaire the profile cannot isolate (" + r.Reason + ")",
				Fingerprint: fingerprint(t, prof, cl.Region),
			}, r
		}
		return domain.InteractionStep{}, r
	}
	s := domain.InteractionStep{
		Present: true, Answerable: r.Answerable, Reason: r.Reason, Kind: Kind,
		Index: r.Index, Total: r.Total,
		FreeTextLimit: freeTextLimit(t, g.StepKeys(), r, c),
		Fingerprint:   fingerprint(t, prof, r.Region),
	}
	q := domain.StepQuestion{Key: "q" + strconv.Itoa(r.Index), Header: r.Header, Prompt: r.Prompt, Required: true, ResponseKind: r.ResponseKind}
	for _, o := range r.Options {
		if o.Offered {
			q.Options = append(q.Options, domain.StepOption{Key: optionKey(o), Label: o.Label, TakesText: o.TakesText})
		}
	}
	s.Questions = []domain.StepQuestion{q}
	return s, r
}

// optionKey is an option's private handle: its number in the step.
func optionKey(o agent.StepOption) string { return "o" + strconv.Itoa(o.Number) }

// freeTextLimit is the longest text the step's editor shows on its one
// row: the profile's limit, bounded by the pane's width.
func freeTextLimit(t domain.Terminal, k agent.StepKeys, r agent.StepReading, c screen.Capture) int {
	has := false
	for _, o := range r.Options {
		has = has || (o.Offered && o.TakesText)
	}
	if !has {
		return 0
	}
	width := t.Width
	if width <= 0 {
		for _, l := range c.Lines {
			width = max(width, utf8.RuneCountInString(l.Text))
		}
	}
	return max(0, min(k.FreeTextLimit, width-r.TextColumn-k.TextMargin))
}

// fingerprint binds the exact step region to the pane, the agent process
// incarnation and the profile.
func fingerprint(t domain.Terminal, prof agent.Profile, r screen.Region) string {
	return agent.Fingerprint(t, prof.Agent().Profile, Kind, r)
}

// plan is what an answer resolves to: the option row to highlight and the
// text to type into it, if any.
type plan struct {
	target int // index into the reading's Options
	text   string
}

// resolve checks the answers against the step and picks the option. It
// sends nothing.
func resolve(s domain.InteractionStep, r agent.StepReading, answers []domain.StepAnswer) (plan, error) {
	unavailable := func(why string) (plan, error) {
		return plan{}, fmt.Errorf("%w: %s", domain.ErrDecisionUnavailable, why)
	}
	if !s.Answerable {
		return unavailable(s.Reason)
	}
	if len(s.Questions) != 1 || len(answers) != 1 || answers[0].QuestionKey != s.Questions[0].Key {
		return unavailable("the step has one question and takes exactly its answer")
	}
	a := answers[0]
	if len(a.OptionKeys) != 1 {
		return unavailable("exactly one option is chosen")
	}
	for i, o := range r.Options {
		if !o.Offered || optionKey(o) != a.OptionKeys[0] {
			continue
		}
		if !o.TakesText {
			if a.Text != "" {
				return unavailable("this option takes no text")
			}
			return plan{target: i}, nil
		}
		if why := checkText(a.Text, s.FreeTextLimit); why != "" {
			return unavailable(why)
		}
		return plan{target: i, text: a.Text}, nil
	}
	return unavailable("no such option")
}

// checkText: one line of printable text, no surrounding spaces, within the
// limit.
func checkText(text string, limit int) string {
	switch {
	case text == "":
		return "this option needs text"
	case !utf8.ValidString(text):
		return "the text is not UTF-8"
	case utf8.RuneCountInString(text) > limit:
		return "the text is longer than " + strconv.Itoa(limit) + " characters"
	case strings.TrimSpace(text) != text:
		return "the text starts or ends with whitespace"
	}
	for _, r := range text {
		if !unicode.IsPrint(r) {
			return "the text holds a character that is not printable on one line"
		}
	}
	return ""
}

// AnswerStep implements domain.InteractionTerminal.
func (x *Interactions) AnswerStep(ctx context.Context, t domain.Terminal, fp string, answers []domain.StepAnswer) (domain.AnswerStage, error) {
	prof, g, err := x.profile(t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	s, r := project(t, prof, g, c)
	if !s.Present || s.Fingerprint != fp {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	p, err := resolve(s, r, answers)
	if err != nil {
		return domain.AnswerNothing, err
	}
	// The step must hold still for a moment first: a key that comes too
	// soon after the agent draws it may be dropped.
	if !agent.Sleep(ctx, x.cfg.Settle) {
		return domain.AnswerNothing, ctx.Err()
	}
	if c, err = x.capture(ctx, t); err != nil {
		return domain.AnswerNothing, err
	}
	if again, _ := project(t, prof, g, c); !again.Present || again.Fingerprint != fp {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	d := dispatch{x: x, t: t, g: g, keys: g.StepKeys(), stage: domain.AnswerNothing}
	last, err := d.run(ctx, r, p)
	if err != nil {
		return d.stage, err
	}
	if x.gone(ctx, t, prof, g, last) {
		return domain.AnswerVerified, nil
	}
	return domain.AnswerSent, errors.New("the keys were sent but the step did not leave the screen")
}

// dispatch sends one step's key plan, proving each key's effect before the
// next; stage is how far it got.
type dispatch struct {
	x     *Interactions
	t     domain.Terminal
	g     agent.InteractionGrammar
	keys  agent.StepKeys
	stage domain.AnswerStage
}

func (d *dispatch) send(ctx context.Context, args ...string) error {
	srv := tmux.Server{Socket: d.t.Pane.Socket, Runner: d.x.cfg.Tmux}
	var err error
	if len(args) == 2 && args[0] == "-l" {
		// Literal text: tmux sends its characters as typed, none as a key
		// name; "--" keeps a leading "-" from reading as a flag.
		_, err = d.x.cfg.Tmux.Run(ctx, "-S", d.t.Pane.Socket, "send-keys", "-t", d.t.Pane.PaneID, "-l", "--", args[1])
		if err != nil {
			err = fmt.Errorf("type into %s: %w", d.t.Pane.PaneID, err)
		}
	} else {
		err = srv.SendKeys(ctx, d.t.Pane.PaneID, args...)
	}
	if err != nil {
		// tmux that could not run sent nothing; any other failure may
		// have delivered the key.
		if !(d.stage == domain.AnswerNothing && errors.Is(err, tmux.ErrNoTmux)) {
			d.stage = domain.AnswerSent
		}
		return err
	}
	d.stage = domain.AnswerSent
	return nil
}

// run moves the highlight to the planned option, types its text if any,
// and presses Submit. It returns the reading Submit was pressed on.
func (d *dispatch) run(ctx context.Context, r agent.StepReading, p plan) (agent.StepReading, error) {
	for r.Cursor != p.target {
		key, want := d.keys.Down, r.Cursor+1
		if p.target < r.Cursor {
			key, want = d.keys.Up, r.Cursor-1
		}
		if err := d.send(ctx, key); err != nil {
			return r, err
		}
		next, ok := d.x.await(ctx, d.t, d.g, func(n agent.StepReading) bool {
			return r.Same(n) && n.Cursor == want && (!n.Editor || n.EditorText == "")
		})
		if !ok {
			return r, errors.New("the highlight did not move as planned; stopped before answering")
		}
		r = next
	}
	if p.text != "" {
		if d.keys.OpenText != "" {
			if err := d.send(ctx, d.keys.OpenText); err != nil {
				return r, err
			}
		}
		next, ok := d.x.await(ctx, d.t, d.g, func(n agent.StepReading) bool {
			return r.Same(n) && n.Cursor == p.target && n.Editor && n.EditorText == ""
		})
		if !ok {
			return r, errors.New("the empty text editor did not show; stopped before typing")
		}
		if err := d.send(ctx, "-l", p.text); err != nil {
			return next, err
		}
		next, ok = d.x.await(ctx, d.t, d.g, func(n agent.StepReading) bool {
			return next.Same(n) && n.Cursor == p.target && n.Editor && n.EditorText == p.text
		})
		if !ok {
			return next, errors.New("the typed text did not show exactly; stopped before submitting")
		}
		if !agent.Sleep(ctx, d.keys.TextSettle) {
			return next, ctx.Err()
		}
		// The text must still be all the editor holds after the pause.
		c, err := d.x.capture(ctx, d.t)
		if err != nil {
			return next, err
		}
		if n := d.g.ReadStep(c); !next.Same(n) || n.Cursor != p.target || !n.Editor || n.EditorText != p.text {
			return next, errors.New("the editor changed before submitting; stopped")
		}
		r = next
	}
	if err := d.send(ctx, d.keys.Submit); err != nil {
		return r, err
	}
	return r, nil
}

// await recaptures until cond holds for the step on screen or
// VerifyWithin passes.
func (x *Interactions) await(ctx context.Context, t domain.Terminal, g agent.InteractionGrammar, cond func(agent.StepReading) bool) (agent.StepReading, bool) {
	deadline := time.Now().Add(x.cfg.VerifyWithin)
	for {
		if c, err := x.capture(ctx, t); err == nil {
			if r := g.ReadStep(c); cond(r) {
				return r, true
			}
		}
		if time.Now().After(deadline) || !agent.Sleep(ctx, x.cfg.PollEvery) {
			return agent.StepReading{}, false
		}
	}
}

// gone reports whether the step answered left the screen: two captures in
// a row show another step, or no step and the agent at work or idle.
func (x *Interactions) gone(ctx context.Context, t domain.Terminal, prof agent.InteractionProfile, g agent.InteractionGrammar, answered agent.StepReading) bool {
	deadline := time.Now().Add(x.cfg.VerifyWithin)
	streak := 0
	for {
		if c, err := x.capture(ctx, t); err == nil {
			n := g.ReadStep(c)
			left := n.Found && !answered.Same(n)
			if !n.Found {
				switch prof.Classify(c).State {
				case domain.ScreenWorking, domain.ScreenIdle, domain.ScreenAwaitingApproval:
					left = true
				}
			}
			if left {
				streak++
				if streak == 2 {
					return true
				}
			} else {
				streak = 0
			}
		}
		if time.Now().After(deadline) || !agent.Sleep(ctx, x.cfg.PollEvery) {
			return false
		}
	}
}

// profile finds the terminal's version profile and its grammar.
func (x *Interactions) profile(t domain.Terminal) (agent.InteractionProfile, agent.InteractionGrammar, error) {
	p, exact, err := x.registry.Find(t)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrUnprofiled, err)
	}
	ip, ok := p.(agent.InteractionProfile)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrUnprofiled, t.Agent.Profile)
	}
	if !exact {
		return ip, nil, fmt.Errorf("%w: %s %s has no profile of its own", ErrUnprofiled, t.Agent.Kind, t.Agent.Version)
	}
	g, ok := ip.InteractionGrammar()
	if !ok {
		return ip, nil, fmt.Errorf("%w: %s", ErrUnprofiled, t.Agent.Profile)
	}
	return ip, g, nil
}

// unanswerable is the step of a version without a grammar: present when
// the profile's classifier sees a questionnaire, never answerable.
func unanswerable(t domain.Terminal, prof agent.InteractionProfile, c screen.Capture, why error) domain.InteractionStep {
	cl := prof.Classify(c)
	if cl.State != domain.ScreenAwaitingInteraction {
		return domain.InteractionStep{}
	}
	return domain.InteractionStep{
		Present: true, Kind: Kind,
		Reason:      "AKK answers questionnaires only with a grammar of this exact agent version (" + why.Error() + "); answer it in the pane",
		Fingerprint: fingerprint(t, prof, cl.Region),
	}
}

func (x *Interactions) capture(ctx context.Context, t domain.Terminal) (screen.Capture, error) {
	return agent.Capture(ctx, x.cfg.Tmux, t)
}
