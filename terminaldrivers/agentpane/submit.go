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
	"akk/terminaldrivers/tmux"
)

// ErrRequestNotPastable: the request holds what cannot be typed safely as
// one bracketed paste; nothing was sent.
var ErrRequestNotPastable = errors.New("request cannot be pasted safely")

// CheckRequest reports why text cannot be submitted as typed: the
// domain's one request rule (domain.CheckRequestText), with leading or
// trailing white space a fault too (the agents trim it, so the record
// would not match exactly).
func CheckRequest(text string) error {
	if f := domain.CheckRequestText(text, true); f != domain.FaultNone {
		return fmt.Errorf("%w: %s", ErrRequestNotPastable, f)
	}
	return nil
}

// Submit implements domain.TurnTerminal. t is the observation the caller
// made under the terminal's lock (and Mark proved again); Submit sends
// nothing unless the pane's process is still that incarnation and its
// screen, captured once more right before the first key, is idle with an
// empty composer. Only when that fails is the pane observed whole, to tell
// a replaced agent (ErrTerminalGone) from a busy one. The text goes into a buffer of its own, is pasted bracketed
// (the buffer deleted by the paste), and after the profile's paste window
// the composer is read back until it holds exactly the text (or the
// placeholder the agent draws for that paste). Only then is the submit key
// pressed, once. Nothing is retried.
func (x *Adapter) Submit(ctx context.Context, t domain.Terminal, text string) (domain.SubmitStage, error) {
	if err := CheckRequest(text); err != nil {
		return domain.SubmitNothing, err
	}
	prof, err := x.turnProfile(t)
	if err != nil {
		return domain.SubmitNothing, err
	}
	rules := prof.TurnRules()
	now, err := x.recheck(ctx, prof, t)
	if err == nil && now.SendReady() && rules.SettleGap > 0 {
		now, err = x.stillIdle(ctx, prof, t, rules)
	}
	if err == nil && !now.SendReady() {
		// Not ready: tell a replaced agent from a busy one.
		if _, oerr := x.Observe(ctx, t.ID); errors.Is(oerr, domain.ErrTerminalGone) {
			err = oerr
		}
	}
	if err != nil {
		return domain.SubmitNothing, err
	}
	if !now.SendReady() {
		return domain.SubmitNothing, fmt.Errorf("%w: screen %s, composer empty %v", ErrNotReady, now.ScreenState, now.ComposerEmpty)
	}
	if rules.Collapses != nil && !rules.Collapses(text) && now.Height > 0 {
		if rows := Rows(text, now.Width); rows > now.Height/2 {
			return domain.SubmitNothing, fmt.Errorf("%w: %d rows in a pane of %d", ErrRequestTooTall, rows, now.Height)
		}
	}
	flightKey, shared, err := x.sharedHolder(now, text)
	if err != nil {
		return domain.SubmitNothing, err
	}
	if shared {
		if err := x.takeFlight(flightKey, now.ID); err != nil {
			return domain.SubmitNothing, err
		}
	}
	stage, err := x.paste(ctx, prof, now, text)
	if shared && stage == domain.SubmitNothing {
		x.landFlight(flightKey)
	}
	return stage, err
}

// recheck is t with its screen read again: the process must still be the
// incarnation t names, and only the screen is captured (the pane and its
// process were proven by the caller's observation).
func (x *Adapter) recheck(ctx context.Context, prof agent.TurnProfile, t domain.Terminal) (domain.Terminal, error) {
	if _, err := x.process(t); err != nil {
		if _, oerr := x.Observe(ctx, t.ID); errors.Is(oerr, domain.ErrTerminalGone) {
			return domain.Terminal{}, oerr // it went while its files were read
		}
		return domain.Terminal{}, err
	}
	c, err := x.capture(ctx, t)
	if err != nil {
		return domain.Terminal{}, fmt.Errorf("capture %s: %w", t.Pane.PaneID, err)
	}
	r := prof.Classify(c)
	t.ScreenState, t.ComposerEmpty, t.AsyncQuestion = r.State, r.ComposerEmpty, r.AsyncQuestion
	return t, nil
}

// stillIdle reads t's screen until two reads SettleGap apart show the same
// idle screen with an empty composer, up to VerifyWithin; the last read
// decides. Nothing is typed meanwhile.
func (x *Adapter) stillIdle(ctx context.Context, prof agent.TurnProfile, t domain.Terminal, rules agent.TurnRules) (domain.Terminal, error) {
	c, err := x.capture(ctx, t)
	if err != nil {
		return domain.Terminal{}, fmt.Errorf("capture %s: %w", t.Pane.PaneID, err)
	}
	deadline := x.now().Add(rules.VerifyWithin)
	for {
		if err := x.sleep(ctx, rules.SettleGap); err != nil {
			return domain.Terminal{}, err
		}
		next, err := x.capture(ctx, t)
		if err != nil {
			return domain.Terminal{}, fmt.Errorf("capture %s: %w", t.Pane.PaneID, err)
		}
		r := prof.Classify(next)
		t.ScreenState, t.ComposerEmpty, t.AsyncQuestion = r.State, r.ComposerEmpty, r.AsyncQuestion
		if !t.SendReady() || sameText(c, next) {
			return t, nil
		}
		if !x.now().Before(deadline) {
			return domain.Terminal{}, fmt.Errorf("%w: the screen kept changing for %s", ErrNotReady, rules.VerifyWithin)
		}
		c = next
	}
}

// sameText reports whether two captures show the same text.
func sameText(a, b screen.Capture) bool {
	if len(a.Lines) != len(b.Lines) {
		return false
	}
	for i := range a.Lines {
		if a.Lines[i].Text != b.Lines[i].Text {
			return false
		}
	}
	return true
}

// paste types text into the pane, verifies it and presses Enter. A paste
// the agent provably took in and dropped is pasted once more (see
// verify); Enter only ever follows a composer proven to hold exactly text.
func (x *Adapter) paste(ctx context.Context, prof agent.TurnProfile, now domain.Terminal, text string) (domain.SubmitStage, error) {
	rules := prof.TurnRules()
	pane := now.Pane.PaneID
	srv := tmux.Server{Socket: now.Pane.Socket, Runner: x.tmux}
	if err := pasteBuffer(ctx, srv, pane, text); err != nil {
		if errors.Is(err, tmux.ErrNothingPasted) {
			return domain.SubmitNothing, err
		}
		return domain.SubmitPasted, err // it may have reached the pane
	}
	domain.Failpoint("input.pasted")
	dropped, err := x.verify(ctx, prof, now, text)
	if dropped {
		if err := pasteBuffer(ctx, srv, pane, text); err != nil {
			return domain.SubmitPasted, err
		}
		if _, err = x.verify(ctx, prof, now, text); err != nil {
			err = fmt.Errorf("%w (pasted twice: the agent had read the first paste and shown none of it)", err)
		}
	}
	if err != nil {
		return domain.SubmitPasted, err
	}
	domain.Failpoint("input.verified")
	if err := srv.SendKeys(ctx, pane, rules.SubmitKey); err != nil {
		return domain.SubmitVerified, err
	}
	return domain.SubmitEntered, nil
}

// pasteBuffer pastes text into the pane through a buffer of its own.
func pasteBuffer(ctx context.Context, srv tmux.Server, pane, text string) error {
	buf, err := bufferName()
	if err != nil {
		return fmt.Errorf("%w: name a paste buffer: %w", tmux.ErrNothingPasted, err)
	}
	return srv.Paste(ctx, pane, buf, text)
}

// ErrRequestTooTall: the agent would show the request as text taller than
// half the pane, where its composer stops showing all of it (Codex 0.169.0
// drops its status line); nothing was sent.
var ErrRequestTooTall = errors.New("request too tall for the pane's composer")

// Rows estimates how many screen rows text takes in a composer of a pane
// width columns wide: every line, wrapped, with four columns of margin.
func Rows(text string, width int) int {
	cols := max(width-4, 10)
	rows := 0
	for line := range strings.SplitSeq(text, "\n") {
		w := 0
		for _, r := range line {
			w++
			if wide(r) {
				w++
			}
		}
		rows += max(1, (w+cols-1)/cols)
	}
	return rows
}

// wide reports runes drawn two columns wide (East Asian wide, emoji).
func wide(r rune) bool {
	return r >= 0x1100 && (r <= 0x115f || r == 0x2329 || r == 0x232a ||
		(r >= 0x2e80 && r <= 0xa4cf && r != 0x303f) || (r >= 0xac00 && r <= 0xd7a3) ||
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0xfe30 && r <= 0xfe4f) || (r >= 0xff00 && r <= 0xff60) ||
		(r >= 0xffe0 && r <= 0xffe6) || (r >= 0x1f300 && r <= 0x1faff) || (r >= 0x20000 && r <= 0x3fffd))
}

// ErrComposerMismatch: after the paste the composer did not show exactly
// the request; Enter was not pressed.
var ErrComposerMismatch = errors.New("composer does not hold exactly the request")

// verify waits out the paste window, then reads the composer until it
// holds the text, up to the profile's bound. dropped reports a paste the
// agent took in and shows nothing of: at the bound the pane is idle, its
// composer empty, and the agent has read every byte written to its
// terminal. Nothing of the request is then anywhere an Enter could submit
// (a bracketed paste never submits), so pasting it again cannot send it
// twice; Codex was seen dropping a paste that met its redraw after a turn.
func (x *Adapter) verify(ctx context.Context, prof agent.TurnProfile, t domain.Terminal, text string) (dropped bool, err error) {
	rules := prof.TurnRules()
	if err := x.sleep(ctx, rules.PasteWindow); err != nil {
		return false, err
	}
	deadline := x.now().Add(rules.VerifyWithin)
	for {
		c, err := x.capture(ctx, t)
		if err != nil {
			return false, err
		}
		r := prof.Classify(c)
		rows, ok := prof.ComposerText(c)
		var last string
		switch {
		case !ok:
			last = "no composer on screen (" + r.Reason + ")"
		case r.State != domain.ScreenIdle:
			last = "screen " + string(r.State) + " (" + r.Reason + ")"
		case Holds(rows, text, rules.Placeholder):
			return false, nil
		default:
			last = fmt.Sprintf("composer shows %d rows", len(rows))
		}
		if !x.now().Before(deadline) {
			unread, known := inputUnread(ctx, tmux.Server{Socket: t.Pane.Socket, Runner: x.tmux}, t.Pane.PaneID)
			switch {
			case !known:
			case unread == 0:
				last += "; the agent has read all of it"
			default:
				last += fmt.Sprintf("; %d bytes of it wait unread by the agent", unread)
			}
			dropped := ok && r.State == domain.ScreenIdle && len(rows) == 0 && known && unread == 0
			return dropped, fmt.Errorf("%w: %s", ErrComposerMismatch, last)
		}
		if err := x.sleep(ctx, x.poll); err != nil {
			return false, err
		}
	}
}

// inputUnread is how many bytes written to the pane's terminal device the
// agent has not read yet; known is false when the device cannot be read.
func inputUnread(ctx context.Context, srv tmux.Server, paneID string) (n int, known bool) {
	tty, err := srv.PaneTTY(ctx, paneID)
	if err != nil {
		return 0, false
	}
	n, err = unreadInput(tty)
	return n, err == nil
}

// Holds reports whether composer rows show exactly text: the agent's
// placeholder for this paste, or the text itself as wrapped on screen.
// Wrapping may break a line at any space, so the rows are compared with
// the text without white space, and there must be a row for every line.
func Holds(rows []string, text string, placeholder func([]string, string) bool) bool {
	if len(rows) == 0 {
		return false
	}
	if placeholder != nil && placeholder(rows, text) {
		return true
	}
	lines := strings.Split(text, "\n")
	if len(rows) < len(lines) {
		return false
	}
	if len(rows) == len(lines) {
		// Nothing wrapped: every row is its line.
		for i, l := range lines {
			if rows[i] != strings.TrimRight(l, " \u00a0") {
				return false
			}
		}
		return true
	}
	return squeeze(strings.Join(rows, "\n")) == squeeze(text)
}

// squeeze drops every white space rune.
func squeeze(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
