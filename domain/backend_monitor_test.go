package domain_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"akk/domain"
	"akk/endpoints"
)

// scriptedDaemon is a fakeDaemon whose followed turn sends what the test
// puts on events.
type scriptedDaemon struct {
	fakeDaemon
	events chan domain.BackendEvent
}

func (b *scriptedDaemon) Follow(ctx context.Context, _ domain.BackendThread, _ string) (<-chan domain.Observation, error) {
	out := make(chan domain.Observation)
	go func() {
		defer close(out)
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-b.events:
				if !ok {
					return // the daemon went away before the turn ended
				}
				select {
				case out <- ev.Observation("scripted daemon"):
				case <-ctx.Done():
					return
				}
				if ev.Ends() {
					return // the channel closes after an end, as the daemon's follower does
				}
			}
		}
	}()
	return out, nil
}

// workingBackendTurn is a backend Turn sent through a service whose next
// Turn write can be made to meet a revision conflict, working on the
// scripted daemon's first event.
func workingBackendTurn(t *testing.T) (*world, *scriptedDaemon, *domain.Service, *conflictStore, domain.SendResult) {
	t.Helper()
	ft := &fakeTerm{term: idleTerminal()}
	w := newWorld(t, "", ft)
	b := &scriptedDaemon{fakeDaemon: fakeDaemon{thread: domain.BackendThread{ThreadID: "th-1", Status: domain.BackendIdle, Model: "m1"}},
		events: make(chan domain.BackendEvent)}
	svc, cs := conflictService(t, w, ft, func(svc *domain.Service) { endpoints.UseThreadTransport(svc, domain.CodexThreads, b, ft) })
	r, err := svc.Send(w.host, domain.SendInput{ConversationID: domain.BackendConversationID("th-1"), Request: "work"})
	if err != nil {
		t.Fatal(err)
	}
	b.events <- domain.BackendEvent{Kind: domain.BackendProgress, Text: "on it"}
	w.waitState(t, r.Turn.ID, domain.TurnWorking)
	return w, b, svc, cs, r
}

// A backend turn's end whose write meets a revision conflict (an answer or
// a close wrote the Turn meanwhile) is folded into the Turn as stored,
// never dropped: the daemon says it once, and the channel then closes.
func TestBackendEndAfterAConflict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, b, svc, cs, r := workingBackendTurn(t)
		cs.armed.Store(true) // the end's write meets a conflict
		b.events <- domain.BackendEvent{Kind: domain.BackendCompleted, Text: "done"}
		got := w.waitState(t, r.Turn.ID, domain.TurnCompleted)
		if cs.armed.Load() {
			t.Fatal("no write met the conflict")
		}
		if got.FinalMessage != "done" {
			t.Fatalf("final message %q", got.FinalMessage)
		}
		svc.WaitTurnMonitors() // the monitor ends with the turn, by itself
		if got := webhookTypes(t, w, r.Turn.ID); len(got) != 2 || got[1] != "turn.completed" {
			t.Fatalf("webhooks %v, want turn.accepted then turn.completed alone", got)
		}
	})
}

// A daemon that goes away before the turn ends stalls the Turn, even when
// the stall's write meets a revision conflict: the Turn is never left
// working with no monitor.
func TestBackendStallAfterAConflict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, b, _, cs, r := workingBackendTurn(t)
		cs.armed.Store(true) // the stall's write meets a conflict
		close(b.events)
		w.waitState(t, r.Turn.ID, domain.TurnStalled)
		if cs.armed.Load() {
			t.Fatal("no write met the conflict")
		}
	})
}

// A backend turn's end that meets the store out of reach is written again
// once the store answers, never dropped (the daemon says it once), and
// the monitor does not end meanwhile.
func TestBackendEndWhileTheStoreIsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, b, svc, cs, r := workingBackendTurn(t)
		cs.down.Store(2)
		b.events <- domain.BackendEvent{Kind: domain.BackendCompleted, Text: "done"}
		got := w.waitState(t, r.Turn.ID, domain.TurnCompleted)
		if got.FinalMessage != "done" || cs.down.Load() != 0 {
			t.Fatalf("final message %q, %d outages left", got.FinalMessage, cs.down.Load())
		}
		svc.WaitTurnMonitors()
		if got := webhookTypes(t, w, r.Turn.ID); len(got) != 2 || got[1] != "turn.completed" {
			t.Fatalf("webhooks %v, want turn.accepted then turn.completed alone", got)
		}
	})
}

// runningDaemon is a scriptedDaemon whose thread runs a turn, for a Watch.
type runningDaemon struct{ scriptedDaemon }

func (b *runningDaemon) RunningTurn(context.Context, domain.BackendThread) (string, error) {
	return "turn-9", nil
}

// backendWatchWorld is a service whose thread runs a turn to watch, on the
// scripted daemon, and whose store can be made to fail.
func backendWatchWorld(t *testing.T) (*world, *runningDaemon, *domain.Service, *conflictStore) {
	t.Helper()
	ft := &fakeTerm{term: idleTerminal()}
	w := newWorld(t, "", ft)
	b := &runningDaemon{scriptedDaemon{fakeDaemon: fakeDaemon{thread: domain.BackendThread{ThreadID: "th-1", Status: domain.BackendActive, Model: "m1"}},
		events: make(chan domain.BackendEvent)}}
	svc, cs := conflictService(t, w, ft, func(svc *domain.Service) { endpoints.UseThreadTransport(svc, domain.CodexThreads, b, ft) }, anchor{ft, false})
	return w, b, svc, cs
}

// A backend Watch's end that meets the store out of reach is written again
// once the store answers, never dropped.
func TestBackendWatchEndWhileTheStoreIsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, b, svc, cs := backendWatchWorld(t)
		wt, err := svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: domain.BackendEndpoint("th-1")})
		if err != nil {
			t.Fatal(err)
		}
		b.events <- domain.BackendEvent{Kind: domain.BackendProgress, Text: "on it"}
		cs.down.Store(2)
		b.events <- domain.BackendEvent{Kind: domain.BackendCompleted, Text: "done"}
		got := w.waitWatch(t, wt.ID, domain.WatchCompleted)
		if got.FinalMessage != "done" || cs.down.Load() != 0 {
			t.Fatalf("final message %q, %d outages left", got.FinalMessage, cs.down.Load())
		}
	})
}

// A backend Watch's hard timeout is decided as every Watch's is, on the
// monitor's clock: its timer fires at the deadline, and the Watch times
// out then, not a round later (there is none: a daemon's Watch has no
// rounds but its events).
func TestBackendWatchTimesOutAtItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, b, svc, _ := backendWatchWorld(t)
		wt, err := svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: domain.BackendEndpoint("th-1"), HardTimeoutMinutes: 1})
		if err != nil {
			t.Fatal(err)
		}
		b.events <- domain.BackendEvent{Kind: domain.BackendProgress, Text: "on it"}
		// The world's waits give up after waitBound of its clock, less
		// than the timeout: this one waits past it.
		bound := w.clock.NewTimer(2*time.Minute, "test", "bound")
		defer bound.Stop()
		for {
			woken := w.changes.next()
			cur, err := w.store.Watch(context.Background(), wt.ID)
			if err != nil {
				t.Fatal(err)
			}
			if cur.State == domain.WatchTimedOut {
				if want := wt.CreatedAt.Add(time.Minute); !cur.EndedAt.Equal(want) || cur.Reason == "" {
					t.Fatalf("ended at %s (%q), want at the deadline %s", cur.EndedAt, cur.Reason, want)
				}
				break
			}
			select {
			case <-woken:
			case <-bound.C:
				t.Fatalf("watch is %s two minutes after its one-minute timeout", cur.State)
			}
		}
		if got := webhookTypes(t, w, wt.ID); len(got) == 0 || got[len(got)-1] != "watch.timed_out" {
			t.Fatalf("webhooks %v, want watch.timed_out last", got)
		}
	})
}
