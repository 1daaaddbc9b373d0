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

// modelReader reads the model menu: its window where the plan reads one
// (the menu may scroll), else the whole menu.
func modelReader(plan *agent.ModelPlan) func(screen.Capture) (agent.PermissionMenu, bool) {
	if plan.ReadModelWindow != nil {
		return plan.ReadModelWindow
	}
	return plan.ReadModels
}

// maxWalk bounds the arrow keys a read of a scrolling menu presses.
const maxWalk = 64

// walkMenu lists every row of a menu that scrolls, from its window w (the
// selection where the menu opened): Up one row at a time to the top, then
// Down to the bottom, each move proven on two captures (the selection on
// the row next to the last one, the window a run of the rows seen), never
// past an end (the selection would wrap). The menu is left open, its
// selection moved; nothing is chosen (Escape closes it). It returns the
// rows and the index of the row selected when it opened.
func (x *Adapter) walkMenu(ctx context.Context, t domain.Terminal, read func(screen.Capture) (agent.PermissionMenu, bool), k *keys, w agent.PermissionMenu) ([]string, int, error) {
	list := slices.Clone(w.Labels)
	start, sel := w.Selected, w.Selected
	fits := func(n agent.PermissionMenu) bool {
		off := sel - n.Selected
		if off < 0 || off+len(n.Labels) > len(list) {
			return false
		}
		for i, l := range n.Labels {
			if list[off+i] != l {
				return false
			}
		}
		return true
	}
	steps := 0
	move := func(key string, end func(agent.PermissionMenu) bool, next func(label string) bool) error {
		for !end(w) {
			if steps++; steps > maxWalk {
				return fmt.Errorf("the menu has more than %d rows", maxWalk)
			}
			prev := w.Labels[w.Selected]
			if err := k.press(ctx, key); err != nil {
				return err
			}
			n, ok := x.stableWhere(ctx, t, read, func(m agent.PermissionMenu) bool { return m.Labels[m.Selected] != prev })
			if !ok || !next(n.Labels[n.Selected]) || list[sel] != n.Labels[n.Selected] || !fits(n) {
				return fmt.Errorf("the menu's selection did not move one row %s as read", strings.ToLower(key))
			}
			w = n
		}
		return nil
	}
	up := func(label string) bool {
		if sel > 0 {
			sel--
			return true
		}
		if slices.Contains(list, label) {
			return false // wrapped around, or a row twice
		}
		list = append([]string{label}, list...)
		start++
		return true
	}
	down := func(label string) bool {
		if sel < len(list)-1 {
			sel++
			return true
		}
		if slices.Contains(list, label) {
			return false
		}
		list = append(list, label)
		sel++
		return true
	}
	if err := move("Up", func(m agent.PermissionMenu) bool { return m.Selected == 0 && !m.Above }, up); err != nil {
		return nil, 0, err
	}
	if err := move("Down", func(m agent.PermissionMenu) bool { return m.Selected == len(m.Labels)-1 && !m.Below }, down); err != nil {
		return nil, 0, err
	}
	return list, start, nil
}

// stableWhere reads with read until two captures in a row agree on a menu
// that accept holds for.
func (x *Adapter) stableWhere(ctx context.Context, t domain.Terminal, read func(screen.Capture) (agent.PermissionMenu, bool), accept func(agent.PermissionMenu) bool) (agent.PermissionMenu, bool) {
	return x.stable(ctx, t, func(c screen.Capture) (agent.PermissionMenu, bool) {
		m, ok := read(c)
		return m, ok && accept(m)
	})
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
	k := x.keysFor(t)
	st, err := x.readModels(ctx, t, prof, plan, k)
	if err != nil {
		// The model menu, or its effort menu above it: two surfaces.
		return domain.ModelState{}, k.stage, x.backOut(ctx, t, prof, k, 2, plan.Open, err)
	}
	return st, domain.AnswerVerified, nil
}

// readModels is Models' plan on keys k: an error once k opened the model
// menu leaves that menu (or its effort menu) to the caller to back out of.
func (x *Adapter) readModels(ctx context.Context, t domain.Terminal, prof agent.NativeProfile, plan *agent.ModelPlan, k *keys) (domain.ModelState, error) {
	idleEffort := ""
	if plan.CurrentEffort != nil {
		c, err := x.capture(ctx, t)
		if err != nil {
			return domain.ModelState{}, err
		}
		var ok bool
		if idleEffort, ok = plan.CurrentEffort(c); !ok {
			return domain.ModelState{}, fmt.Errorf("%w: the effort in effect is not readable on the idle screen", ErrNotReady)
		}
	}
	if err := x.runCommandOn(ctx, t, prof, *plan.Command, "", false, k); err != nil {
		return domain.ModelState{}, err
	}
	read := modelReader(plan)
	m, ok := x.stable(ctx, t, read)
	if !ok {
		return domain.ModelState{}, errors.New("the model menu did not appear whole")
	}
	if err := domain.FailError("models.opened"); err != nil {
		return domain.ModelState{}, err
	}
	if plan.ReadEffort == nil && m.Current < 0 {
		return domain.ModelState{}, errors.New("the model menu does not list the model in effect (a model of a custom provider, or one the agent's catalogue lacks)")
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
			return domain.ModelState{}, errors.New("the model menu does not select the model in effect")
		}
		if err := k.press(ctx, "Enter"); err != nil {
			return domain.ModelState{}, err
		}
		em, ok := x.stable(ctx, t, plan.ReadEffortMenu)
		if !ok {
			return domain.ModelState{}, errors.New("the effort menu did not appear whole")
		}
		var def string
		efforts, def = effortIDs(em)
		st.Effort = idleEffort
		if st.Effort == "" {
			st.Effort = def
		}
		if err := k.press(ctx, "Escape"); err != nil {
			return domain.ModelState{}, err
		}
		back, ok := x.stable(ctx, t, read)
		if !ok || !sameMenu(back, m) {
			return domain.ModelState{}, errors.New("Escape did not go back to the model menu as it was")
		}
	}
	labels, selected := m.Labels, m.Selected
	if m.Above || m.Below {
		var err error
		if labels, selected, err = x.walkMenu(ctx, t, read, k, m); err != nil {
			return domain.ModelState{}, err
		}
	}
	for i, l := range labels {
		o := domain.ModelOption{Model: agent.LabelID(l), Label: strings.TrimSpace(strings.TrimSuffix(l, "✔"))}
		if i == selected {
			o.Efforts = efforts
		}
		st.Models = append(st.Models, o)
	}
	if err := x.closeMenu(ctx, t, prof, k); err != nil {
		return domain.ModelState{}, err
	}
	return st, nil
}

// SetModel implements domain.ModelControls for the model in effect: the
// effort moved one proven step at a time (Claude Code's slider, then its
// session-only key; Codex's effort menu, then Enter), the idle empty
// composer proven, and the effort read back. It is long because each step
// proves the screen the next step's key needs; split, a key would be
// separated from the proof it depends on.
func (x *Adapter) SetModel(ctx context.Context, t domain.Terminal, model, effort string) (domain.ModelState, domain.AnswerStage, error) {
	prof, plan, err := x.modelPlan(t)
	if err != nil {
		return domain.ModelState{}, domain.AnswerNothing, err
	}
	k := x.keysFor(t)
	// Until the choice is applied (the slider's session key, the effort
	// menu's Enter), a failure backs out of the menus opened: nothing
	// changed. After, it is uncertain.
	applied := false
	fail := func(err error) (domain.ModelState, domain.AnswerStage, error) {
		if applied {
			return domain.ModelState{}, k.stage, err
		}
		return domain.ModelState{}, k.stage, x.backOut(ctx, t, prof, k, 2, plan.Open, err)
	}
	if err := x.runCommandOn(ctx, t, prof, *plan.Command, "", false, k); err != nil {
		return fail(err)
	}
	m, ok := x.stable(ctx, t, modelReader(plan))
	if !ok || agent.LabelID(m.Labels[m.Selected]) != model {
		return fail(fmt.Errorf("the model menu does not select %s", model))
	}
	if err := domain.FailError("set_model.opened"); err != nil {
		return fail(err)
	}
	if plan.ReadEffort != nil {
		cur, ok := x.stableEffort(ctx, t, plan, func(string) bool { return true })
		from, to := slices.Index(plan.Efforts, cur), slices.Index(plan.Efforts, effort)
		if !ok || from < 0 || to < 0 {
			return fail(fmt.Errorf("the effort slider does not read as one of %v", plan.Efforts))
		}
		for from != to {
			key, next := plan.EffortMore, from+1
			if to < from {
				key, next = plan.EffortLess, from-1
			}
			if err := k.press(ctx, key); err != nil {
				return fail(err)
			}
			want := plan.Efforts[next]
			if _, ok := x.stableEffort(ctx, t, plan, func(e string) bool { return e == want }); !ok {
				return fail(fmt.Errorf("the effort did not move to %s; nothing was applied", want))
			}
			from = next
		}
		applied = true
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
		return fail(errors.New("the model menu does not select the model in effect"))
	}
	if err := k.press(ctx, "Enter"); err != nil {
		return fail(err)
	}
	em, ok := x.stable(ctx, t, plan.ReadEffortMenu)
	ids, _ := effortIDs(em)
	to := slices.Index(ids, effort)
	if !ok || to < 0 {
		return fail(fmt.Errorf("the effort menu does not offer %s", effort))
	}
	for em.Selected != to {
		key, want := "Down", em.Selected+1
		if to < em.Selected {
			key, want = "Up", em.Selected-1
		}
		if err := k.press(ctx, key); err != nil {
			return fail(err)
		}
		n, ok := x.stableMenuWhere(ctx, t, &agent.PermissionPlan{ReadMenu: plan.ReadEffortMenu},
			func(n agent.PermissionMenu) bool { return n.Selected == want && sameLabels(n, em) })
		if !ok {
			return fail(fmt.Errorf("the effort menu's selection did not move to row %d; no Enter was pressed", want+1))
		}
		em = n
	}
	applied = true
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
	if plan.Open != nil && plan.Open(c) {
		return "menu" // drawn, though not readable whole
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
		// Wait for the screen the key leads to: the idle empty composer or
		// another residue. A screen between the two (the menu gone, the
		// composer not drawn yet) is waited through, not judged.
		before := residue(prof, plan, c)
		after, ok := x.until(ctx, t, func(c screen.Capture) bool {
			r := residue(prof, plan, c)
			return idleEmpty(prof, c) || r != "" && r != before
		})
		if ok && idleEmpty(prof, after) && x.twice(ctx, t, func(c screen.Capture) bool { return idleEmpty(prof, c) }) {
			return domain.AnswerVerified, nil
		}
	}
	return k.stage, errors.New("the residue did not clear in three steps")
}
