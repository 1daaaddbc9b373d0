package agentpane

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agentpane/claudehook"
	"akk/terminaldrivers/screen"
)

// The exact channels a pane's agent offers besides its screen. Claude
// Code's PermissionRequest hook (package claudehook) is one: while it holds
// a request of a pane's session, that request is the pane's prompt, read
// and answered through the hook whatever the screen shows and whatever
// the version; the screen is the fallback and the person's own way.

// UseClaudeHooks wires Claude Code's hook channel in.
func (x *Adapter) UseClaudeHooks(b *claudehook.Broker) { x.hooks = b }

// BindHookSession finds the listed Claude Code pane whose agent record
// names sessionID (its native identity resolved) and whose transcript is
// transcriptPath's file: exact identity, never the project path alone.
func (x *Adapter) BindHookSession(ctx context.Context, sessionID, transcriptPath string) (claudehook.Binding, bool) {
	if sessionID == "" || filepath.Base(transcriptPath) != sessionID+".jsonl" {
		return claudehook.Binding{}, false
	}
	x.mu.Lock()
	known, ok := x.sessions[sessionID]
	x.mu.Unlock()
	if ok {
		// The pane last seen with this session, looked at again alone: its
		// record must still name the session.
		if t, err := x.Look(ctx, known); err == nil && t.Agent.Kind == domain.AgentClaude &&
			t.NativeIdentity == domain.IdentityResolved && t.NativeThreadID == sessionID {
			return claudehook.Binding{TerminalID: t.ID}, true
		}
	}
	terms, err := x.disc.Discover(ctx)
	if err != nil {
		return claudehook.Binding{}, false
	}
	var found []domain.Terminal
	for _, t := range terms {
		if t.Agent.Kind == domain.AgentClaude && t.NativeIdentity == domain.IdentityResolved && t.NativeThreadID == sessionID {
			found = append(found, t)
		}
	}
	if len(found) != 1 {
		return claudehook.Binding{}, false
	}
	x.remember(found[0])
	return claudehook.Binding{TerminalID: found[0].ID}, true
}

// hookPrompt is the prompt the hook holds for t, if any.
func (x *Adapter) hookPrompt(t domain.Terminal) (domain.ApprovalPrompt, bool) {
	if x.hooks == nil || t.Agent.Kind != domain.AgentClaude || t.NativeIdentity != domain.IdentityResolved {
		return domain.ApprovalPrompt{}, false
	}
	p, ok := x.hooks.Open(t.ID, t.NativeThreadID)
	if !ok {
		return domain.ApprovalPrompt{}, false
	}
	ap := domain.ApprovalPrompt{Present: true, Answerable: true, Kind: "shell_command", Tool: p.Tool,
		CommandExcerpt: CommandExcerpt(strings.Split(p.Command, "\n")), Fingerprint: p.Fingerprint,
		Decisions: []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject}, Channel: domain.ChannelHook,
		// A hook's deny goes back to the model as the tool's result: the
		// agent works on, with no keys and no interrupt.
		Where: "in the pane", Unproven: "the answer to the permission hook could not be written whole; what Claude Code read is unknown"}
	if !strings.Contains(p.Command, "\n") {
		ap.Command = p.Command
	}
	return ap, true
}

// answerHook answers the hook's request fp: the decision is the hook's
// answer, no key is typed. Claude Code draws its own dialog while the hook
// waits, and drops a hook's answer that comes as the dialog is being drawn
// (seen on 2.1.330 and 2.1.332 with an answer 20 to 50 ms after the
// request): so the answer waits until the dialog has held still as long
// as a key would (ApprovalSettle, see settled), and is proven by the
// dialog leaving the screen, as a key's is. A dialog the person already
// answered in the pane ends the offer, nothing is sent. Where no profile
// can classify the screen, the answer goes at once and is taken as
// proven once written whole.
func (x *Adapter) answerHook(ctx context.Context, t domain.Terminal, fp string, d domain.ApprovalDecision) (domain.AnswerStage, error) {
	prof, _, perr := x.registry.Find(t)
	dialog := func(c screen.Capture) string {
		if prof.Classify(c).State == domain.ScreenAwaitingApproval {
			return fp
		}
		return ""
	}
	if perr == nil {
		if _, drawn := x.until(ctx, t, func(c screen.Capture) bool {
			shown := dialog(c) != ""
			return !x.hooks.Dialog(fp, shown) || shown
		}); !drawn {
			return domain.AnswerNothing, fmt.Errorf("%w: Claude Code's dialog was never drawn", domain.ErrPromptChanged)
		}
		if _, ok := x.hooks.Open(t.ID, t.NativeThreadID); !ok {
			return domain.AnswerNothing, domain.ErrPromptChanged // answered in the pane
		}
		if err := x.settled(ctx, t, x.cfg.ApprovalSettle, fp, dialog); err != nil {
			x.hooks.Dialog(fp, false)
			return domain.AnswerNothing, err
		}
	}
	dec := claudehook.Allow
	if d == domain.Reject {
		dec = claudehook.Deny
	}
	// Claude Code takes its dialog away a moment after the hook's answer:
	// until then the screen's dialog is the one answered. Marked before
	// the answer goes: the broker forgets the request as it answers, and a
	// look in between (no request open, the dialog still drawn) would take
	// the dialog for a new prompt and announce it again.
	x.mu.Lock()
	x.answered[t.ID] = hookAnswer{fp: fp, until: x.now().Add(answeredLinger)}
	x.mu.Unlock()
	err := x.hooks.Decide(ctx, fp, dec)
	if errors.Is(err, claudehook.ErrGone) {
		x.mu.Lock()
		if x.answered[t.ID].fp == fp {
			delete(x.answered, t.ID) // nothing was answered
		}
		x.mu.Unlock()
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	if err != nil {
		return domain.AnswerSent, err
	}
	// The answered dialog is gone when no dialog shows, or when the hook
	// holds Claude Code's next request (it asks again only once the one
	// answered is settled): a classified screen cannot tell one dialog
	// from the next one's, drawn at once on a fast model.
	gone := func(c screen.Capture) bool {
		if dialog(c) == "" {
			return true
		}
		next, ok := x.hooks.Open(t.ID, t.NativeThreadID)
		return ok && next.Fingerprint != fp
	}
	if perr == nil && !x.twice(ctx, t, gone) {
		return domain.AnswerSent, errors.New("the hook's answer was written but Claude Code's dialog did not go")
	}
	return domain.AnswerVerified, nil
}

// withHook shows a request the hook holds in t's screen state: the prompt
// is there even before (or without) a dialog AKK can read. t's own state
// tells the broker whether Claude Code's dialog is drawn (see Dialog).
// A dialog still drawn after the hook answered the request before is that
// request's, being taken away, not the open one's: it does not count as
// the open request's dialog (had it counted, the next look, with the old
// dialog gone and the new one not yet drawn, would end the open request as
// answered in the pane).
func (x *Adapter) withHook(t domain.Terminal) domain.Terminal {
	p, ok := x.hookPrompt(t)
	lingers := x.lingering(t.ID, p.Fingerprint, t.ScreenState == domain.ScreenAwaitingApproval)
	if !ok {
		if lingers {
			t.ScreenState = domain.ScreenWorking
		}
		return t
	}
	shown := t.ScreenState == domain.ScreenAwaitingApproval && !lingers
	if shown {
		x.showing(t.ID, "hook", p.Fingerprint) // its settle counts from the first look that saw the dialog
	} else {
		x.showing(t.ID, "hook", "")
	}
	if x.hooks.Dialog(p.Fingerprint, shown) {
		t.ScreenState, t.ExactPrompt = domain.ScreenAwaitingApproval, true
	}
	return t
}

// rawScreen classifies t's screen now with its (possibly borrowed)
// profile; ok is false when nothing can classify it.
func (x *Adapter) rawScreen(ctx context.Context, t domain.Terminal) (domain.ScreenState, bool) {
	p, _, err := x.registry.Find(t)
	if err != nil {
		return "", false
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return "", false
	}
	return p.Classify(c).State, true
}

// Channels is how AKK would answer what t's agent asks: through an exact
// channel that is live for it, else its screen where its version has a
// profile of its own, else not at all.
func (x *Adapter) Channels(t domain.Terminal) domain.TerminalChannels {
	screen := domain.ChannelNone
	if t.Agent.Profiled() && !t.Agent.Compatibility {
		screen = domain.ChannelScreen
	}
	ch := domain.TerminalChannels{Permission: screen, Question: screen}
	if x.hooks != nil && t.Agent.Kind == domain.AgentClaude && t.NativeIdentity == domain.IdentityResolved && x.hooks.Live(t.NativeThreadID) {
		ch.Permission = domain.ChannelHook
	}
	return ch
}

// answeredLinger bounds how long a dialog still drawn after the hook's
// answer is taken for the answered one.
const answeredLinger = 3 * time.Second

// lingering reports whether a dialog on t's screen (shown) is the one the
// hook answered (or is answering), still being taken away, while open is
// the request the hook holds now ("" none): the one being answered is
// still its own. A look without a dialog ends it.
func (x *Adapter) lingering(terminalID, open string, shown bool) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	a, ok := x.answered[terminalID]
	if !ok {
		return false
	}
	if !shown || !x.now().Before(a.until) {
		delete(x.answered, terminalID)
		return false
	}
	return open == "" || open != a.fp
}
