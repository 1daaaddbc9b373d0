// Package approval implements the domain's ApprovalTerminal for agents in
// tmux panes: it isolates the one bottom-most permission prompt the agent
// version's profile can prove, fingerprints it with the terminal's process
// identity, and answers it with the profile's closed key plan, once, fenced
// by that fingerprint.
package approval

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
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
	// VerifyWithin bounds how long Answer watches for the prompt to go
	// after its keys (and for each highlight move of a navigating plan);
	// 10s when zero.
	VerifyWithin time.Duration
	// PollEvery is the pause between recaptures; 40ms when zero.
	PollEvery time.Duration
	// Settle is how long the prompt must stay unchanged on screen before
	// its key is sent; 800ms when zero. Claude Code ignores keys that come
	// right after it draws a permission prompt, so a key sent at once may be
	// dropped (seen on 2.1.267 and 2.1.328).
	Settle time.Duration
}

// Approvals implements domain.ApprovalTerminal. It is safe for concurrent
// use; callers serialise answers per terminal (the domain's terminal lock).
type Approvals struct {
	cfg      Config
	registry *agent.Registry
}

var _ domain.ApprovalTerminal = (*Approvals)(nil)

// New builds Approvals. The daemon gives it the tmux runner (and, if it
// customises them, the drivers) its discovery uses, and hands it to the
// domain service (UseApprovals).
func New(cfg Config) (*Approvals, error) {
	if cfg.Tmux == nil {
		cfg.Tmux = tmux.ExecRunner{}
	}
	if cfg.Drivers == nil {
		cfg.Drivers = []agent.Driver{claude.Driver{}, codex.Driver{}}
	}
	if cfg.VerifyWithin <= 0 {
		// Generous: it ends as soon as the prompt is gone, and a loaded
		// machine redraws late.
		cfg.VerifyWithin = 10 * time.Second
	}
	if cfg.Settle <= 0 {
		cfg.Settle = 800 * time.Millisecond
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
	return &Approvals{cfg: cfg, registry: reg}, nil
}

// ErrUnprofiled: the terminal's agent version has no permission prompt
// grammar, so its prompts are never read or answered.
var ErrUnprofiled = errors.New("no permission prompt grammar for this agent version")

// MaxExcerpt bounds the command excerpt, in runes.
const MaxExcerpt = 300

// Prompt implements domain.ApprovalTerminal.
func (a *Approvals) Prompt(ctx context.Context, t domain.Terminal) (domain.ApprovalPrompt, error) {
	prof, g, perr := a.profile(t)
	if perr != nil && prof == nil {
		return domain.ApprovalPrompt{}, perr
	}
	c, err := a.capture(ctx, t)
	if err != nil {
		return domain.ApprovalPrompt{}, err
	}
	if perr != nil {
		return unanswerable(t, prof, c, perr), nil
	}
	p, _ := read(t, prof, g, c)
	return p, nil
}

// read projects the capture's bottom-most permission prompt. A prompt the
// grammar cannot isolate but the profile's classifier sees is present and
// not answerable.
func read(t domain.Terminal, prof agent.ApprovalProfile, g agent.ApprovalGrammar, c screen.Capture) (domain.ApprovalPrompt, agent.ApprovalReading) {
	r := g.Read(c)
	if r.Found {
		p := domain.ApprovalPrompt{Present: true, Fingerprint: fingerprint(t, prof, r.Region)}
		if !r.Answerable {
			p.Reason = r.Reason
			return p, r
		}
		p.Answerable = true
		p.Kind, p.Tool = r.Shape.Kind, r.Shape.Tool
		p.CommandExcerpt = Excerpt(r.Command)
		p.Decisions = []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject}
		return p, r
	}
	if cl := prof.Classify(c); cl.State == domain.ScreenAwaitingApproval {
		return domain.ApprovalPrompt{
			Present:     true,
			Reason:      "a permission prompt the profile cannot isolate (" + r.Reason + ")",
			Fingerprint: fingerprint(t, prof, cl.Region),
		}, r
	}
	return domain.ApprovalPrompt{}, r
}

// fingerprint binds the exact prompt region to the pane, the agent process
// incarnation and the profile.
func fingerprint(t domain.Terminal, prof agent.Profile, r screen.Region) string {
	return agent.Fingerprint(t, prof.Agent().Profile, "permission", r)
}

// Excerpt is the command's rows, redacted and bounded to MaxExcerpt runes.
// Rows wrapped by the terminal are also redacted joined, so a secret cut in
// two by the wrap is still caught.
func Excerpt(rows []string) string {
	s := screen.Redact(strings.Join(rows, "\n"))
	if joined := screen.Redact(strings.Join(rows, "")); strings.Count(joined, screen.Redacted) > strings.Count(s, screen.Redacted) {
		s = joined
	}
	if utf8.RuneCountInString(s) > MaxExcerpt {
		s = string([]rune(s)[:MaxExcerpt-1]) + "…"
	}
	return s
}

// Answer implements domain.ApprovalTerminal.
func (a *Approvals) Answer(ctx context.Context, t domain.Terminal, fp string, d domain.ApprovalDecision) (domain.AnswerStage, error) {
	if d != domain.ApproveOnce && d != domain.Reject {
		return domain.AnswerNothing, fmt.Errorf("%w: %q", domain.ErrDecisionUnavailable, d)
	}
	prof, g, err := a.profile(t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	c, err := a.capture(ctx, t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	p, r := read(t, prof, g, c)
	if !p.Present || p.Fingerprint != fp {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	row, ok := r.Row(d)
	if !p.Answerable || !ok {
		return domain.AnswerNothing, fmt.Errorf("%w: %s", domain.ErrDecisionUnavailable, p.Reason)
	}
	// The prompt must hold still for a moment first: a key that comes too
	// soon after the prompt is drawn may be dropped.
	if !agent.Sleep(ctx, a.cfg.Settle) {
		return domain.AnswerNothing, ctx.Err()
	}
	if c, err = a.capture(ctx, t); err != nil {
		return domain.AnswerNothing, err
	}
	if again, _ := read(t, prof, g, c); !again.Present || again.Fingerprint != fp {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	srv := tmux.Server{Socket: t.Pane.Socket, Runner: a.cfg.Tmux}
	switch r.Shape.Keys {
	case agent.KeyRowNumber:
		if err := srv.SendKeys(ctx, t.Pane.PaneID, strconv.Itoa(row.Number)); err != nil {
			return sendFailed(err)
		}
	case agent.KeyNavigate:
		stage, last, err := a.navigate(ctx, t, prof, g, r, row)
		if err != nil {
			return stage, err
		}
		fp = last
	default:
		return domain.AnswerNothing, fmt.Errorf("%w: the profile has no key plan", domain.ErrDecisionUnavailable)
	}
	if a.gone(ctx, t, prof, g, p) {
		return domain.AnswerVerified, nil
	}
	return domain.AnswerSent, errors.New("the keys were sent but the prompt did not go")
}

// sendFailed: tmux that could not run sent nothing; any other failure may
// have delivered the key.
func sendFailed(err error) (domain.AnswerStage, error) {
	if errors.Is(err, tmux.ErrNoTmux) {
		return domain.AnswerNothing, err
	}
	return domain.AnswerSent, err
}

// navigate moves the highlight one row at a time to row, proving each move
// by a recapture that shows the same prompt with only the highlight moved,
// then presses Enter. On any surprise it stops and returns what was sent.
// It returns the fingerprint of the prompt Enter was pressed on.
func (a *Approvals) navigate(ctx context.Context, t domain.Terminal, prof agent.ApprovalProfile, g agent.ApprovalGrammar, r agent.ApprovalReading, row agent.Option) (domain.AnswerStage, string, error) {
	srv := tmux.Server{Socket: t.Pane.Socket, Runner: a.cfg.Tmux}
	target := row.Number - 1
	stage := domain.AnswerNothing
	for r.Cursor != target {
		key, want := "Down", r.Cursor+1
		if target < r.Cursor {
			key, want = "Up", r.Cursor-1
		}
		if err := srv.SendKeys(ctx, t.Pane.PaneID, key); err != nil {
			if stage == domain.AnswerNothing && errors.Is(err, tmux.ErrNoTmux) {
				return domain.AnswerNothing, "", err
			}
			return domain.AnswerSent, "", err
		}
		stage = domain.AnswerSent
		next, ok := a.await(ctx, t, g, func(n agent.ApprovalReading) bool { return movedTo(r, n, want) })
		if !ok {
			return stage, "", errors.New("the highlight did not move as planned; stopped before Enter")
		}
		r = next
	}
	if err := srv.SendKeys(ctx, t.Pane.PaneID, "Enter"); err != nil {
		if stage == domain.AnswerNothing && errors.Is(err, tmux.ErrNoTmux) {
			return domain.AnswerNothing, "", err
		}
		return domain.AnswerSent, "", err
	}
	return domain.AnswerSent, fingerprint(t, prof, r.Region), nil
}

// movedTo reports whether n is the prompt of r with the highlight on option
// index want and nothing else changed.
func movedTo(r, n agent.ApprovalReading, want int) bool {
	if !n.Answerable || n.Cursor != want || len(n.Options) != len(r.Options) || len(n.Region.Lines) != len(r.Region.Lines) {
		return false
	}
	option := map[int]bool{}
	for i, o := range r.Options {
		if n.Options[i].Number != o.Number || n.Options[i].Label != o.Label || n.Options[i].Row-n.Region.Start != o.Row-r.Region.Start {
			return false
		}
		option[o.Row-r.Region.Start] = true
	}
	for i, l := range r.Region.Lines {
		if !option[i] && n.Region.Lines[i] != l {
			return false
		}
	}
	return true
}

// await recaptures until cond holds for the prompt on screen or
// VerifyWithin passes.
func (a *Approvals) await(ctx context.Context, t domain.Terminal, g agent.ApprovalGrammar, cond func(agent.ApprovalReading) bool) (agent.ApprovalReading, bool) {
	deadline := time.Now().Add(a.cfg.VerifyWithin)
	for {
		if c, err := a.capture(ctx, t); err == nil {
			if r := g.Read(c); cond(r) {
				return r, true
			}
		}
		if time.Now().After(deadline) || !agent.Sleep(ctx, a.cfg.PollEvery) {
			return agent.ApprovalReading{}, false
		}
	}
}

// gone reports whether the prompt with fingerprint fp left the screen:
// two captures in a row without it, within VerifyWithin.
func (a *Approvals) gone(ctx context.Context, t domain.Terminal, prof agent.ApprovalProfile, g agent.ApprovalGrammar, answered domain.ApprovalPrompt) bool {
	deadline := time.Now().Add(a.cfg.VerifyWithin)
	streak := 0
	for {
		if c, err := a.capture(ctx, t); err == nil {
			// Gone: no prompt, or a prompt about something else (the next
			// command). The same prompt with its highlight moved is not gone:
			// its fingerprint changed, but nothing was answered.
			if p, _ := read(t, prof, g, c); !p.Present || p.Kind != answered.Kind || p.Tool != answered.Tool ||
				p.CommandExcerpt != answered.CommandExcerpt {
				streak++
				if streak == 2 {
					return true
				}
			} else {
				streak = 0
			}
		}
		if time.Now().After(deadline) || !agent.Sleep(ctx, a.cfg.PollEvery) {
			return false
		}
	}
}

// profile finds the terminal's version profile and its grammar. When the
// version has no grammar of its own (a profile without one, or an unknown
// version read with its neighbour's profile) the error is ErrUnprofiled and
// the profile, if any, is still returned: it may classify, never answer.
func (a *Approvals) profile(t domain.Terminal) (agent.ApprovalProfile, agent.ApprovalGrammar, error) {
	p, exact, err := a.registry.Find(t)
	if err != nil {
		return nil, agent.ApprovalGrammar{}, fmt.Errorf("%w: %v", ErrUnprofiled, err)
	}
	ap, ok := p.(agent.ApprovalProfile)
	if !ok {
		return nil, agent.ApprovalGrammar{}, fmt.Errorf("%w: %s", ErrUnprofiled, t.Agent.Profile)
	}
	if !exact {
		return ap, agent.ApprovalGrammar{}, fmt.Errorf("%w: %s %s has no profile of its own", ErrUnprofiled, t.Agent.Kind, t.Agent.Version)
	}
	g, ok := ap.ApprovalGrammar()
	if !ok {
		return ap, agent.ApprovalGrammar{}, fmt.Errorf("%w: %s", ErrUnprofiled, t.Agent.Profile)
	}
	return ap, g, nil
}

// unanswerable is the prompt of a version without a grammar: present when
// the profile's classifier sees one, never answerable.
func unanswerable(t domain.Terminal, prof agent.ApprovalProfile, c screen.Capture, why error) domain.ApprovalPrompt {
	cl := prof.Classify(c)
	if cl.State != domain.ScreenAwaitingApproval {
		return domain.ApprovalPrompt{}
	}
	return domain.ApprovalPrompt{
		Present:     true,
		Reason:      "AKK answers permission prompts only with a grammar of this exact agent version (" + why.Error() + "); answer it in the pane",
		Fingerprint: fingerprint(t, prof, cl.Region),
	}
}

func (a *Approvals) capture(ctx context.Context, t domain.Terminal) (screen.Capture, error) {
	return agent.Capture(ctx, a.cfg.Tmux, t)
}
