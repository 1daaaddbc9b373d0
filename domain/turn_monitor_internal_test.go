package domain

import (
	"context"
	"strings"
	"testing"
	"time"
)

// promptLooksFake answers a decision's looks from fixed values and counts
// the confirmations it was asked for.
type promptLooksFake struct {
	fp        string // the prompt or step on screen
	confirmed bool   // a changed fingerprint was read twice
	async     string // an async question's step, "" when none
	confirms  int
}

func (l *promptLooksFake) PromptFingerprint(TurnState) string { return l.fp }

func (l *promptLooksFake) ConfirmPrompt(string) bool {
	l.confirms++
	return l.confirmed
}

func (l *promptLooksFake) AsyncQuestion() (string, bool) { return l.async, l.async != "" }

// screenObservation is what a pane round observes of term: looked at
// now (fresh) or not, its record's actions moved or not.
func screenObservation(term Terminal, fresh, moved bool) Observation {
	return Observation{Asks: screenAsks(term), ExactPrompt: term.ExactPrompt, AsyncQuestion: term.AsyncQuestion,
		Looked: fresh, Clock: true, RecordMoved: moved}
}

// decisionMonitors is what a decision reads of the monitors: their
// configuration and the ledger's redaction.
func decisionMonitors(cfg TurnConfig) *Monitors {
	tr := &turns{cfg: cfg}
	return &Monitors{turns: tr, ledger: &turnLedger{turns: tr}}
}

// The pane monitor's decision, without tmux, a daemon or a store.
func TestDecidePane(t *testing.T) {
	cfg := TurnConfig{AcceptWindow: 30 * time.Second}
	s := decisionMonitors(cfg)
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
		looks     promptLooksFake
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
			term: screen(ScreenAwaitingApproval), fresh: true, looks: promptLooksFake{fp: "fp1"},
			state: TurnAwaitingApproval, typ: "turn.approval_required", webhook: true, announce: "fp1", changed: true},
		{name: "a new prompt while awaiting one is announced once read twice", t: turn(TurnAwaitingApproval, nil),
			term: screen(ScreenAwaitingApproval), announced: "fp1", fresh: true, looks: promptLooksFake{fp: "fp2", confirmed: true},
			state: TurnAwaitingApproval, typ: "turn.approval_required", webhook: true, announce: "fp2", changed: true, confirms: 1},
		{name: "a new prompt read once waits for the next look", t: turn(TurnAwaitingApproval, nil),
			term: screen(ScreenAwaitingApproval), announced: "fp1", fresh: true, looks: promptLooksFake{fp: "fp2"},
			state: TurnAwaitingApproval, announce: "fp1", confirms: 1},
		{name: "a step that looks new while AKK answers is its own answer's screen: not announced", t: turn(TurnAwaitingInteraction, nil),
			term: screen(ScreenAwaitingInteraction), announced: "fp1", fresh: true, answering: true, looks: promptLooksFake{fp: "fp2", confirmed: true},
			state: TurnAwaitingInteraction, announce: "fp1"},
		{name: "a step drawn while working is announced and remembered, AKK answering or not", t: turn(TurnWorking, nil),
			term: screen(ScreenAwaitingInteraction), announced: "fp1", fresh: true, answering: true, looks: promptLooksFake{fp: "fp2"},
			state: TurnAwaitingInteraction, typ: "turn.interaction_required", webhook: true, announce: "fp2", changed: true},
		{name: "the same prompt is not announced twice", t: turn(TurnAwaitingApproval, nil),
			term: screen(ScreenAwaitingApproval), announced: "fp1", fresh: true, looks: promptLooksFake{fp: "fp1", confirmed: true},
			state: TurnAwaitingApproval, announce: "fp1"},
		{name: "no look, no announcement", t: turn(TurnAwaitingApproval, nil),
			term: screen(ScreenAwaitingApproval), announced: "fp1", looks: promptLooksFake{fp: "fp2", confirmed: true},
			state: TurnAwaitingApproval, announce: "fp1"},
		{name: "an async question is announced once", t: turn(TurnWorking, nil),
			term: Terminal{ID: "term_1", ScreenState: ScreenWorking, AsyncQuestion: true}, fresh: true, looks: promptLooksFake{async: "q1"},
			state: TurnWorking, typ: "turn.interaction_required", webhook: true, announce: "q1", changed: true},
		{name: "the same async question is not announced again", t: turn(TurnWorking, nil),
			term: Terminal{ID: "term_1", ScreenState: ScreenWorking, AsyncQuestion: true}, announced: "q1", fresh: true,
			looks: promptLooksFake{async: "q1"}, state: TurnWorking, announce: "q1"},
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
			st := followState{t: c.t, announced: c.announced, answering: c.answering, unseenWait: c.unseen}
			looks := c.looks
			got := s.decideTurnRound(st, turnRound{now: now, seen: screenObservation(c.term, c.fresh, c.moved), wasAnnounced: c.announced}, &looks)
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
	s := decisionMonitors(TurnConfig{AcceptWindow: 30 * time.Second})
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	working := Turn{ID: "turn_1", State: TurnWorking, CreatedAt: now.Add(-time.Minute), HardTimeout: time.Hour,
		InactivityLimit: 30 * time.Minute, UpdatedAt: now, LastActivityAt: now, SubmitStage: SubmitEntered}
	awaiting := working
	awaiting.State = TurnAwaitingApproval
	prompt := Terminal{ID: "term_1", ScreenState: ScreenAwaitingApproval}
	round := func(term Terminal, reads roundReads) turnRound {
		return turnRound{now: now, seen: screenObservation(term, true, false), wasAnnounced: "fp1", reads: reads}
	}

	// A prompt drawn: its fingerprint first.
	got := s.decideTurn(followState{t: working}, round(prompt, roundReads{}))
	if got.need != (roundNeed{kind: needPrompt, state: TurnAwaitingApproval}) || got.typ != "" {
		t.Fatalf("a prompt drawn, nothing read: %+v", got)
	}
	got = s.decideTurn(followState{t: working},
		round(prompt, roundReads{promptDone: true, promptFor: TurnAwaitingApproval, prompt: "fp2"}))
	if got.need.kind != needNothing || got.typ != "turn.approval_required" || got.announced != "fp2" {
		t.Fatalf("a prompt drawn, read: %+v", got)
	}

	// A prompt that differs from the one announced: its confirmation.
	st := followState{t: awaiting, announced: "fp1"}
	read := roundReads{promptDone: true, promptFor: TurnAwaitingApproval, prompt: "fp2"}
	if got := s.decideTurn(st, round(prompt, read)); got.need != (roundNeed{kind: needConfirm, fp: "fp2"}) {
		t.Fatalf("a changed prompt, not confirmed yet: %+v", got)
	}
	read.confirmDone, read.confirmFP = true, "fp2"
	if got := s.decideTurn(st, round(prompt, read)); got.need.kind != needNothing || got.typ != "" || got.announced != "fp1" {
		t.Fatalf("a changed prompt read once: %+v", got)
	}
	read.confirmed = true
	if got := s.decideTurn(st, round(prompt, read)); got.typ != "turn.approval_required" || got.announced != "fp2" {
		t.Fatalf("a changed prompt read twice: %+v", got)
	}

	// An async question: its step.
	async := Terminal{ID: "term_1", ScreenState: ScreenWorking, AsyncQuestion: true}
	if got := s.decideTurn(followState{t: working}, round(async, roundReads{})); got.need.kind != needAsync {
		t.Fatalf("an async question, nothing read: %+v", got)
	}
}

// A thread's Turn decided for each event of its daemon, through the same
// decision as a pane's.
func TestDecideThreadEvents(t *testing.T) {
	m := decisionMonitors(TurnConfig{})
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		state TurnState
		ev    BackendEvent
		want  TurnState
		typ   string
		hook  bool
	}{
		{TurnWorking, BackendEvent{Kind: BackendProgress, Text: "reading"}, TurnWorking, "turn.progress", false},
		{TurnWorking, BackendEvent{Kind: BackendApproval}, TurnAwaitingApproval, "turn.approval_required", true},
		{TurnAwaitingApproval, BackendEvent{Kind: BackendApproval}, TurnAwaitingApproval, "", false},
		{TurnAwaitingInteraction, BackendEvent{Kind: BackendQuestion}, TurnAwaitingInteraction, "", false},
		{TurnAwaitingApproval, BackendEvent{Kind: BackendResolved}, TurnWorking, "turn.working", false},
		{TurnWorking, BackendEvent{Kind: BackendResolved}, TurnWorking, "", false},
		{TurnWorking, BackendEvent{Kind: BackendCompleted, Text: "done"}, TurnCompleted, "turn.completed", true},
		{TurnWorking, BackendEvent{Kind: BackendInterrupted}, TurnCancelled, "turn.cancelled", true},
		{TurnWorking, BackendEvent{Kind: BackendFailed, Text: "quota"}, TurnFailed, "turn.failed", true},
		{TurnWorking, BackendEvent{Kind: BackendGone}, TurnStalled, "turn.stalled", true},
		{TurnWorking, BackendEvent{Kind: BackendChanges, Changes: []FileChange{{Path: "a", Op: FileCreated, Diff: "+x\n"}}}, TurnWorking, "", false},
	}
	for _, c := range cases {
		st := followState{t: Turn{State: c.state, LastActivityAt: now.Add(-time.Second)}}
		got := m.decideTurn(st, turnRound{now: now, seen: c.ev.Observation("daemon").Received(now)})
		next := got.next
		if next.State != c.want || got.typ != c.typ || got.webhook != c.hook {
			t.Errorf("%s on %s: %s %q %v, want %s %q %v", c.ev.Kind, c.state, next.State, got.typ, got.webhook, c.want, c.typ, c.hook)
		}
		if c.ev.Kind != BackendGone && !next.LastActivityAt.Equal(now) {
			t.Errorf("%s: last activity %v, want the event's", c.ev.Kind, next.LastActivityAt)
		}
		// A patch's files are stored with the Turn, and only they, at the
		// time the daemon sent them.
		if n := len(next.NewChanges); n != len(c.ev.Changes) || (n == 1 && (next.NewChanges[0].Path != "a" || !next.NewChanges[0].At.Equal(now))) {
			t.Errorf("%s: new changes %+v", c.ev.Kind, next.NewChanges)
		}
	}
}

// What differs between transports is what they observe, not how it is
// decided: an interruption that ends the native turn (a daemon's) cancels
// the Turn, one the agent waits on in the same turn (a pane's) leaves it
// to its host unless AKK cancelled it; a lost endpoint fails the Turn when
// the agent is gone, stalls it when it is out of reach, and neither when
// a last read of the record found the turn ended; a failure's reason is
// bounded whichever transport gave it.
func TestDecideTurnObservations(t *testing.T) {
	m := decisionMonitors(TurnConfig{})
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	working := Turn{State: TurnWorking, LastActivityAt: now.Add(-time.Second)}
	cancelling := working
	cancelling.CancelRequested = true
	long := strings.Repeat("x", 2*FailureReasonLimit)
	cases := []struct {
		name string
		t    Turn
		obs  Observation
		want TurnState
		typ  string
	}{
		{"a pane's interruption from elsewhere waits for the host", working,
			Observation{Record: &TurnProgress{Interrupted: true}}, TurnWaitingForHost, "turn.waiting_for_host"},
		{"a pane's interruption AKK asked for cancels", cancelling,
			Observation{Record: &TurnProgress{Interrupted: true}}, TurnCancelled, "turn.cancelled"},
		{"an interruption that ends the native turn cancels", working,
			Observation{Record: &TurnProgress{Interrupted: true, InterruptEnds: true}}, TurnCancelled, "turn.cancelled"},
		{"the agent gone fails the Turn", working,
			Observation{Lost: EndpointClosed, Why: "closed"}, TurnFailed, "turn.failed"},
		{"the agent out of reach stalls it", working,
			Observation{Lost: EndpointUnreachable, Why: "away"}, TurnStalled, "turn.stalled"},
		{"a last read that found the end completes it", working,
			Observation{Lost: EndpointClosed, Why: "closed", Record: &TurnProgress{Completed: true, FinalMessage: "ok"}}, TurnCompleted, "turn.completed"},
		{"a last read that found no end fails it", working,
			Observation{Lost: EndpointClosed, Why: "closed", Record: &TurnProgress{LatestText: "still"}}, TurnFailed, "turn.failed"},
		{"a long failure reason", working,
			Observation{Record: &TurnProgress{Failed: true, FailureReason: long}}, TurnFailed, "turn.failed"},
		{"an event is not the monitor's clock: no deadline", Turn{State: TurnWorking, LastActivityAt: now.Add(-time.Hour), InactivityLimit: time.Minute},
			Observation{Asks: AskingNothing}, TurnWorking, ""},
		{"a hard deadline is passed when its timer fires, at the deadline itself", Turn{State: TurnWorking, LastActivityAt: now, HardTimeout: time.Hour, CreatedAt: now.Add(-time.Hour)},
			Observation{Clock: true}, TurnStalled, "turn.stalled"},
		{"the monitor's clock checks the deadlines", Turn{State: TurnWorking, LastActivityAt: now.Add(-time.Hour), InactivityLimit: time.Minute, HardTimeout: 2 * time.Hour, CreatedAt: now.Add(-time.Hour)},
			Observation{Clock: true}, TurnStalled, "turn.stalled"},
	}
	for _, c := range cases {
		got := m.decideTurn(followState{t: c.t}, turnRound{now: now, seen: c.obs})
		if got.next.State != c.want || got.typ != c.typ {
			t.Errorf("%s: %s %q, want %s %q", c.name, got.next.State, got.typ, c.want, c.typ)
		}
		if n := len([]rune(got.next.FailureReason)); n > FailureReasonLimit+1 {
			t.Errorf("%s: a reason of %d code points", c.name, n)
		}
	}
}

// A Watch's transition for what a pane's look or a thread's event
// observed: the same decision for both.
func TestDecideWatch(t *testing.T) {
	s := &WatchCases{ledger: &turnLedger{turns: &turns{}}, turns: &turns{}}
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
		next, typ, hook := s.decideWatch(c.w, screenObserved(Terminal{ScreenState: c.st}), now)
		if next.State != c.want || typ != c.typ || hook != c.hook {
			t.Errorf("%s: %s %q %v, want %s %q %v", c.name, next.State, typ, hook, c.want, c.typ, c.hook)
		}
	}
	exact := Watch{State: WatchActive, Mode: WatchModeExact}
	shown := exact
	shown.ApprovalShown = true
	long := strings.Repeat("y", 2*FailureReasonLimit)
	events := []struct {
		w    Watch
		ev   BackendEvent
		want WatchState
		typ  string
	}{
		{exact, BackendEvent{Kind: BackendApproval}, WatchActive, "watch.approval_observed"},
		{shown, BackendEvent{Kind: BackendApproval}, WatchActive, ""},
		{shown, BackendEvent{Kind: BackendProgress, Text: "still"}, WatchActive, ""},
		{shown, BackendEvent{Kind: BackendResolved}, WatchActive, "watch.approval_cleared"},
		{exact, BackendEvent{Kind: BackendCompleted, Text: "done"}, WatchCompleted, "watch.completed"},
		{exact, BackendEvent{Kind: BackendInterrupted}, WatchFailed, "watch.failed"},
		{exact, BackendEvent{Kind: BackendFailed, Text: long}, WatchFailed, "watch.failed"},
		{exact, BackendEvent{Kind: BackendGone}, WatchInvalidated, "watch.invalidated"},
	}
	for _, c := range events {
		next, typ, _ := s.decideWatch(c.w, c.ev.Observation("daemon").Received(now), now)
		if next.State != c.want || typ != c.typ || len([]rune(next.Reason)) > FailureReasonLimit+1 {
			t.Errorf("%s on %+v: %s %q %q, want %s %q", c.ev.Kind, c.w, next.State, typ, next.Reason, c.want, c.typ)
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

// screenObserved is what a believed look at term observes.
func screenObserved(term Terminal) Observation {
	o := ScreenObservation(term)
	o.Looked = true
	return o
}
