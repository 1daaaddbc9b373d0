package agenttest

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Timeouts the helpers use; generous, since two agents may start at once on a
// 2-core machine.
const (
	StartTimeout = 60 * time.Second
	TurnTimeout  = 45 * time.Second
	pollEvery    = 200 * time.Millisecond // a capture costs about 7 ms of CPU (a tmux client)
)

// Patient is how long a wait for evidence may really last when a test asks
// for d: twice d. Every such wait ends as soon as its evidence shows, so the
// slack costs a passing test nothing, and a machine busy with other work
// (Codex 0.171.0 once took a minute to draw its composer) fails nothing.
func Patient(d time.Duration) time.Duration { return 2 * d }

// Capture returns the visible pane as plain text (capture-pane -p).
func (e *Env) Capture() string {
	e.t.Helper()
	return e.mustTmux("capture-pane", "-p", "-t", e.Target())
}

// CaptureANSI returns the visible pane with colours and attributes
// (capture-pane -p -e).
func (e *Env) CaptureANSI() string {
	e.t.Helper()
	return e.mustTmux("capture-pane", "-p", "-e", "-t", e.Target())
}

// Type types text literally (send-keys -l), as a human typing it.
func (e *Env) Type(text string) {
	e.t.Helper()
	e.mustTmux("send-keys", "-t", e.Target(), "-l", text)
}

// Cursor is where the pane's cursor stands.
func (e *Env) Cursor() (x, y int) {
	e.t.Helper()
	if _, err := fmt.Sscanf(e.mustTmux("display-message", "-p", "-t", e.Target(), "#{cursor_x} #{cursor_y}"), "%d %d", &x, &y); err != nil {
		e.t.Fatalf("cursor: %v", err)
	}
	return x, y
}

// Press presses tmux keys in order (Enter, Escape, Down, BTab, C-c, ...),
// with a short pause between them as a human would.
func (e *Env) Press(keys ...string) {
	e.t.Helper()
	for i, k := range keys {
		if i > 0 {
			time.Sleep(150 * time.Millisecond)
		}
		e.mustTmux("send-keys", "-t", e.Target(), k)
	}
}

// WaitFor polls the screen until cond holds and returns that screen. On
// timeout the test fails with what was awaited and the last screen.
func (e *Env) WaitFor(what string, timeout time.Duration, cond func(screen string) bool) string {
	e.t.Helper()
	timeout = Patient(timeout)
	screen, ok := e.poll(timeout, cond)
	if !ok {
		e.t.Fatalf("%s: timed out after %s waiting for %s; last screen:\n%s", e.Agent.Name(), timeout, what, frame(screen))
	}
	return screen
}

// WaitForText waits until the screen contains every one of texts.
func (e *Env) WaitForText(timeout time.Duration, texts ...string) string {
	e.t.Helper()
	return e.WaitFor(fmt.Sprintf("%q on screen", texts), timeout, func(s string) bool {
		for _, t := range texts {
			if !strings.Contains(s, t) {
				return false
			}
		}
		return true
	})
}

// Poll captures the screen until cond holds or timeout passes; ok says
// whether it held.
func (e *Env) Poll(timeout time.Duration, cond func(string) bool) (screen string, ok bool) {
	e.t.Helper()
	return e.poll(timeout, cond)
}

func (e *Env) poll(timeout time.Duration, cond func(string) bool) (string, bool) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	var screen string
	for {
		out, err := e.Tmux("capture-pane", "-p", "-t", e.Target())
		if err == nil {
			screen = out
			if cond(screen) {
				return screen, true
			}
		} else {
			screen = err.Error()
		}
		if time.Now().After(deadline) {
			return screen, false
		}
		time.Sleep(pollEvery)
	}
}

// frame marks each line of a screen for a failure message. A run of
// empty lines is one line saying how many, so a log's tail (all that CI
// may show) still reaches the failure above it.
func frame(screen string) string {
	var out []string
	empty := 0
	flush := func() {
		switch {
		case empty == 1:
			out = append(out, "│")
		case empty > 1:
			out = append(out, fmt.Sprintf("│ (%d empty lines)", empty))
		}
		empty = 0
	}
	for _, l := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
		if strings.TrimSpace(l) == "" {
			empty++
			continue
		}
		flush()
		out = append(out, "│"+l)
	}
	flush()
	return strings.Join(out, "\n")
}

// WaitReady waits until the agent is ready for a task, answering the
// start-up dialogs a human would answer on the way (Claude Code 2.1.328's
// "Make auto mode your default permission mode?" offer: Down, Enter to keep
// manual mode; Codex's offer of a newer model: keep the existing one). Trust
// dialogs are not answered: use Options.Untrusted only when the test wants to
// see them. The offer can appear a moment after the composer, so the idle
// screen must hold for a second.
func (e *Env) WaitReady(timeout time.Duration) string {
	e.t.Helper()
	answered := map[string]bool{}
	var idleSince time.Time
	return e.WaitFor("the idle composer", timeout, func(s string) bool {
		switch d := StartupDialog(e.Agent.Kind, s); d {
		case DialogAutoMode, DialogModelMigrate:
			idleSince = time.Time{}
			if answered[d] {
				return false
			}
			answered[d] = true
			e.Settle()
			if e.opts.BeforeAnswer != nil {
				e.opts.BeforeAnswer(e, d)
			}
			if d == DialogAutoMode {
				e.Choose("No, keep manual mode")
			} else {
				e.Choose("Use existing model")
			}
			return false
		}
		if !e.Idle(s) {
			idleSince = time.Time{}
			return false
		}
		if idleSince.IsZero() {
			idleSince = time.Now()
		}
		return time.Since(idleSince) >= time.Second
	})
}

// WaitIdle waits until the pane is idle (see Idle) and returns the screen.
func (e *Env) WaitIdle(timeout time.Duration) string {
	e.t.Helper()
	return e.WaitFor("the idle composer", timeout, e.Idle)
}

// Settle waits until the screen has not changed for 500ms (at most 5s), as
// a human reads a prompt before answering it: a key pressed on the very first
// paint of a dialog can land before the dialog takes input.
func (e *Env) Settle() string {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	last, stableSince := "", time.Now()
	for {
		out, err := e.Tmux("capture-pane", "-p", "-t", e.Target())
		if err != nil {
			return last
		}
		if out != last {
			last, stableSince = out, time.Now()
		}
		if time.Since(stableSince) >= 500*time.Millisecond || time.Now().After(deadline) {
			return last
		}
		time.Sleep(pollEvery)
	}
}

// Choose moves the selection cursor (❯ or ›) of the menu on screen to the
// option whose line contains label, with Up/Down as a human would, and
// presses Enter.
func (e *Env) Choose(label string) {
	e.t.Helper()
	for range 12 {
		s := e.Settle()
		cursor, target := -1, -1
		for i, l := range strings.Split(s, "\n") {
			t := strings.TrimSpace(l)
			if strings.HasPrefix(t, "❯") || strings.HasPrefix(t, "›") {
				if strings.Contains(t, label) {
					e.Press("Enter")
					return
				}
				cursor = i
			}
			if strings.Contains(l, label) {
				target = i
			}
		}
		switch {
		case cursor < 0 || target < 0:
			e.t.Fatalf("%s: no menu with %q on screen:\n%s", e.Agent.Name(), label, frame(s))
		case target > cursor:
			e.Press("Down")
		default:
			e.Press("Up")
		}
	}
	e.t.Fatalf("%s: could not move the menu cursor to %q", e.Agent.Name(), label)
}

// Submit types text into the composer, waits until the composer shows it,
// and presses Enter once. It waits out Codex's paste-burst window, in which
// Enter would insert a newline instead of sending.
func (e *Env) Submit(text string) {
	e.t.Helper()
	if s := e.Capture(); StartupDialog(e.Agent.Kind, s) == DialogAutoMode || StartupDialog(e.Agent.Kind, s) == DialogModelMigrate {
		e.WaitReady(StartTimeout) // a late start-up offer: answer it first
	}
	e.Type(text)
	// The composer wraps long text, so compare without any whitespace.
	probe := squash(text)
	if r := []rune(probe); len(r) > 40 {
		probe = string(r[len(r)-40:])
	}
	e.WaitFor("the typed text in the composer", 10*time.Second, func(s string) bool { return strings.Contains(squash(s), probe) })
	time.Sleep(400 * time.Millisecond)
	e.Press("Enter")
}

// squash drops every whitespace character (and the no-break space).
func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '\u00a0' {
			return -1
		}
		return r
	}, s)
}

// Screen recognisers for the harness only (start-up and idle). The product's
// screen grammar lives in terminaldrivers/claude and terminaldrivers/codex and
// is tested on the captured fixtures.

// Start-up dialog names returned by StartupDialog.
const (
	DialogAutoMode     = "auto_mode_offer"
	DialogTrust        = "trust"
	DialogAPIKey       = "api_key"
	DialogModelMigrate = "model_migration"
)

// StartupDialog names the start-up dialog on screen, or "".
func StartupDialog(kind, s string) string {
	switch {
	case strings.Contains(s, "Make auto mode your default permission mode?"):
		return DialogAutoMode
	case strings.Contains(s, "Detected a custom API key"):
		return DialogAPIKey
	case kind == KindClaude && (strings.Contains(s, "trust this folder") || strings.Contains(s, "Do you trust the files")),
		kind == KindCodex && ((strings.Contains(s, "trust") && (strings.Contains(s, "Yes, continue") || strings.Contains(s, "Do you trust"))) || strings.Contains(s, "Trust this folder?")):
		return DialogTrust
	case kind == KindCodex && strings.Contains(s, "Try new model") && strings.Contains(s, "Use existing model"):
		return DialogModelMigrate
	}
	return ""
}

// Idle reports whether the screen shows the agent idle and ready for a task:
// Claude Code's empty composer (❯ between two rules) with nothing running;
// Codex's composer with its "<model> <effort> · <cwd>" status line (drawn
// only once the session is ready) and nothing running.
func (e *Env) Idle(s string) bool {
	if StartupDialog(e.Agent.Kind, s) != "" || strings.Contains(s, "esc to interrupt") {
		return false
	}
	lines := strings.Split(s, "\n")
	switch e.Agent.Kind {
	case KindClaude:
		for i := 1; i+1 < len(lines); i++ {
			l := strings.TrimRight(strings.ReplaceAll(lines[i], "\u00a0", " "), " ")
			if l == "❯" && isRule(lines[i-1]) && isRule(lines[i+1]) {
				return true
			}
		}
	case KindCodex:
		composer, status := false, false
		for _, l := range lines {
			t := strings.TrimSpace(l)
			if strings.HasPrefix(t, "› ") || t == "›" {
				composer = true
			}
			if composer && strings.Contains(l, " · ") && strings.Contains(l, e.ProjectDir) {
				status = true
			}
		}
		return composer && status && !strings.Contains(s, "Would you like to run") && !strings.Contains(s, "unanswered)")
	}
	return false
}

func isRule(l string) bool {
	t := strings.TrimSpace(l)
	return strings.HasPrefix(t, "────")
}

// ApprovalPrompt reports whether a shell command approval prompt is shown
// (Claude Code: "Do you want to proceed?" under "Bash command"; Codex: "Would
// you like to run the following command?").
func ApprovalPrompt(kind, s string) bool {
	switch kind {
	case KindClaude:
		return strings.Contains(s, "Do you want to proceed?") && strings.Contains(s, "Bash command")
	case KindCodex:
		return strings.Contains(s, "Would you like to run the following command?")
	}
	return false
}

// Questionnaire reports whether a questionnaire is shown (Claude Code's
// AskUserQuestion, Codex's request_user_input).
func Questionnaire(kind, s string) bool {
	switch kind {
	case KindClaude:
		return (strings.Contains(s, "Enter to select") && strings.Contains(s, "Esc to cancel")) ||
			(strings.Contains(s, "Review your answers") && strings.Contains(s, "Submit answers"))
	case KindCodex:
		return strings.Contains(s, "unanswered)") && strings.Contains(s, "enter to submit")
	}
	return false
}

// PlanMode switches Codex to Plan mode with Shift+Tab (tmux BTab), as a
// human would, and waits until the screen says so. A key pressed while the
// TUI is still redrawing after a turn can be lost, so, like a person who
// sees nothing happen, it presses again (at most three times).
func (e *Env) PlanMode() {
	e.t.Helper()
	e.switchMode("Plan mode", func(s string) bool { return strings.Contains(s, "Plan mode") })
}

// DefaultMode switches Codex back from Plan mode, the same way.
func (e *Env) DefaultMode() {
	e.t.Helper()
	e.switchMode("Plan mode off", func(s string) bool { return !strings.Contains(s, "Plan mode") || strings.Contains(s, "Default mode") })
}

func (e *Env) switchMode(what string, done func(string) bool) {
	e.t.Helper()
	// A press is waited for as long as a loaded machine needs: a second
	// press before the first one shows switches on past the mode (after 5
	// s, Codex 0.155.1 left Plan mode again, and its request_user_input
	// was "unavailable in Default mode"). Only a press not taken in that
	// time is pressed again.
	for try := 0; try < 2; try++ {
		e.Press("BTab")
		if _, ok := e.poll(Patient(20*time.Second), done); ok {
			return
		}
	}
	e.WaitFor(what, time.Second, done)
}

// PaneTitle is the pane's title as the agent set it.
func (e *Env) PaneTitle() string {
	out, _ := e.Tmux("display-message", "-p", "-t", e.Target(), "#{pane_title}")
	return strings.TrimSpace(out)
}

// NewThread starts a new native thread in the running Claude Code, as a
// person does between tasks (/clear), and waits until the screen shows
// nothing of the old one: no reply or tool line, the composer empty. It
// is how a shared pane gives the next test a thread with no history (an
// interrupted Turn, for one, changes how Claude Code sends the next
// message). Codex is left as it is: it has no screen that proves a new
// thread (its /new leaves the old transcript on screen).
func (e *Env) NewThread() {
	e.t.Helper()
	if e.Agent.Kind != KindClaude {
		return
	}
	e.Submit("/clear")
	e.WaitFor("a new thread after /clear", 20*time.Second, func(s string) bool {
		return strings.Contains(s, "/clear") && !strings.Contains(s, "●") && !strings.Contains(s, "⎿")
	})
}

// Resize makes the pane width x height, as a person resizing the terminal
// does (the agent redraws for its new size), and waits until tmux reports
// that size.
func (e *Env) Resize(width, height int) {
	e.t.Helper()
	w, h := strconv.Itoa(width), strconv.Itoa(height)
	e.mustTmux("resize-window", "-t", e.Target(), "-x", w, "-y", h)
	deadline := time.Now().Add(Patient(10 * time.Second))
	for {
		out, err := e.Tmux("display-message", "-p", "-t", e.Target(), "#{pane_width}x#{pane_height}")
		if err == nil && strings.TrimSpace(out) == w+"x"+h {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: the pane is %q (%v), not %sx%s after a resize", e.Agent.Name(), out, err, w, h)
		}
		time.Sleep(pollEvery)
	}
}
