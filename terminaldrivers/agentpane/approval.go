// Permission prompts: the one bottom-most prompt the agent version's
// grammar can prove is isolated, fingerprinted with the terminal's process
// identity, and answered with the grammar's closed key plan, once, fenced
// by that fingerprint.

package agentpane

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agentpane/claudehook"
	"akk/terminaldrivers/screen"
)

// ErrNoPromptGrammar: the terminal's agent version has no permission prompt
// grammar, so its prompts are never read or answered.
var ErrNoPromptGrammar = errors.New("no permission prompt grammar for this agent version")

// MaxExcerpt bounds the command excerpt, in runes.
const MaxExcerpt = 300

// Prompt implements domain.ApprovalTerminal: the hook's prompt when
// Claude Code's PermissionRequest hook holds one, else the screen's.
func (x *Adapter) Prompt(ctx context.Context, t domain.Terminal) (domain.ApprovalPrompt, error) {
	if p, ok := x.hookPrompt(t); ok {
		return p, nil
	}
	p, err := x.screenPrompt(ctx, t)
	// Keys answer it: a rejection ends the agent's turn.
	p.RejectEndsTurn, p.Where = true, "in the pane"
	p.Unproven = "keys were sent to the permission prompt but its answer is not proven"
	return p, err
}

// screenPrompt is the permission prompt the pane's screen shows.
func (x *Adapter) screenPrompt(ctx context.Context, t domain.Terminal) (domain.ApprovalPrompt, error) {
	if x.lingering(t.ID, "", true) {
		return domain.ApprovalPrompt{}, nil // the dialog the hook answered, going
	}
	prof, g, perr := x.approvalProfile(t)
	if perr != nil && prof == nil {
		return domain.ApprovalPrompt{}, perr
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return domain.ApprovalPrompt{}, err
	}
	if perr != nil {
		return unanswerablePrompt(t, prof, c, perr), nil
	}
	p, _ := readPrompt(t, prof, g, c)
	fp := ""
	if p.Present {
		fp = p.Fingerprint
	}
	x.showing(t.ID, "prompt", fp)
	return p, nil
}

// readPrompt projects the capture's bottom-most permission prompt. A prompt the
// grammar cannot isolate but the profile's classifier sees is present and
// not answerable.
func readPrompt(t domain.Terminal, prof agent.ApprovalProfile, g agent.ApprovalGrammar, c screen.Capture) (domain.ApprovalPrompt, agent.ApprovalReading) {
	r := g.Read(c)
	if r.Found {
		p := domain.ApprovalPrompt{Present: true, Fingerprint: promptFingerprint(t, prof, r.Region)}
		if !r.Answerable {
			p.Reason = r.Reason
			return p, r
		}
		p.Answerable = true
		p.Kind, p.Tool = r.Shape.Kind, r.Shape.Tool
		p.CommandExcerpt = CommandExcerpt(r.Command)
		if len(r.Command) == 1 {
			p.Command = strings.TrimSpace(r.Command[0])
		}
		p.Decisions = []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject}
		return p, r
	}
	if cl := prof.Classify(c); cl.State == domain.ScreenAwaitingApproval {
		return domain.ApprovalPrompt{
			Present:     true,
			Reason:      "a permission prompt the profile cannot isolate (" + r.Reason + ")",
			Fingerprint: promptFingerprint(t, prof, cl.Region),
		}, r
	}
	return domain.ApprovalPrompt{}, r
}

// promptFingerprint binds the exact prompt region to the pane, the agent process
// incarnation and the profile.
func promptFingerprint(t domain.Terminal, prof agent.Profile, r screen.Region) string {
	return agent.Fingerprint(t, prof.Agent().Profile, "permission", r)
}

// CommandExcerpt is the command's rows, redacted and bounded to MaxExcerpt runes.
// Rows wrapped by the terminal are also redacted joined, so a secret cut in
// two by the wrap is still caught.
func CommandExcerpt(rows []string) string {
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
func (x *Adapter) Answer(ctx context.Context, t domain.Terminal, fp string, d domain.ApprovalDecision) (domain.AnswerStage, error) {
	if d != domain.ApproveOnce && d != domain.Reject {
		return domain.AnswerNothing, fmt.Errorf("%w: %q", domain.ErrDecisionUnavailable, d)
	}
	if strings.HasPrefix(fp, claudehook.FingerprintPrefix) {
		if x.hooks == nil {
			return domain.AnswerNothing, domain.ErrPromptChanged
		}
		return x.answerHook(ctx, t, fp, d)
	}
	prof, g, err := x.approvalProfile(t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	p, r := readPrompt(t, prof, g, c)
	if !p.Present || p.Fingerprint != fp {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	row, ok := r.Row(d)
	if !p.Answerable || !ok {
		return domain.AnswerNothing, fmt.Errorf("%w: %s", domain.ErrDecisionUnavailable, p.Reason)
	}
	err = x.settled(ctx, t, x.cfg.ApprovalSettle, fp, func(c screen.Capture) string {
		again, _ := readPrompt(t, prof, g, c)
		return again.Fingerprint
	})
	if err != nil {
		return domain.AnswerNothing, err
	}
	k := x.keysFor(t)
	switch r.Shape.Keys {
	case agent.KeyRowNumber:
		if err := k.press(ctx, strconv.Itoa(row.Number)); err != nil {
			return k.stage, err
		}
	case agent.KeyNavigate:
		if err := x.navigatePrompt(ctx, t, k, g, r, row); err != nil {
			return k.stage, err
		}
	default:
		return domain.AnswerNothing, fmt.Errorf("%w: the profile has no key plan", domain.ErrDecisionUnavailable)
	}
	if x.promptGone(ctx, t, prof, g, p) {
		return domain.AnswerVerified, nil
	}
	return domain.AnswerSent, errors.New("the keys were sent but the prompt did not go")
}

// navigatePrompt moves the highlight one row at a time to row, proving
// each move by a recapture that shows the same prompt with only the
// highlight moved, then presses Enter. On any surprise it stops; k holds
// what was sent.
func (x *Adapter) navigatePrompt(ctx context.Context, t domain.Terminal, k *keys, g agent.ApprovalGrammar, r agent.ApprovalReading, row agent.Option) error {
	target := row.Number - 1
	for r.Cursor != target {
		key, want := "Down", r.Cursor+1
		if target < r.Cursor {
			key, want = "Up", r.Cursor-1
		}
		if err := k.press(ctx, key); err != nil {
			return err
		}
		next, ok := x.awaitPrompt(ctx, t, g, func(n agent.ApprovalReading) bool { return movedTo(r, n, want) })
		if !ok {
			return errors.New("the highlight did not move as planned; stopped before Enter")
		}
		r = next
	}
	return k.press(ctx, "Enter")
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

// awaitPrompt recaptures until cond holds for the prompt on screen or
// VerifyWithin passes.
func (x *Adapter) awaitPrompt(ctx context.Context, t domain.Terminal, g agent.ApprovalGrammar, cond func(agent.ApprovalReading) bool) (agent.ApprovalReading, bool) {
	var r agent.ApprovalReading
	_, ok := x.until(ctx, t, func(c screen.Capture) bool { r = g.Read(c); return cond(r) })
	return r, ok
}

// promptGone reports whether the answered prompt left the screen: two
// captures in a row without it, within VerifyWithin. Gone: no prompt, or a
// prompt about something else (the next command). The same prompt with its
// highlight moved is not gone: its fingerprint changed, but nothing was
// answered.
func (x *Adapter) promptGone(ctx context.Context, t domain.Terminal, prof agent.ApprovalProfile, g agent.ApprovalGrammar, answered domain.ApprovalPrompt) bool {
	return x.twice(ctx, t, func(c screen.Capture) bool {
		p, _ := readPrompt(t, prof, g, c)
		return !p.Present || p.Kind != answered.Kind || p.Tool != answered.Tool || p.CommandExcerpt != answered.CommandExcerpt
	})
}

// approvalProfile finds the terminal's version profile and its grammar. When the
// version has no grammar of its own (a profile without one, or an unknown
// version read with its neighbour's profile) the error is ErrNoPromptGrammar and
// the profile, if any, is still returned: it may classify, never answer.
func (x *Adapter) approvalProfile(t domain.Terminal) (agent.ApprovalProfile, agent.ApprovalGrammar, error) {
	p, exact, err := x.registry.Find(t)
	if err != nil {
		return nil, agent.ApprovalGrammar{}, fmt.Errorf("%w: %v", ErrNoPromptGrammar, err)
	}
	ap, ok := p.(agent.ApprovalProfile)
	if !ok {
		return nil, agent.ApprovalGrammar{}, fmt.Errorf("%w: %s", ErrNoPromptGrammar, t.Agent.Profile)
	}
	if !exact {
		return ap, agent.ApprovalGrammar{}, fmt.Errorf("%w: %s %s has no profile of its own", ErrNoPromptGrammar, t.Agent.Kind, t.Agent.Version)
	}
	g, ok := ap.ApprovalGrammar()
	if !ok {
		return ap, agent.ApprovalGrammar{}, fmt.Errorf("%w: %s", ErrNoPromptGrammar, t.Agent.Profile)
	}
	return ap, g, nil
}

// unanswerablePrompt is the prompt of a version without a grammar: present when
// the profile's classifier sees one, never answerable.
func unanswerablePrompt(t domain.Terminal, prof agent.ApprovalProfile, c screen.Capture, why error) domain.ApprovalPrompt {
	cl := prof.Classify(c)
	if cl.State != domain.ScreenAwaitingApproval {
		return domain.ApprovalPrompt{}
	}
	return domain.ApprovalPrompt{
		Present:     true,
		Reason:      "AKK answers permission prompts only with a grammar of this exact agent version (" + why.Error() + "); answer it in the pane",
		Fingerprint: promptFingerprint(t, prof, cl.Region),
	}
}
