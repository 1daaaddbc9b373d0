package domain

import (
	"context"
	"strings"
	"testing"
	"time"
)

// paneLooksFake answers a decision's looks from fixed values and counts
// the confirmations it was asked for.
type paneLooksFake struct {
	fp        string // the prompt or step on screen
	confirmed bool   // a changed fingerprint was read twice
	async     string // an async question's step, "" when none
	confirms  int
}

func (l *paneLooksFake) promptFingerprint(TurnState) string { return l.fp }

func (l *paneLooksFake) confirmPrompt(string) bool {
	l.confirms++
	return l.confirmed
}

func (l *paneLooksFake) asyncQuestion() (string, bool) { return l.async, l.async != "" }

// The pane monitor's decision, without tmux, a daemon or a store.
func TestDecidePane(t *testing.T) {
	cfg := TurnConfig{AcceptWindow: 30 * time.Second}
	s := &monitorCases{&Service{turns: &turns{cfg: cfg}}}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	turn := func(state TurnState, mod func(*Turn)) Turn {
		t := Turn{ID: "turn_1", State: state, CreatedAt: now.Add(-time.Minute), HardTimeout: time.Hour,
			InactivityLimit: 30 * time.Minute, UpdatedAt: now.Add(-time.Second), LastActivityAt: now.Add(-time.Second),
			SubmitStage: SubmitEntered}
		if mod != nil {
			mod(&t)
		}
		return t
	}
	screen := func(st ScreenState) Terminal { return Terminal{ID: "term_1", ScreenState: st} }
	cases := []struct {
		name      string
		t         Turn
		term      Terminal
		announced string
		fresh     bool
		answering bool
		unseen    bool // the Turn waited when the monitor began, and no look showed the prompt yet
		moved     bool // the round's record read changed the actions
		looks     paneLooksFake
		// want
		state     TurnState
		typ       string
		webhook   bool
		announce  string
		changed   bool
		confirms  int
		reasonHas string
	}{
		{name: "a prompt drawn while working is announced", t: turn(TurnWorking, nil),
			term: screen(ScreenAwaitingApproval), fresh: true, looks: paneLooksFake{fp: "fp1"},
			state: TurnAwaitingApproval, typ: "turn.approval_required", webhook: true, announce: "fp1", changed: true},
		{name: "a new prompt while awaiting one is announced once read twice", t: turn(TurnAwaitingApproval, nil),
			term: screen(ScreenAwaitingApproval), announced: "fp1", fresh: true, looks: paneLooksFake{fp: "fp2", confirmed: true},
			state: TurnAwaitingApproval, typ: "turn.approval_required", webhook: true, announce: "fp2", changed: true, confirms: 1},
		{name: "a new prompt read once waits for the next look", t: turn(TurnAwaitingApproval, nil),
			term: screen(ScreenAwaitingApproval), announced: "fp1", fresh: true, looks: paneLooksFake{fp: "fp2"},
			state: TurnAwaitingApproval, announce: "fp1", confirms: 1},
		{name: "a step that looks new while AKK answers is its own answer's screen: not announced", t: turn(TurnAwaitingInteraction, nil),
			term: screen(ScreenAwaitingInteraction), announced: "fp1", fresh: true, answering: true, looks: paneLooksFake{fp: "fp2", confirmed: true},
			state: TurnAwaitingInteraction, announce: "fp1"},
		{name: "a step drawn while working is announced and remembered, AKK answering or not", t: turn(TurnWorking, nil),
			term: screen(ScreenAwaitingInteraction), announced: "fp1", fresh: true, answering: true, looks: paneLooksFake{fp: "fp2"},
			state: TurnAwaitingInteraction, typ: "turn.interaction_required", webhook: true, announce: "fp2", changed: true},
		{name: "the same prompt is not announced twice", t: turn(TurnAwaitingApproval, nil),
			term: screen(ScreenAwaitingApproval), announced: "fp1", fresh: true, looks: paneLooksFake{fp: "fp1", confirmed: true},
			state: TurnAwaitingApproval, announce: "fp1"},
		{name: "no look, no announcement", t: turn(TurnAwaitingApproval, nil),
			term: screen(ScreenAwaitingApproval), announced: "fp1", looks: paneLooksFake{fp: "fp2", confirmed: true},
			state: TurnAwaitingApproval, announce: "fp1"},
		{name: "an async question is announced once", t: turn(TurnWorking, nil),
			term: Terminal{ID: "term_1", ScreenState: ScreenWorking, AsyncQuestion: true}, fresh: true, looks: paneLooksFake{async: "q1"},
			state: TurnWorking, typ: "turn.interaction_required", webhook: true, announce: "q1", changed: true},
		{name: "the same async question is not announced again", t: turn(TurnWorking, nil),
			term: Terminal{ID: "term_1", ScreenState: ScreenWorking, AsyncQuestion: true}, announced: "q1", fresh: true,
			looks: paneLooksFake{async: "q1"}, state: TurnWorking, announce: "q1"},
		{name: "the hard deadline passed: stalled", t: turn(TurnWorking, func(t *Turn) { t.CreatedAt = now.Add(-2 * time.Hour) }),
			term: screen(ScreenWorking), fresh: true,
			state: TurnStalled, typ: "turn.stalled", webhook: true, changed: true, reasonHas: "hard deadline"},
		{name: "no activity within the limit: stalled", t: turn(TurnWorking, func(t *Turn) { t.LastActivityAt = now.Add(-time.Hour) }),
			term:  screen(ScreenWorking),
			state: TurnStalled, typ: "turn.stalled", webhook: true, changed: true, reasonHas: "inactivity"},
		{name: "dispatching past the accept window: delivery uncertain",
			t:    turn(TurnDispatching, func(t *Turn) { t.UpdatedAt = now.Add(-time.Minute) }),
			term: screen(ScreenWorking), fresh: true,
			state: TurnDeliveryUncertain, typ: "turn.delivery_uncertain", webhook: true, changed: true, reasonHas: "Enter was pressed"},
		{name: "a submit never recorded, past the accept window: delivery uncertain",
			t:     turn(TurnDispatching, func(t *Turn) { t.UpdatedAt, t.SubmitStage = now.Add(-time.Minute), SubmitPasted }),
			term:  screen(ScreenWorking),
			state: TurnDeliveryUncertain, typ: "turn.delivery_uncertain", webhook: true, changed: true, reasonHas: "daemon stopped"},
		{name: "dispatching within the accept window: nothing yet", t: turn(TurnDispatching, nil),
			term: screen(ScreenWorking), fresh: true, state: TurnDispatching},
		{name: "a prompt answered in the pane: back to working", t: turn(TurnAwaitingApproval, nil),
			term: screen(ScreenWorking), announced: "fp1", fresh: true,
			state: TurnWorking, typ: "turn.working", announce: "fp1", changed: true},
		{name: "after a restart, a wait no look has shown yet holds on a working screen (the agent may not have drawn its dialog again)",
			t: turn(TurnAwaitingApproval, nil), term: screen(ScreenWorking), announced: "fp1", fresh: true, unseen: true,
			state: TurnAwaitingApproval, announce: "fp1"},
		{name: "after a restart, the record moving on ends the wait", t: turn(TurnAwaitingApproval, nil),
			term: screen(ScreenWorking), announced: "fp1", fresh: true, unseen: true, moved: true,
			state: TurnWorking, typ: "turn.working", announce: "fp1", changed: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := paneState{t: c.t, term: c.term, announced: c.announced, answering: c.answering, unseenWait: c.unseen, actionsChanged: c.moved}
			looks := c.looks
			got := s.decidePane(st, paneRound{now: now, fresh: c.fresh, next: c.t, wasAnnounced: c.announced}, &looks)
			if got.next.State != c.state || got.typ != c.typ || got.webhook != c.webhook || got.announced != c.announce || got.changed != c.changed {
				t.Fatalf("got state %q typ %q webhook %v announced %q changed %v; want %q %q %v %q %v",
					got.next.State, got.typ, got.webhook, got.announced, got.changed, c.state, c.typ, c.webhook, c.announce, c.changed)
			}
			if looks.confirms != c.confirms {
				t.Fatalf("%d confirmations asked, want %d", looks.confirms, c.confirms)
			}
			if c.reasonHas != "" && !strings.Contains(got.next.FailureReason, c.reasonHas) {
				t.Fatalf("reason %q, want one naming %q", got.next.FailureReason, c.reasonHas)
			}
		})
	}
}

// A backend Turn's transition for each event of its daemon.
func TestBackendTurnEvent(t *testing.T) {
	s := &backendCases{&Service{turns: &turns{}}}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		state TurnState
		ev    BackendEvent
		want  TurnState
		typ   string
		hook  bool
	}{
		{TurnWorking, BackendEvent{Kind: BackendProgress, Text: "reading"}, TurnWorking, "", false},
		{TurnWorking, BackendEvent{Kind: BackendApproval}, TurnAwaitingApproval, "turn.approval_required", true},
		{TurnAwaitingApproval, BackendEvent{Kind: BackendApproval}, TurnAwaitingApproval, "", false},
		{TurnAwaitingInteraction, BackendEvent{Kind: BackendQuestion}, TurnAwaitingInteraction, "", false},
		{TurnAwaitingApproval, BackendEvent{Kind: BackendResolved}, TurnWorking, "turn.working", false},
		{TurnWorking, BackendEvent{Kind: BackendResolved}, TurnWorking, "", false},
		{TurnWorking, BackendEvent{Kind: BackendCompleted, Text: "done"}, TurnCompleted, "turn.completed", true},
		{TurnWorking, BackendEvent{Kind: BackendGone}, TurnStalled, "turn.stalled", true},
		{TurnWorking, BackendEvent{Kind: BackendChanges, Changes: []FileChange{{Path: "a", Op: FileCreated, Diff: "+x\n"}}}, TurnWorking, "", false},
	}
	for _, c := range cases {
		next, typ, hook := s.backendTurnEvent(Turn{State: c.state}, c.ev, now)
		if next.State != c.want || typ != c.typ || hook != c.hook || !next.LastActivityAt.Equal(now) {
			t.Errorf("%s on %s: %s %q %v, want %s %q %v", c.ev.Kind, c.state, next.State, typ, hook, c.want, c.typ, c.hook)
		}
		// A patch's files are stored with the Turn, and only they.
		if got := len(next.NewChanges); got != len(c.ev.Changes) || (got == 1 && next.NewChanges[0].Path != "a") {
			t.Errorf("%s: new changes %+v", c.ev.Kind, next.NewChanges)
		}
	}
}

// A pane Watch's transition for a screen believed.
func TestWatchScreen(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	activity := Watch{State: WatchActive, Mode: WatchModeActivity}
	idle := activity
	idle.IdleSince = now.Add(-time.Hour) // well past StableIdle
	cases := []struct {
		name string
		w    Watch
		st   ScreenState
		want WatchState
		typ  string
		hook bool
	}{
		{"a prompt is observed", activity, ScreenAwaitingApproval, WatchActive, "watch.approval_observed", true},
		{"idle is first seen", activity, ScreenIdle, WatchActive, "watch.idle_seen", false},
		{"idle long enough completes", idle, ScreenIdle, WatchCompleted, "watch.completed", true},
		{"activity again", idle, ScreenWorking, WatchActive, "watch.activity_seen", false},
		{"working, nothing new", activity, ScreenWorking, WatchActive, "", false},
	}
	for _, c := range cases {
		next, typ, hook := watchScreen(c.w, Terminal{ScreenState: c.st}, now)
		if next.State != c.want || typ != c.typ || hook != c.hook {
			t.Errorf("%s: %s %q %v, want %s %q %v", c.name, next.State, typ, hook, c.want, c.typ, c.hook)
		}
	}
}

// scriptFollower is a follower whose rounds end it after ends rounds; it
// counts its rounds and waits.
type scriptFollower struct {
	ends, rounds, waits int
}

func (f *scriptFollower) live() bool { return f.rounds < f.ends }
func (f *scriptFollower) round(context.Context) monitorStep {
	f.rounds++
	return stepWait
}
func (f *scriptFollower) wait(context.Context) bool {
	f.waits++
	return true
}
func (f *scriptFollower) close() {}

// The one monitor loop waits between rounds, never after the round that
// ended what it follows (a backend follower's wait would read the closed
// channel as the daemon gone and stall a finished Turn).
func TestRunMonitorWaitsOnlyBetweenRounds(t *testing.T) {
	f := &scriptFollower{ends: 3}
	runMonitor(context.Background(), f)
	if f.rounds != 3 || f.waits != 2 {
		t.Fatalf("%d rounds, %d waits; want 3 and 2", f.rounds, f.waits)
	}
}

// screenNotifierFake is a TurnTerminal that counts change-report arms.
type screenNotifierFake struct {
	TurnTerminal
	arms int
}

func (f *screenNotifierFake) ScreenChanged(context.Context, string) (<-chan struct{}, func(), bool) {
	f.arms++
	return make(chan struct{}), func() {}, true
}

// TestScreenWatchQuietOnTheRecord: while the record says quiet, no change
// report is armed (one armed is released) and the screen is looked at, and
// the record read, every QuietLook; the record showing a pending tool call
// makes the next look due at once and arms reports again.
func TestScreenWatchQuietOnTheRecord(t *testing.T) {
	f := &screenNotifierFake{}
	tr := &turns{term: f}
	tr.cfg.defaults()
	var w screenWatch
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	if !w.lookNow(context.Background(), tr, "term_1", false, time.Time{}, now) || f.arms != 1 || w.ch == nil {
		t.Fatalf("first look: arms %d", f.arms)
	}
	w.setQuiet(true)
	if w.ch != nil {
		t.Fatal("quiet kept the change report armed")
	}
	last := now
	if w.lookNow(context.Background(), tr, "term_1", true, last, now.Add(tr.cfg.QuietLook-time.Millisecond)) {
		t.Fatal("a quiet screen was looked at before QuietLook")
	}
	if !w.lookNow(context.Background(), tr, "term_1", true, last, now.Add(tr.cfg.QuietLook)) || f.arms != 1 {
		t.Fatalf("quiet: look at QuietLook without arming (arms %d)", f.arms)
	}
	last = now.Add(tr.cfg.QuietLook)
	if d := w.wait(tr.cfg, true, true, last, last); d != tr.cfg.QuietLook {
		t.Fatalf("quiet wait %s, want QuietLook %s", d, tr.cfg.QuietLook)
	}
	// Quiet looks fall on the QuietLook grid, whenever the last look was:
	// every quiet monitor looks at the same moment.
	if d := w.wait(tr.cfg, true, true, last.Add(3*time.Second), last.Add(3*time.Second)); d != tr.cfg.QuietLook-3*time.Second {
		t.Fatalf("quiet wait after an off-grid look %s, want %s", d, tr.cfg.QuietLook-3*time.Second)
	}
	// A prompt read on a quiet look is believed on a second look only.
	if w.confirm(Terminal{ID: "term_1", ScreenState: ScreenWorking}, Terminal{ID: "term_1", ScreenState: ScreenAwaitingApproval}) {
		t.Fatal("a prompt read on one quiet look was believed")
	}
	w.confirming, w.dirty, w.pending = false, false, ""
	w.setQuiet(false)
	if d := w.wait(tr.cfg, true, true, last, last); d != time.Millisecond {
		t.Fatalf("leaving quiet: next round in %s, want at once", d)
	}
	if !w.lookNow(context.Background(), tr, "term_1", true, last, last) || f.arms != 2 || w.ch == nil {
		t.Fatalf("leaving quiet: a look at once with reports armed (arms %d)", f.arms)
	}
}

// TestRecordQuiet: only an agent that foretells its asks, with no tool
// call open and not saying it waits, lets the screen go unwatched.
func TestRecordQuiet(t *testing.T) {
	open := []ProgressAction{{Type: "Bash", Status: ActionPending}}
	ended := []ProgressAction{{Type: "Bash", Status: "completed"}}
	for _, c := range []struct {
		p    TurnProgress
		want bool
	}{
		{TurnProgress{AsksForetold: true}, true},
		{TurnProgress{AsksForetold: true, Actions: ended}, true},
		{TurnProgress{AsksForetold: true, Actions: open}, false},
		{TurnProgress{AsksForetold: true, Waiting: true}, false},
		{TurnProgress{}, false},
	} {
		if got := c.p.RecordQuiet(); got != c.want {
			t.Errorf("%+v: %v, want %v", c.p, got, c.want)
		}
	}
}

// TestScreenWatchExpectsAForetoldPrompt: a tool call just opened, or just
// ended (Codex's async question ends its call as it asks), or the agent
// saying it waits, makes a prompt expected until one is believed: a write
// is looked at at once (not ScreenGap after the last look), a prompt read
// once is confirmed ScreenConfirm later, and without writes the screen is
// looked at every ScreenGap; a tool call open longer than ScreenExpect is
// watched as before.
func TestScreenWatchExpectsAForetoldPrompt(t *testing.T) {
	var cfg TurnConfig
	cfg.defaults()
	var w screenWatch
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	w.foretold(now, true, true, false, false)
	if !w.expect || w.every(cfg) != cfg.ScreenGap {
		t.Fatalf("a tool call just opened: expect %v, every %s", w.expect, w.every(cfg))
	}
	w.dirty = true
	if w.every(cfg) != 0 {
		t.Fatalf("a write while a prompt is expected: every %s, want at once", w.every(cfg))
	}
	if w.confirming = true; w.every(cfg) != cfg.ScreenConfirm {
		t.Fatalf("a prompt to confirm while one is expected: every %s, want %s", w.every(cfg), cfg.ScreenConfirm)
	}
	w.confirming, w.dirty = false, false
	// A look at a write while a prompt is expected is followed by one
	// ScreenConfirm later (the drawing may end with writes too small to be
	// reported), then by one every ScreenGap.
	tr := &turns{term: &screenNotifierFake{}, cfg: cfg}
	w.dirty = true
	if !w.lookNow(context.Background(), tr, "term_1", true, now, now) || w.every(cfg) != cfg.ScreenConfirm {
		t.Fatalf("after a look at a write while a prompt is expected: every %s, want %s", w.every(cfg), cfg.ScreenConfirm)
	}
	if !w.lookNow(context.Background(), tr, "term_1", true, now, now.Add(cfg.ScreenConfirm)) || w.every(cfg) != cfg.ScreenGap {
		t.Fatalf("after a look on the clock while a prompt is expected: every %s, want %s", w.every(cfg), cfg.ScreenGap)
	}
	w.release()
	if w.foretold(now.Add(ScreenExpect), true, false, false, false); w.expect {
		t.Fatal("a tool call open for ScreenExpect still expects a prompt")
	}
	if w.foretold(now.Add(time.Hour), true, false, true, false); !w.expect {
		t.Fatal("the agent says it waits, and no prompt is expected")
	}
	if w.foretold(now.Add(time.Hour), true, false, true, true); w.expect {
		t.Fatal("a prompt is believed, and one is still expected")
	}
	if w.foretold(now.Add(time.Hour), false, false, false, false); w.expect {
		t.Fatal("no tool call open, nothing changed, and a prompt is expected")
	}
	if w.foretold(now.Add(2*time.Hour), false, true, false, false); !w.expect {
		t.Fatal("a tool call that ended as it asked does not expect its question")
	}
	if w.foretold(now.Add(3*time.Hour), true, true, false, false); !w.expect {
		t.Fatal("a new tool call does not expect its prompt")
	}
}
