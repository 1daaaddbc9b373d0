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
	s := &Monitors{turns: &turns{cfg: cfg}}
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
			got := s.decidePaneRound(st, paneRound{now: now, fresh: c.fresh, next: c.t, wasAnnounced: c.announced}, &looks)
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

// The decision itself reads nothing: it names the read it needs, and
// decides once the round has made it.
func TestDecidePaneAsksBeforeItReads(t *testing.T) {
	s := &Monitors{turns: &turns{cfg: TurnConfig{AcceptWindow: 30 * time.Second}}}
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	working := Turn{ID: "turn_1", State: TurnWorking, CreatedAt: now.Add(-time.Minute), HardTimeout: time.Hour,
		InactivityLimit: 30 * time.Minute, UpdatedAt: now, LastActivityAt: now, SubmitStage: SubmitEntered}
	awaiting := working
	awaiting.State = TurnAwaitingApproval
	prompt := Terminal{ID: "term_1", ScreenState: ScreenAwaitingApproval}
	round := func(t Turn, reads paneReads) paneRound {
		return paneRound{now: now, fresh: true, next: t, wasAnnounced: "fp1", reads: reads}
	}

	// A prompt drawn: its fingerprint first.
	got := s.decidePane(paneState{t: working, term: prompt}, round(working, paneReads{}))
	if got.need != (paneNeed{kind: needPrompt, state: TurnAwaitingApproval}) || got.typ != "" {
		t.Fatalf("a prompt drawn, nothing read: %+v", got)
	}
	got = s.decidePane(paneState{t: working, term: prompt},
		round(working, paneReads{promptDone: true, promptFor: TurnAwaitingApproval, prompt: "fp2"}))
	if got.need.kind != needNothing || got.typ != "turn.approval_required" || got.announced != "fp2" {
		t.Fatalf("a prompt drawn, read: %+v", got)
	}

	// A prompt that differs from the one announced: its confirmation.
	st := paneState{t: awaiting, term: prompt, announced: "fp1"}
	read := paneReads{promptDone: true, promptFor: TurnAwaitingApproval, prompt: "fp2"}
	if got := s.decidePane(st, round(awaiting, read)); got.need != (paneNeed{kind: needConfirm, fp: "fp2"}) {
		t.Fatalf("a changed prompt, not confirmed yet: %+v", got)
	}
	read.confirmDone, read.confirmFP = true, "fp2"
	if got := s.decidePane(st, round(awaiting, read)); got.need.kind != needNothing || got.typ != "" || got.announced != "fp1" {
		t.Fatalf("a changed prompt read once: %+v", got)
	}
	read.confirmed = true
	if got := s.decidePane(st, round(awaiting, read)); got.typ != "turn.approval_required" || got.announced != "fp2" {
		t.Fatalf("a changed prompt read twice: %+v", got)
	}

	// An async question: its step.
	async := Terminal{ID: "term_1", ScreenState: ScreenWorking, AsyncQuestion: true}
	if got := s.decidePane(paneState{t: working, term: async}, round(working, paneReads{})); got.need.kind != needAsync {
		t.Fatalf("an async question, nothing read: %+v", got)
	}
}

// A backend Turn's transition for each event of its daemon.
func TestBackendTurnEvent(t *testing.T) {
	s := &ThreadCases{turns: &turns{}, ledger: &turnLedger{turns: &turns{}}}
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
