package agentpane

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// ErrNoQuestionGrammar: the terminal's agent version has no questionnaire
// grammar, so its questionnaires are never read or answered.
var ErrNoQuestionGrammar = errors.New("no questionnaire grammar for this agent version")

// QuestionnaireKind is the kind of a blocking questionnaire's step; an
// async question (Codex 0.154.0 and later) is domain.KindAsyncQuestion.
const QuestionnaireKind = "questionnaire"

// Step implements domain.InteractionTerminal.
func (x *Adapter) Step(ctx context.Context, t domain.Terminal) (domain.InteractionStep, error) {
	prof, g, perr := x.questionProfile(t)
	if perr != nil && prof == nil {
		return domain.InteractionStep{}, perr
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return domain.InteractionStep{}, err
	}
	if perr != nil {
		return unanswerableStep(t, prof, c, perr), nil
	}
	s, _ := projectStep(t, prof, g, c)
	fp := ""
	if s.Present {
		fp = s.Fingerprint
	}
	x.showing(t.ID, "step", fp)
	return s, nil
}

// projectStep turns the capture's bottom-most step into the domain's terms. A
// questionnaire the grammar cannot isolate but the profile's classifier
// sees is present and not answerable.
func projectStep(t domain.Terminal, prof agent.InteractionProfile, g agent.InteractionGrammar, c screen.Capture) (domain.InteractionStep, agent.StepReading) {
	r := g.ReadStep(c)
	if !r.Found {
		if cl := prof.Classify(c); cl.State == domain.ScreenAwaitingInteraction {
			return domain.InteractionStep{
				Present: true, Kind: QuestionnaireKind,
				Reason:      "a questionnaire the profile cannot isolate (" + r.Reason + ")",
				Fingerprint: stepFingerprint(t, prof, cl.Region),
			}, r
		}
		return domain.InteractionStep{}, r
	}
	k := g.StepKeys(r)
	s := domain.InteractionStep{
		Present: true, Answerable: r.Answerable, Reason: r.Reason, Kind: QuestionnaireKind,
		Index: r.Index, Total: r.Total,
		FreeTextLimit: freeTextLimit(t, k, r, c),
		Fingerprint:   stepFingerprint(t, prof, r.Region),
	}
	if r.Async {
		s.Kind = domain.KindAsyncQuestion
		if !r.Collapsed {
			s.DeliveryModes = []string{domain.DeliverySteerCurrentTurn, domain.DeliveryQueueNextTurn}
		}
	}
	q := domain.StepQuestion{Key: "q" + strconv.Itoa(r.Index), Header: r.Header, Prompt: r.Prompt, Required: true, ResponseKind: r.ResponseKind}
	derived := k.DerivedText
	switch {
	case r.Editor:
		// The empty editor of the free-text choice: a step of its own,
		// answered with text.
		q.ResponseKind = domain.FreeText
	default:
		for _, o := range r.Options {
			switch {
			case !o.Offered:
			case o.TakesText && derived != "":
				// The native row submits its own label; its editor is
				// reached through the derived free-text choice.
				q.Options = append(q.Options, domain.StepOption{Key: optionKey(o), Label: o.Label},
					domain.StepOption{Key: derivedKey(o), Label: derived, TakesText: true})
			default:
				q.Options = append(q.Options, domain.StepOption{Key: optionKey(o), Label: o.Label, TakesText: o.TakesText})
			}
		}
	}
	s.Questions = []domain.StepQuestion{q}
	return s, r
}

// optionKey is an option's private handle: its number in the step.
func optionKey(o agent.StepOption) string { return "o" + strconv.Itoa(o.Number) }

// derivedKey is the handle of the free-text choice derived beside o.
func derivedKey(o agent.StepOption) string { return optionKey(o) + "t" }

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
func stepFingerprint(t domain.Terminal, prof agent.Profile, r screen.Region) string {
	return agent.Fingerprint(t, prof.Agent().Profile, QuestionnaireKind, r)
}

// plan is what an answer resolves to: the option row to highlight and the
// text to type into it, if any; or, for a multi-select, the checkboxes to
// flip (in row order) and the checked set they lead to.
type plan struct {
	target int // index into the reading's Options
	text   string
	// open: only open the option's empty editor, the next step (the free
	// text is answered there). native: submit the native Other row's own
	// label through its empty editor (SubmitOpensText).
	open, native bool
	multi        bool
	flips        []int
	want         []int // the checked options once every flip is done, in order
	// queue: an async answer queued for the next turn (typed text only).
	queue bool
}

// resolve checks the answers against the step and picks the option. It
// sends nothing.
func resolve(s domain.InteractionStep, r agent.StepReading, k agent.StepKeys, answers []domain.StepAnswer) (plan, error) {
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
	if a.Queue && (k.Queue == "" || r.Collapsed) {
		return unavailable("only an async question's answer is queued")
	}
	if r.Collapsed {
		if k.Open == "" || len(a.OptionKeys) != 1 || a.OptionKeys[0] != optionKey(r.Options[0]) || a.Text != "" {
			return unavailable("the collapsed questions are only opened")
		}
		return plan{target: 0}, nil
	}
	p, err := resolveOne(s, r, k, a, unavailable)
	if err == nil && a.Queue {
		if p.text == "" {
			return unavailable("an answer is queued for the next turn only as typed text")
		}
		p.queue = true
	}
	return p, err
}

// resolveOne plans the answer a to the step's one question.
func resolveOne(s domain.InteractionStep, r agent.StepReading, k agent.StepKeys, a domain.StepAnswer, unavailable func(string) (plan, error)) (plan, error) {
	switch s.Questions[0].ResponseKind {
	case domain.MultiSelect:
		return resolveMulti(r, a, unavailable)
	case domain.FreeText:
		if len(a.OptionKeys) != 0 || !r.Editor || r.Cursor < 0 || !r.Options[r.Cursor].TakesText {
			return unavailable("the editor step takes text only")
		}
		if why := domain.FreeTextProblem(a.Text, s.FreeTextLimit); why != "" {
			return unavailable(why)
		}
		return plan{target: r.Cursor, text: a.Text}, nil
	}
	if len(a.OptionKeys) != 1 {
		return unavailable("exactly one option is chosen")
	}
	for i, o := range r.Options {
		if !o.Offered {
			continue
		}
		native := o.TakesText && k.DerivedText != ""
		switch key := a.OptionKeys[0]; {
		case key == optionKey(o) && (!o.TakesText || native):
			if a.Text != "" {
				return unavailable("this option takes no text")
			}
			return plan{target: i, native: native}, nil
		case key == optionKey(o) && !native, key == derivedKey(o) && native:
			if a.Text == "" {
				return plan{target: i, open: true}, nil
			}
			if why := domain.FreeTextProblem(a.Text, s.FreeTextLimit); why != "" {
				return unavailable(why)
			}
			return plan{target: i, text: a.Text}, nil
		}
	}
	return unavailable("no such option")
}

// resolveMulti plans a multi-select: every chosen key an offered
// checkbox, at least one, none twice, no text; the flips are the offered
// boxes whose state differs from the choice. A checked box AKK may not
// choose makes the plan unavailable.
func resolveMulti(r agent.StepReading, a domain.StepAnswer, unavailable func(string) (plan, error)) (plan, error) {
	if len(a.OptionKeys) == 0 {
		return unavailable("a multi-select chooses at least one option")
	}
	if a.Text != "" {
		return unavailable("a multi-select takes no text")
	}
	chosen := map[string]bool{}
	for _, k := range a.OptionKeys {
		if chosen[k] {
			return unavailable("an option is chosen twice")
		}
		chosen[k] = true
	}
	p := plan{multi: true}
	for i, o := range r.Options {
		if !o.Checkbox {
			continue
		}
		want := o.Offered && chosen[optionKey(o)]
		if want {
			delete(chosen, optionKey(o))
			p.want = append(p.want, i)
		}
		switch {
		case !o.Offered && o.Checked:
			return unavailable("a box AKK may not choose is checked")
		case o.Offered && o.Checked != want:
			p.flips = append(p.flips, i)
		}
	}
	if len(chosen) > 0 {
		return unavailable("no such option")
	}
	return p, nil
}

// AnswerStep implements domain.InteractionTerminal.
func (x *Adapter) AnswerStep(ctx context.Context, t domain.Terminal, fp string, answers []domain.StepAnswer) (domain.AnswerStage, error) {
	prof, g, err := x.questionProfile(t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return domain.AnswerNothing, err
	}
	s, r := projectStep(t, prof, g, c)
	if !s.Present || s.Fingerprint != fp {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	k := g.StepKeys(r)
	p, err := resolve(s, r, k, answers)
	if err != nil {
		return domain.AnswerNothing, err
	}
	err = x.settled(ctx, t, x.cfg.StepSettle, fp, func(c screen.Capture) string {
		again, _ := projectStep(t, prof, g, c)
		return again.Fingerprint
	})
	if err != nil {
		return domain.AnswerNothing, err
	}
	d := dispatch{x: x, t: t, g: g, plan: k, keys: x.keysFor(t)}
	if p.queue {
		d.plan.Submit = k.Queue
	}
	last, err := d.run(ctx, r, p)
	if err != nil {
		return d.keys.stage, err
	}
	if p.open {
		// The step became its editor step: proven by two captures in a row.
		if x.twice(ctx, t, func(c screen.Capture) bool { return editorOpen(g.ReadStep(c), last, p.target) }) {
			return domain.AnswerVerified, nil
		}
		return domain.AnswerSent, errors.New("the editor did not stay open and empty")
	}
	if x.stepGone(ctx, t, prof, g, last) {
		return domain.AnswerVerified, nil
	}
	return domain.AnswerSent, errors.New("the keys were sent but the step did not leave the screen")
}

// dispatch sends one step's key plan, proving each key's effect before the
// next; keys.stage is how far it got.
type dispatch struct {
	x    *Adapter
	t    domain.Terminal
	g    agent.InteractionGrammar
	plan agent.StepKeys
	keys *keys
}

// move moves the highlight to option target one row at a time, each move
// proven (same step, same checked boxes) before the next.
func (d *dispatch) move(ctx context.Context, r agent.StepReading, target int) (agent.StepReading, error) {
	for r.Cursor != target {
		key, want := d.plan.Down, r.Cursor+1
		if target < r.Cursor {
			key, want = d.plan.Up, r.Cursor-1
		}
		if err := d.keys.press(ctx, key); err != nil {
			return r, err
		}
		next, ok := d.x.awaitStep(ctx, d.t, d.g, func(n agent.StepReading) bool {
			return r.Same(n) && n.Cursor == want && (!n.Editor || n.EditorText == "") && slices.Equal(n.Checks(), r.Checks())
		})
		if !ok {
			return r, errors.New("the highlight did not move as planned; stopped before answering")
		}
		r = next
	}
	return r, nil
}

// runMulti flips the planned checkboxes one at a time, proving after each
// flip that exactly that box changed, then proves the checked set is the
// chosen one and presses Next. It returns the reading Next was pressed on.
func (d *dispatch) runMulti(ctx context.Context, r agent.StepReading, p plan) (agent.StepReading, error) {
	if d.plan.Toggle == "" || d.plan.Next == "" {
		return r, fmt.Errorf("%w: the version's multi-selects are a person's", domain.ErrDecisionUnavailable)
	}
	for _, i := range p.flips {
		var err error
		if r, err = d.move(ctx, r, i); err != nil {
			return r, err
		}
		want := r.Checks()
		if r.Options[i].Checked {
			want = slices.DeleteFunc(want, func(k int) bool { return k == i })
		} else {
			want = append(want, i)
			slices.Sort(want)
		}
		if err := d.keys.press(ctx, d.plan.Toggle); err != nil {
			return r, err
		}
		next, ok := d.x.awaitStep(ctx, d.t, d.g, func(n agent.StepReading) bool {
			return r.Same(n) && n.Cursor == i && !n.Editor && slices.Equal(n.Checks(), want)
		})
		if !ok {
			return r, errors.New("the checkbox did not flip as planned; stopped")
		}
		r = next
	}
	// The whole set, read again: exactly the chosen boxes are checked.
	c, err := d.x.capture(ctx, d.t)
	if err != nil {
		return r, err
	}
	if n := d.g.ReadStep(c); !r.Same(n) || n.Editor || !slices.Equal(n.Checks(), p.want) {
		return r, errors.New("the checked boxes are not the chosen ones; stopped before leaving the question")
	}
	return r, d.keys.press(ctx, d.plan.Next)
}

// run moves the highlight to the planned option, types its text if any,
// and presses Submit. It returns the reading Submit was pressed on.
func (d *dispatch) run(ctx context.Context, r agent.StepReading, p plan) (agent.StepReading, error) {
	if p.multi {
		return d.runMulti(ctx, r, p)
	}
	if r.Collapsed {
		// Its one choice opens the panel: the next step.
		return r, d.keys.press(ctx, d.plan.Open)
	}
	r, err := d.move(ctx, r, p.target)
	if err != nil {
		return r, err
	}
	if p.native {
		// Submit opens the row's empty editor; Submit there sends the label.
		if err := d.keys.press(ctx, d.plan.Submit); err != nil {
			return r, err
		}
		next, ok := d.x.awaitStep(ctx, d.t, d.g, func(n agent.StepReading) bool { return editorOpen(n, r, p.target) })
		if !ok {
			return r, errors.New("the row's empty editor did not show; stopped before submitting")
		}
		r = next
	}
	if p.open || p.text != "" {
		if d.plan.OpenText != "" && !r.Editor {
			if err := d.keys.press(ctx, d.plan.OpenText); err != nil {
				return r, err
			}
		}
		next, ok := d.x.awaitStep(ctx, d.t, d.g, func(n agent.StepReading) bool { return editorOpen(n, r, p.target) })
		if !ok {
			return r, errors.New("the empty text editor did not show; stopped before typing")
		}
		if p.open {
			return next, nil
		}
		if err := d.keys.typeText(ctx, p.text); err != nil {
			return next, err
		}
		next, ok = d.x.awaitStep(ctx, d.t, d.g, func(n agent.StepReading) bool {
			return next.Same(n) && n.Cursor == p.target && n.Editor && n.EditorText == p.text
		})
		if !ok {
			return next, errors.New("the typed text did not show exactly; stopped before submitting")
		}
		if d.x.sleep(ctx, d.plan.TextSettle) != nil {
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
	if err := d.keys.press(ctx, d.plan.Submit); err != nil {
		return r, err
	}
	return r, nil
}

// editorOpen reports whether n shows step r with the empty editor of option
// target open.
func editorOpen(n, r agent.StepReading, target int) bool {
	return r.Same(n) && n.Cursor == target && n.Editor && n.EditorText == ""
}

// awaitStep recaptures until cond holds for the step on screen or
// VerifyWithin passes.
func (x *Adapter) awaitStep(ctx context.Context, t domain.Terminal, g agent.InteractionGrammar, cond func(agent.StepReading) bool) (agent.StepReading, bool) {
	var r agent.StepReading
	_, ok := x.until(ctx, t, func(c screen.Capture) bool { r = g.ReadStep(c); return cond(r) })
	return r, ok
}

// stepGone reports whether the step answered left the screen: two
// captures in a row show another step, or no step and the agent at work
// or idle.
func (x *Adapter) stepGone(ctx context.Context, t domain.Terminal, prof agent.InteractionProfile, g agent.InteractionGrammar, answered agent.StepReading) bool {
	return x.twice(ctx, t, func(c screen.Capture) bool {
		n := g.ReadStep(c)
		if n.Found {
			return !answered.Same(n)
		}
		switch prof.Classify(c).State {
		case domain.ScreenWorking, domain.ScreenIdle, domain.ScreenAwaitingApproval:
			return true
		}
		return false
	})
}

// questionProfile finds the terminal's version profile and its grammar.
func (x *Adapter) questionProfile(t domain.Terminal) (agent.InteractionProfile, agent.InteractionGrammar, error) {
	p, exact, err := x.registry.Find(t)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrNoQuestionGrammar, err)
	}
	ip, ok := p.(agent.InteractionProfile)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrNoQuestionGrammar, t.Agent.Profile)
	}
	if !exact {
		return ip, nil, fmt.Errorf("%w: %s %s has no profile of its own", ErrNoQuestionGrammar, t.Agent.Kind, t.Agent.Version)
	}
	g, ok := ip.InteractionGrammar()
	if !ok {
		return ip, nil, fmt.Errorf("%w: %s", ErrNoQuestionGrammar, t.Agent.Profile)
	}
	return ip, g, nil
}

// unanswerableStep is the step of a version without a grammar: present when
// the profile's classifier sees a questionnaire, never answerable.
func unanswerableStep(t domain.Terminal, prof agent.InteractionProfile, c screen.Capture, why error) domain.InteractionStep {
	cl := prof.Classify(c)
	if cl.State != domain.ScreenAwaitingInteraction {
		return domain.InteractionStep{}
	}
	return domain.InteractionStep{
		Present: true, Kind: QuestionnaireKind,
		Reason:      "AKK answers questionnaires only with a grammar of this exact agent version (" + why.Error() + "); answer it in the pane",
		Fingerprint: stepFingerprint(t, prof, cl.Region),
	}
}
