package agentpane

import (
	"context"
	"errors"
	"fmt"

	"akk/domain"
	"akk/terminaldrivers/tmux"
)

// ErrNotClearable: the composer's draft is not one the profile's clear key
// empties in one press (a Codex draft of more than one row); nothing was
// sent.
var ErrNotClearable = errors.New("the composer's draft cannot be cleared with one key")

// ErrNotCleared: the clear key was pressed but the composer did not read
// empty within the bound; nothing more was sent.
var ErrNotCleared = errors.New("the composer is not proven empty after the clear key")

// ClearComposer implements domain.ComposerClearer: the user-explicit send's
// one clear. The screen is captured again right before the key: it must be
// the idle composer holding a draft (a key on an empty Claude Code
// composer would pop its stash instead), of at most the profile's
// ClearRows rows. The key is pressed once; then the composer is read until
// it is empty, up to VerifyWithin. Nothing is retried.
func (x *Adapter) ClearComposer(ctx context.Context, t domain.Terminal) (bool, error) {
	prof, err := x.turnProfile(t)
	if err != nil {
		return false, err
	}
	rules := prof.TurnRules()
	if rules.ClearKey == "" {
		return false, fmt.Errorf("%w: %s %s has no clear key", ErrNotClearable, t.Agent.Kind, t.Agent.Version)
	}
	if _, err := x.process(t); err != nil {
		return false, err
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return false, fmt.Errorf("capture %s: %w", t.Pane.PaneID, err)
	}
	r := prof.Classify(c)
	rows, ok := prof.ComposerText(c)
	switch {
	case r.State != domain.ScreenIdle || !ok:
		return false, fmt.Errorf("%w: screen %s (%s)", ErrNotReady, r.State, r.Reason)
	case r.ComposerEmpty:
		return false, fmt.Errorf("%w: the composer is already empty", ErrNotReady)
	case rules.ClearRows > 0 && len(rows) > rules.ClearRows:
		return false, fmt.Errorf("%w: a draft of %d rows; %s empties %d", ErrNotClearable, len(rows), rules.ClearKey, rules.ClearRows)
	}
	srv := tmux.Server{Socket: t.Pane.Socket, Runner: x.tmux}
	if err := srv.SendKeys(ctx, t.Pane.PaneID, rules.ClearKey); err != nil {
		return true, err // it may have reached the pane
	}
	deadline := x.now().Add(rules.VerifyWithin)
	last := ""
	for {
		if err := x.sleep(ctx, x.poll); err != nil {
			return true, err
		}
		c, err := x.capture(ctx, t)
		if err != nil {
			return true, err
		}
		r := prof.Classify(c)
		rows, ok := prof.ComposerText(c)
		if r.State == domain.ScreenIdle && ok && r.ComposerEmpty {
			return true, nil
		}
		last = fmt.Sprintf("screen %s, %d composer rows", r.State, len(rows))
		if !x.now().Before(deadline) {
			return true, fmt.Errorf("%w: %s", ErrNotCleared, last)
		}
	}
}
