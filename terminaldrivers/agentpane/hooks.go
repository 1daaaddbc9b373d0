package agentpane

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/agentpane/claudehook"
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
		Decisions: []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject}, Channel: domain.ChannelHook}
	if !strings.Contains(p.Command, "\n") {
		ap.Command = p.Command
	}
	return ap, true
}

// answerHook answers the hook's request fp: the decision is the hook's
// answer, no key is typed. The screen is looked at first: a dialog the
// person already answered in the pane ends the offer, nothing is sent.
func (x *Adapter) answerHook(ctx context.Context, t domain.Terminal, fp string, d domain.ApprovalDecision) (domain.AnswerStage, error) {
	if state, ok := x.rawScreen(ctx, t); ok && !x.hooks.Dialog(fp, state == domain.ScreenAwaitingApproval) {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	dec := claudehook.Allow
	if d == domain.Reject {
		dec = claudehook.Deny
	}
	err := x.hooks.Decide(ctx, fp, dec)
	switch {
	case err == nil:
		return domain.AnswerVerified, nil
	case errors.Is(err, claudehook.ErrGone):
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	return domain.AnswerSent, err
}

// withHook shows a request the hook holds in t's screen state: the prompt
// is there even before (or without) a dialog AKK can read. t's own state
// tells the broker whether Claude Code's dialog is drawn (see Dialog).
func (x *Adapter) withHook(t domain.Terminal) domain.Terminal {
	p, ok := x.hookPrompt(t)
	if !ok {
		return t
	}
	if x.hooks.Dialog(p.Fingerprint, t.ScreenState == domain.ScreenAwaitingApproval) {
		t.ScreenState = domain.ScreenAwaitingApproval
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
