package agentpane

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

var _ domain.PermissionControls = (*Adapter)(nil)

func (x *Adapter) permissionPlan(t domain.Terminal) (agent.NativeProfile, *agent.PermissionPlan, error) {
	prof, rules, err := x.nativeProfile(t)
	if err != nil {
		return nil, nil, err
	}
	if rules.Permissions == nil {
		return nil, nil, fmt.Errorf("%w: %s %s has no permission plan", domain.ErrNativeUnsupported, t.Agent.Kind, t.Agent.Version)
	}
	return prof, rules.Permissions, nil
}

// modeID is the semantic id of a label the profile does not name: its
// words in lower case joined by "_".
func modeID(plan *agent.PermissionPlan, label string) string {
	if m, ok := plan.ModeOf(label); ok {
		return m.Mode
	}
	f := strings.FieldsFunc(strings.ToLower(label), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return strings.Join(f, "_")
}

func menuState(plan *agent.PermissionPlan, m agent.PermissionMenu) domain.PermissionState {
	st := domain.PermissionState{Current: modeID(plan, m.Labels[m.Current])}
	for _, l := range m.Labels {
		st.Modes = append(st.Modes, domain.PermissionMode{Mode: modeID(plan, l), Label: l})
	}
	return st
}

// Permissions implements domain.PermissionControls. A cycling profile
// reads the mode from the idle screen (no key); a menu profile opens its
// menu once, reads it whole on two captures, closes it with Escape and
// proves the idle empty composer again.
func (x *Adapter) Permissions(ctx context.Context, t domain.Terminal) (domain.PermissionState, domain.AnswerStage, error) {
	prof, plan, err := x.permissionPlan(t)
	if err != nil {
		return domain.PermissionState{}, domain.AnswerNothing, err
	}
	if plan.Cycle {
		c, err := x.capture(ctx, t)
		if err != nil {
			return domain.PermissionState{}, domain.AnswerNothing, err
		}
		cur, ok := plan.Current(c)
		if !ok || !idleEmpty(prof, c) {
			return domain.PermissionState{}, domain.AnswerNothing, fmt.Errorf("%w: the permission mode is not readable on the idle screen", ErrNotReady)
		}
		st := domain.PermissionState{Current: cur}
		for _, m := range plan.Modes {
			st.Modes = append(st.Modes, domain.PermissionMode{Mode: m.Mode, Label: m.Label})
		}
		return st, domain.AnswerNothing, nil
	}
	m, k, err := x.openPermissionMenu(ctx, t, prof, plan)
	if err == nil {
		err = domain.FailError("permissions.opened")
	}
	if err == nil {
		err = x.closeMenu(ctx, t, prof, k)
	}
	if err != nil {
		return domain.PermissionState{}, k.stage, x.backOut(ctx, t, prof, k, 1, nil, err)
	}
	return menuState(plan, m), domain.AnswerVerified, nil
}

// openPermissionMenu runs the menu command and reads the menu on two
// captures in a row.
func (x *Adapter) openPermissionMenu(ctx context.Context, t domain.Terminal, prof agent.NativeProfile, plan *agent.PermissionPlan) (agent.PermissionMenu, *keys, error) {
	k, err := x.runCommand(ctx, t, prof, *plan.Menu, "", false)
	if err != nil {
		return agent.PermissionMenu{}, k, err
	}
	m, ok := x.stableMenu(ctx, t, plan)
	if !ok {
		return agent.PermissionMenu{}, k, errors.New("the permission menu did not appear whole")
	}
	return m, k, nil
}

// stableMenu reads the menu until two captures in a row agree.
func (x *Adapter) stableMenu(ctx context.Context, t domain.Terminal, plan *agent.PermissionPlan) (agent.PermissionMenu, bool) {
	return x.stableMenuWhere(ctx, t, plan, func(agent.PermissionMenu) bool { return true })
}

// stableMenuWhere reads the menu until two captures in a row agree and
// accept holds for it, within VerifyWithin: after a key, the menu as the
// key left it, not the one drawn before the agent read the key (which
// would also read the same twice on a busy machine).
func (x *Adapter) stableMenuWhere(ctx context.Context, t domain.Terminal, plan *agent.PermissionPlan, accept func(agent.PermissionMenu) bool) (agent.PermissionMenu, bool) {
	var last agent.PermissionMenu
	streak := 0
	_, ok := x.until(ctx, t, func(c screen.Capture) bool {
		m, ok := plan.ReadMenu(c)
		if !ok || !accept(m) || (streak > 0 && !sameMenu(m, last)) {
			streak = 0
			return false
		}
		last = m
		streak++
		return streak == 2
	})
	return last, ok
}

func sameMenu(a, b agent.PermissionMenu) bool {
	if a.Selected != b.Selected || a.Current != b.Current || a.Above != b.Above || a.Below != b.Below || len(a.Labels) != len(b.Labels) {
		return false
	}
	for i := range a.Labels {
		if a.Labels[i] != b.Labels[i] {
			return false
		}
	}
	return true
}

// closeMenu presses Escape and proves the idle empty composer.
func (x *Adapter) closeMenu(ctx context.Context, t domain.Terminal, prof agent.NativeProfile, k *keys) error {
	if err := k.press(ctx, "Escape"); err != nil {
		return err
	}
	if !x.twice(ctx, t, func(c screen.Capture) bool { return idleEmpty(prof, c) }) {
		return errors.New("the pane did not return to its idle empty composer after the menu")
	}
	return nil
}

// SetPermissions implements domain.PermissionControls. A cycling profile
// presses its cycle key once at a time, each press proven to show another
// known mode, until mode shows (back at the start: domain.ErrModeUnavailable). A
// menu profile opens its menu, moves the selection one proven row at a
// time, presses Enter once, confirms a mode that asks (its confirming
// option proven selected), then opens the menu again to read the mode
// back and closes it.
func (x *Adapter) SetPermissions(ctx context.Context, t domain.Terminal, mode string) (domain.PermissionState, domain.AnswerStage, error) {
	prof, plan, err := x.permissionPlan(t)
	if err != nil {
		return domain.PermissionState{}, domain.AnswerNothing, err
	}
	if plan.Cycle {
		return x.cycleTo(ctx, t, prof, plan, mode)
	}
	m, k, err := x.openPermissionMenu(ctx, t, prof, plan)
	if err == nil {
		err = domain.FailError("set_permissions.opened")
	}
	if err != nil {
		return domain.PermissionState{}, k.stage, x.backOut(ctx, t, prof, k, 1, nil, err)
	}
	target := -1
	for i, l := range m.Labels {
		if modeID(plan, l) == mode {
			target = i
		}
	}
	if target < 0 {
		if err := x.closeMenu(ctx, t, prof, k); err != nil {
			return domain.PermissionState{}, k.stage, err
		}
		return domain.PermissionState{}, k.stage, domain.ErrModeUnavailable
	}
	for m.Selected != target {
		key, want := "Down", m.Selected+1
		if target < m.Selected {
			key, want = "Up", m.Selected-1
		}
		if err := k.press(ctx, key); err != nil {
			return domain.PermissionState{}, k.stage, x.backOut(ctx, t, prof, k, 1, nil, err)
		}
		n, ok := x.stableMenuWhere(ctx, t, plan, func(n agent.PermissionMenu) bool { return n.Selected == want && sameLabels(n, m) })
		if !ok {
			err := fmt.Errorf("the menu's selection did not move to row %d; no Enter was pressed", want+1)
			return domain.PermissionState{}, k.stage, x.backOut(ctx, t, prof, k, 1, nil, err)
		}
		m = n
	}
	if err := k.press(ctx, "Enter"); err != nil {
		return domain.PermissionState{}, k.stage, err
	}
	if pm, ok := plan.ModeOf(m.Labels[target]); ok && pm.Confirm {
		if !x.twice(ctx, t, plan.ReadConfirm) {
			return domain.PermissionState{}, k.stage, errors.New("the confirmation of " + m.Labels[target] + " did not appear with its confirming option selected")
		}
		if err := k.press(ctx, "Enter"); err != nil {
			return domain.PermissionState{}, k.stage, err
		}
	}
	if !x.twice(ctx, t, func(c screen.Capture) bool { return idleEmpty(prof, c) }) {
		return domain.PermissionState{}, k.stage, errors.New("the pane did not return to its idle empty composer after the choice")
	}
	// Read it back from the menu itself.
	t2, err := x.Observe(ctx, t.ID)
	if err != nil {
		return domain.PermissionState{}, k.stage, err
	}
	back, k2, err := x.openPermissionMenu(ctx, t2, prof, plan)
	if err == nil {
		err = x.closeMenu(ctx, t2, prof, k2)
	}
	if err != nil {
		// The choice was made: the answer stays uncertain, with the menu
		// opened to read it back closed if that can be proven.
		if berr := x.backOut(ctx, t2, prof, k2, 1, nil, err); !errors.Is(berr, domain.ErrBackedOut) {
			err = berr
		}
		return domain.PermissionState{}, domain.AnswerSent, err
	}
	return menuState(plan, back), domain.AnswerVerified, nil
}

func sameLabels(a, b agent.PermissionMenu) bool {
	a.Selected, b.Selected = 0, 0
	return sameMenu(a, b)
}

// cycleTo presses the cycle key until mode shows.
func (x *Adapter) cycleTo(ctx context.Context, t domain.Terminal, prof agent.NativeProfile, plan *agent.PermissionPlan, mode string) (domain.PermissionState, domain.AnswerStage, error) {
	k := x.keysFor(t)
	read := func(c screen.Capture) (string, bool) {
		cur, ok := plan.Current(c)
		return cur, ok && idleEmpty(prof, c)
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return domain.PermissionState{}, domain.AnswerNothing, err
	}
	start, ok := read(c)
	if !ok {
		return domain.PermissionState{}, domain.AnswerNothing, fmt.Errorf("%w: the permission mode is not readable on the idle screen", ErrNotReady)
	}
	cur := start
	for range len(plan.Modes) + 1 {
		if err := k.press(ctx, plan.CycleKey); err != nil {
			return domain.PermissionState{}, k.stage, err
		}
		prev := cur
		// The footer must show another mode, the same on two captures.
		streak, seen := 0, ""
		_, ok := x.until(ctx, t, func(c screen.Capture) bool {
			m, ok := read(c)
			if !ok || m == prev || (streak > 0 && m != seen) {
				streak = 0
				return false
			}
			seen = m
			streak++
			return streak == 2
		})
		if !ok {
			return domain.PermissionState{}, k.stage, fmt.Errorf("the mode did not change from %s after %s", prev, plan.CycleKey)
		}
		cur = seen
		if cur == mode {
			st := domain.PermissionState{Current: cur}
			for _, m := range plan.Modes {
				st.Modes = append(st.Modes, domain.PermissionMode{Mode: m.Mode, Label: m.Label})
			}
			return st, domain.AnswerVerified, nil
		}
		if cur == start {
			return domain.PermissionState{}, domain.AnswerVerified, domain.ErrModeUnavailable
		}
	}
	return domain.PermissionState{}, k.stage, fmt.Errorf("the mode never reached %s", mode)
}
