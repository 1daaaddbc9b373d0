package agentpane

import (
	"context"
	"errors"
	"fmt"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// The native controls (domain.NativeControls): closed slash-command plans
// of the profile, each typed into an idle, empty composer that is proven
// again right before the first key, the composer and its command menu
// proven to hold exactly the command before Enter, pressed once. Nothing
// is retried; a plan that sent keys and could not prove its end is
// AnswerSent (the domain reports it uncertain, do_not_retry).

func (x *Adapter) nativeProfile(t domain.Terminal) (agent.NativeProfile, agent.NativeRules, error) {
	if t.Agent.Compatibility {
		return nil, agent.NativeRules{}, fmt.Errorf("%w: %s %s is read with a neighbour's profile", domain.ErrNativeUnsupported, t.Agent.Kind, t.Agent.Version)
	}
	tp, err := x.turnProfile(t)
	if err != nil {
		return nil, agent.NativeRules{}, err
	}
	np, ok := tp.(agent.NativeProfile)
	if !ok {
		return nil, agent.NativeRules{}, fmt.Errorf("%w: %s %s", domain.ErrNativeUnsupported, t.Agent.Kind, t.Agent.Version)
	}
	return np, np.NativeRules(), nil
}

// idleEmpty reports whether c shows prof's idle screen with a proven empty
// composer.
func idleEmpty(prof agent.NativeProfile, c screen.Capture) bool { return emptyComposer(prof, c, false) }

// emptyComposer reports whether c shows a proven empty composer on prof's
// idle screen, or (working) on its idle or working screen.
func emptyComposer(prof agent.NativeProfile, c screen.Capture, working bool) bool {
	r := prof.Classify(c)
	rows, ok := prof.ComposerText(c)
	state := r.State == domain.ScreenIdle || (working && r.State == domain.ScreenWorking)
	return state && r.ComposerEmpty && ok && len(rows) == 0
}

// runCommand types plan's command (with arg after a space, when given)
// and presses Enter once. The returned keys say how far it got.
func (x *Adapter) runCommand(ctx context.Context, t domain.Terminal, prof agent.NativeProfile, plan agent.CommandPlan, arg string, working bool) (*keys, error) {
	k := x.keysFor(t)
	return k, x.runCommandOn(ctx, t, prof, plan, arg, working, k)
}

// runCommandOn is runCommand on keys k.
func (x *Adapter) runCommandOn(ctx context.Context, t domain.Terminal, prof agent.NativeProfile, plan agent.CommandPlan, arg string, working bool, k *keys) error {
	typed := plan.Command
	if arg != "" {
		typed += " " + arg
	}
	if plan.MinWidth > 0 && t.Width < plan.MinWidth {
		return fmt.Errorf("%w: the pane is %d columns wide; %s needs %d to show its result whole", domain.ErrNativeUnsupported, t.Width, plan.Command, plan.MinWidth)
	}
	if _, err := x.process(t); err != nil {
		return err
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return fmt.Errorf("capture %s: %w", t.Pane.PaneID, err)
	}
	if !emptyComposer(prof, c, working) {
		r := prof.Classify(c)
		return fmt.Errorf("%w: screen %s (%s), composer empty %v", ErrNotReady, r.State, r.Reason, r.ComposerEmpty)
	}
	if err := k.typeText(ctx, typed); err != nil {
		return err
	}
	// The menu must show the command selected on two captures in a row:
	// one capture may catch the menu mid-filter.
	if !x.twice(ctx, t, func(c screen.Capture) bool { return plan.Menu(c, typed) }) {
		return fmt.Errorf("the composer and its menu never showed exactly %s selected; Enter was not pressed", plan.Command)
	}
	err = k.press(ctx, "Enter")
	k.opened = true // even a failed press may have gone out
	return err
}

// backOut leaves the pane as a control found it, after the control opened
// a native surface and then could not prove the next frame: Escape, at most
// depth times, until the idle empty composer shows on two captures. The
// first Escape is pressed when the pane does not show that composer (the
// control just opened something); a further one only while open says the
// control's own surface is still drawn (a second Escape on an idle
// composer would open Claude Code's rewind menu or Codex's backtrack).
// Proven back, the cause is returned wrapped in domain.ErrBackedOut
// (nothing changed; the answer is manual_required); otherwise the cause
// with why backing out failed (uncertain, and the list offers the repair
// for what stays open).
func (x *Adapter) backOut(ctx context.Context, t domain.Terminal, prof agent.NativeProfile, k *keys, depth int, open func(screen.Capture) bool, cause error) error {
	if !k.opened {
		return cause
	}
	back := func(c screen.Capture) bool { return idleEmpty(prof, c) }
	failed := func(why string) error {
		return fmt.Errorf("%v; backing out was not proven: %s", cause, why)
	}
	for i := 0; ; i++ {
		c, err := x.capture(ctx, t)
		if err != nil {
			return failed(err.Error())
		}
		if back(c) {
			if x.twice(ctx, t, back) {
				return fmt.Errorf("%w (%v)", domain.ErrBackedOut, cause)
			}
			return failed("the idle empty composer did not hold")
		}
		if i == depth || (i > 0 && (open == nil || !open(c))) {
			return failed("the pane did not show its idle empty composer")
		}
		if err := k.press(ctx, "Escape"); err != nil {
			return failed(err.Error())
		}
		x.until(ctx, t, back)
	}
}

// StatusCard implements domain.NativeControls: the profile's status
// command once, its view read whole, the pane back on its idle empty
// composer (a panel closed with its dismiss key first).
func (x *Adapter) StatusCard(ctx context.Context, t domain.Terminal) (domain.NativeStatus, domain.AnswerStage, error) {
	return x.statusCard(ctx, t, false)
}

// WorkingStatusCard implements domain.NativeControls: StatusCard on a
// working pane with an empty composer, for a profile whose status view is
// printed into the transcript (a panel would cover the running task). The
// card may sit above the task's live output; its freshness is the count.
func (x *Adapter) WorkingStatusCard(ctx context.Context, t domain.Terminal) (domain.NativeStatus, domain.AnswerStage, error) {
	return x.statusCard(ctx, t, true)
}

func (x *Adapter) statusCard(ctx context.Context, t domain.Terminal, working bool) (domain.NativeStatus, domain.AnswerStage, error) {
	prof, rules, err := x.nativeProfile(t)
	if err != nil {
		return domain.NativeStatus{}, domain.AnswerNothing, err
	}
	plan := rules.Status
	if plan == nil {
		return domain.NativeStatus{}, domain.AnswerNothing, fmt.Errorf("%w: %s %s has no status plan", domain.ErrNativeUnsupported, t.Agent.Kind, t.Agent.Version)
	}
	if working && (!plan.Inline || plan.ReadAnywhere == nil) {
		return domain.NativeStatus{}, domain.AnswerNothing, fmt.Errorf("%w: %s %s has no status card to read while working", domain.ErrNativeUnsupported, t.Agent.Kind, t.Agent.Version)
	}
	read := plan.Read
	if working {
		read = plan.ReadAnywhere
	}
	k, err := x.runCommand(ctx, t, prof, plan.CommandPlan, "", working)
	if err != nil {
		return domain.NativeStatus{}, k.stage, err
	}
	// A card printed into the transcript is fresh when Enter was taken by
	// the command (the composer that held exactly it is empty now) and the
	// card is where only this command can have put it (Read: the last
	// thing above the composer; ReadAnywhere: after the last prompt), the
	// same on two captures in a row. A panel is fresh by being open.
	var card agent.StatusCard
	streak := 0
	fresh := func(c screen.Capture) bool {
		got, ok := read(c)
		if ok && plan.Inline && !emptyComposer(prof, c, working) {
			ok = false
		}
		if !ok || (streak > 0 && got != card) {
			streak = 0
			return false
		}
		card = got
		streak++
		return streak == 2
	}
	_, ok := x.until(ctx, t, fresh)
	if err := domain.FailError("status.opened"); err != nil || !ok {
		if err == nil {
			err = errors.New("no fresh status view appeared")
		}
		if working {
			return domain.NativeStatus{}, k.stage, err // Escape would interrupt the task
		}
		return domain.NativeStatus{}, k.stage, x.backOut(ctx, t, prof, k, 1, nil, err)
	}
	if plan.Dismiss != "" {
		if err := k.press(ctx, plan.Dismiss); err != nil {
			return domain.NativeStatus{}, k.stage, err
		}
	}
	if !x.twice(ctx, t, func(c screen.Capture) bool { return emptyComposer(prof, c, working) }) {
		return card.Domain(), k.stage, errors.New("the pane did not return to its empty composer")
	}
	return card.Domain(), domain.AnswerVerified, nil
}

// NewThread implements domain.NativeControls: the profile's new-thread
// command once, then the idle empty composer proven on two captures.
func (x *Adapter) NewThread(ctx context.Context, t domain.Terminal) (domain.AnswerStage, error) {
	prof, rules, err := x.nativeProfile(t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	if rules.NewThread == nil {
		return domain.AnswerNothing, fmt.Errorf("%w: %s %s has no new-thread plan", domain.ErrNativeUnsupported, t.Agent.Kind, t.Agent.Version)
	}
	return x.commandToIdle(ctx, t, prof, *rules.NewThread, "")
}

// commandToIdle runs plan once and proves the idle empty composer after
// it on two captures.
func (x *Adapter) commandToIdle(ctx context.Context, t domain.Terminal, prof agent.NativeProfile, plan agent.CommandPlan, arg string) (domain.AnswerStage, error) {
	k, err := x.runCommand(ctx, t, prof, plan, arg, false)
	if err != nil {
		return k.stage, err
	}
	if !x.twice(ctx, t, func(c screen.Capture) bool { return idleEmpty(prof, c) }) {
		return k.stage, fmt.Errorf("the pane did not show an idle empty composer after %s", plan.Command)
	}
	return domain.AnswerVerified, nil
}

// ResumeThread implements domain.NativeControls: the profile's resume
// command with the thread's complete id, once, then the idle empty
// composer proven on two captures.
func (x *Adapter) ResumeThread(ctx context.Context, t domain.Terminal, threadID string) (domain.AnswerStage, error) {
	prof, rules, err := x.nativeProfile(t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	if rules.Resume == nil {
		return domain.AnswerNothing, fmt.Errorf("%w: %s %s has no resume plan", domain.ErrNativeUnsupported, t.Agent.Kind, t.Agent.Version)
	}
	if !agent.IsUUID(threadID) {
		return domain.AnswerNothing, fmt.Errorf("%w: %q is not a complete thread id", domain.ErrNativeUnsupported, threadID)
	}
	return x.commandToIdle(ctx, t, prof, *rules.Resume, threadID)
}
