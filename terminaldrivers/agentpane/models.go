package agentpane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

var _ domain.ModelControls = (*Adapter)(nil)

func (x *Adapter) modelPlan(t domain.Terminal) (agent.NativeProfile, *agent.ModelPlan, error) {
	prof, rules, err := x.nativeProfile(t)
	if err != nil {
		return nil, nil, err
	}
	if rules.Models == nil {
		return nil, nil, fmt.Errorf("%w: %s %s has no model plan", domain.ErrNativeUnsupported, t.Agent.Kind, t.Agent.Version)
	}
	return prof, rules.Models, nil
}

// stable reads with read until two captures in a row agree.
func (x *Adapter) stable(ctx context.Context, t domain.Terminal, read func(screen.Capture) (agent.PermissionMenu, bool)) (agent.PermissionMenu, bool) {
	return x.stableMenu(ctx, t, &agent.PermissionPlan{ReadMenu: read})
}

// stableEffort reads the slider's effort until two captures agree and
// accept holds for it.
func (x *Adapter) stableEffort(ctx context.Context, t domain.Terminal, plan *agent.ModelPlan, accept func(string) bool) (string, bool) {
	streak, last := 0, ""
	_, ok := x.until(ctx, t, func(c screen.Capture) bool {
		e, ok := plan.ReadEffort(c)
		if !ok || !accept(e) || (streak > 0 && e != last) {
			streak = 0
			return false
		}
		last = e
		streak++
		return streak == 2
	})
	return last, ok
}

// defaultEffort is the id of the option marked "(default)".
func effortIDs(m agent.PermissionMenu) (ids []string, def string) {
	for _, l := range m.Labels {
		id := agent.LabelID(l)
		if strings.Contains(l, "(default)") {
			def = id
		}
		ids = append(ids, id)
	}
	return ids, def
}

// Models implements domain.ModelControls: the model command once, the
// menu read whole (Codex: Enter on the model in effect opens its effort
// menu, read too, then Escape back), Escape, the idle empty composer
// proven again.
func (x *Adapter) Models(ctx context.Context, t domain.Terminal) (domain.ModelState, domain.AnswerStage, error) {
	prof, plan, err := x.modelPlan(t)
	if err != nil {
		return domain.ModelState{}, domain.AnswerNothing, err
	}
	idleEffort := ""
	if plan.CurrentEffort != nil {
		c, err := x.capture(ctx, t)
		if err != nil {
			return domain.ModelState{}, domain.AnswerNothing, err
		}
		var ok bool
		if idleEffort, ok = plan.CurrentEffort(c); !ok {
			return domain.ModelState{}, domain.AnswerNothing, fmt.Errorf("%w: the effort in effect is not readable on the idle screen", ErrNotReady)
		}
	}
	k, err := x.runCommand(ctx, t, prof, *plan.Command, "", false)
	if err != nil {
		return domain.ModelState{}, k.stage, err
	}
	m, ok := x.stable(ctx, t, plan.ReadModels)
	if !ok {
		return domain.ModelState{}, k.stage, errors.New("the model menu did not appear whole")
	}
	st := domain.ModelState{Model: agent.LabelID(m.Labels[m.Selected]), Scope: plan.Scope}
	var efforts []string
	if plan.ReadEffort != nil {
		e, ok := x.stableEffort(ctx, t, plan, func(string) bool { return true })
		if ok {
			st.Effort, efforts = e, plan.Efforts
		}
	} else {
		if m.Current != m.Selected {
			return domain.ModelState{}, k.stage, errors.New("the model menu does not select the model in effect")
		}
		if err := k.press(ctx, "Enter"); err != nil {
			return domain.ModelState{}, k.stage, err
		}
		em, ok := x.stable(ctx, t, plan.ReadEffortMenu)
		if !ok {
			return domain.ModelState{}, k.stage, errors.New("the effort menu did not appear whole")
		}
		var def string
		efforts, def = effortIDs(em)
		st.Effort = idleEffort
		if st.Effort == "" {
			st.Effort = def
		}
		if err := k.press(ctx, "Escape"); err != nil {
			return domain.ModelState{}, k.stage, err
		}
		if _, ok := x.stable(ctx, t, plan.ReadModels); !ok {
			return domain.ModelState{}, k.stage, errors.New("Escape did not go back to the model menu")
		}
	}
	for i, l := range m.Labels {
		o := domain.ModelOption{Model: agent.LabelID(l), Label: strings.TrimSpace(strings.TrimSuffix(l, "✔"))}
		if i == m.Selected {
			o.Efforts = efforts
		}
		st.Models = append(st.Models, o)
	}
	if err := x.closeMenu(ctx, t, prof, k); err != nil {
		return domain.ModelState{}, k.stage, err
	}
	return st, domain.AnswerVerified, nil
}

// SetModel implements domain.ModelControls for the model in effect: the
// effort moved one proven step at a time (Claude Code's slider, then its
// session-only key; Codex's effort menu, then Enter), the idle empty
// composer proven, and the effort read back.
func (x *Adapter) SetModel(ctx context.Context, t domain.Terminal, model, effort string) (domain.ModelState, domain.AnswerStage, error) {
	prof, plan, err := x.modelPlan(t)
	if err != nil {
		return domain.ModelState{}, domain.AnswerNothing, err
	}
	k, err := x.runCommand(ctx, t, prof, *plan.Command, "", false)
	if err != nil {
		return domain.ModelState{}, k.stage, err
	}
	m, ok := x.stable(ctx, t, plan.ReadModels)
	if !ok || agent.LabelID(m.Labels[m.Selected]) != model {
		x.closeMenu(ctx, t, prof, k)
		return domain.ModelState{}, k.stage, fmt.Errorf("the model menu does not select %s", model)
	}
	if plan.ReadEffort != nil {
		cur, ok := x.stableEffort(ctx, t, plan, func(string) bool { return true })
		from, to := slices.Index(plan.Efforts, cur), slices.Index(plan.Efforts, effort)
		if !ok || from < 0 || to < 0 {
			x.closeMenu(ctx, t, prof, k)
			return domain.ModelState{}, k.stage, fmt.Errorf("the effort slider does not read as one of %v", plan.Efforts)
		}
		for from != to {
			key, next := plan.EffortMore, from+1
			if to < from {
				key, next = plan.EffortLess, from-1
			}
			if err := k.press(ctx, key); err != nil {
				return domain.ModelState{}, k.stage, err
			}
			want := plan.Efforts[next]
			if _, ok := x.stableEffort(ctx, t, plan, func(e string) bool { return e == want }); !ok {
				return domain.ModelState{}, k.stage, fmt.Errorf("the effort did not move to %s; nothing was applied", want)
			}
			from = next
		}
		if err := k.press(ctx, plan.ApplyKey); err != nil {
			return domain.ModelState{}, k.stage, err
		}
		if !x.twice(ctx, t, func(c screen.Capture) bool { return idleEmpty(prof, c) }) {
			return domain.ModelState{}, k.stage, errors.New("the pane did not return to its idle empty composer")
		}
		// Read it back from the model screen.
		st, stage, err := x.Models(ctx, t)
		if err != nil || stage != domain.AnswerVerified {
			return domain.ModelState{}, domain.AnswerSent, fmt.Errorf("reading the effort back: %v", err)
		}
		return st, domain.AnswerVerified, nil
	}
	if m.Current != m.Selected {
		x.closeMenu(ctx, t, prof, k)
		return domain.ModelState{}, k.stage, errors.New("the model menu does not select the model in effect")
	}
	if err := k.press(ctx, "Enter"); err != nil {
		return domain.ModelState{}, k.stage, err
	}
	em, ok := x.stable(ctx, t, plan.ReadEffortMenu)
	ids, _ := effortIDs(em)
	to := slices.Index(ids, effort)
	if !ok || to < 0 {
		return domain.ModelState{}, k.stage, fmt.Errorf("the effort menu does not offer %s", effort)
	}
	for em.Selected != to {
		key, want := "Down", em.Selected+1
		if to < em.Selected {
			key, want = "Up", em.Selected-1
		}
		if err := k.press(ctx, key); err != nil {
			return domain.ModelState{}, k.stage, err
		}
		n, ok := x.stable(ctx, t, plan.ReadEffortMenu)
		if !ok || n.Selected != want || !sameLabels(n, em) {
			return domain.ModelState{}, k.stage, fmt.Errorf("the effort menu's selection did not move to row %d; no Enter was pressed", want+1)
		}
		em = n
	}
	if err := k.press(ctx, "Enter"); err != nil {
		return domain.ModelState{}, k.stage, err
	}
	var back string
	if !x.twice(ctx, t, func(c screen.Capture) bool {
		e, ok := plan.CurrentEffort(c)
		back = e
		return ok && idleEmpty(prof, c)
	}) {
		return domain.ModelState{}, k.stage, errors.New("the pane did not return to its idle empty composer")
	}
	if back == "" {
		_, back = effortIDs(em)
	}
	return domain.ModelState{Model: model, Effort: back, Scope: plan.Scope}, domain.AnswerVerified, nil
}

var _ domain.ModelRepairer = (*Adapter)(nil)

// residue is what a model control left on c: "menu" (its model or effort
// menu open), "command" (the bare command in an otherwise idle composer)
// or "".
func residue(prof agent.NativeProfile, plan *agent.ModelPlan, c screen.Capture) string {
	if _, ok := plan.ReadModels(c); ok {
		return "menu"
	}
	if plan.ReadEffortMenu != nil {
		if _, ok := plan.ReadEffortMenu(c); ok {
			return "menu"
		}
	}
	if plan.Command.Menu(c, plan.Command.Command) {
		return "command" // with the command menu open on it
	}
	rows, ok := prof.ComposerText(c)
	if r := prof.Classify(c); ok && len(rows) == 1 && rows[0] == plan.Command.Command && r.State == domain.ScreenIdle {
		return "command"
	}
	return ""
}

// ModelResidue implements domain.ModelRepairer.
func (x *Adapter) ModelResidue(ctx context.Context, t domain.Terminal) bool {
	prof, plan, err := x.modelPlan(t)
	if err != nil {
		return false
	}
	c, err := x.capture(ctx, t)
	return err == nil && residue(prof, plan, c) != ""
}

// RepairModel implements domain.ModelRepairer: at most three steps, each
// from a fresh capture: an open menu gets Escape, the bare command gets
// the line-clear key (C-u), until the idle empty composer shows on two
// captures. Nothing else is ever pressed.
func (x *Adapter) RepairModel(ctx context.Context, t domain.Terminal) (domain.AnswerStage, error) {
	prof, plan, err := x.modelPlan(t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	if _, err := x.process(t); err != nil {
		return domain.AnswerNothing, err
	}
	k := x.keysFor(t)
	for step := 0; step < 3; step++ {
		c, err := x.capture(ctx, t)
		if err != nil {
			return k.stage, err
		}
		var key string
		switch residue(prof, plan, c) {
		case "menu":
			key = "Escape"
		case "command":
			key = "C-u"
		default:
			if step == 0 {
				return domain.AnswerNothing, domain.ErrNothingToRepair
			}
			if idleEmpty(prof, c) {
				return domain.AnswerVerified, nil
			}
			return k.stage, errors.New("the pane shows neither the residue nor its idle empty composer")
		}
		if err := k.press(ctx, key); err != nil {
			return k.stage, err
		}
		// Wait for the residue to change before the next step.
		before := residue(prof, plan, c)
		after, ok := x.until(ctx, t, func(c screen.Capture) bool { return residue(prof, plan, c) != before || idleEmpty(prof, c) })
		if ok && idleEmpty(prof, after) && x.twice(ctx, t, func(c screen.Capture) bool { return idleEmpty(prof, c) }) {
			return domain.AnswerVerified, nil
		}
	}
	return k.stage, errors.New("the residue did not clear in three steps")
}
