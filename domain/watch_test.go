package domain_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"akk/domain"
)

type anchor struct {
	*fakeTerm
	exact bool
}

func (a anchor) AnchorWatch(context.Context, domain.Terminal) (domain.DurableMark, bool, error) {
	return "w0", a.exact, nil
}

func (w *world) waitWatch(t *testing.T, id string, want domain.WatchState) domain.Watch {
	t.Helper()
	var cur domain.Watch
	w.until(t, func() string {
		var err error
		if cur, err = w.store.Watch(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		if cur.State == want {
			return ""
		}
		return fmt.Sprintf("watch %s is %s, want %s", id, cur.State, want)
	})
	return cur
}

// waitWebhook waits until a notification of that type about id is stored.
func (w *world) waitWebhook(t *testing.T, id, typ string) {
	t.Helper()
	w.until(t, func() string {
		if got := webhookTypes(t, w, id); !slices.Contains(got, typ) {
			return fmt.Sprintf("no %s; webhooks %v", typ, got)
		}
		return ""
	})
}

func TestExactWatchEndsFromTheRecordAndNeverTypes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		w.useParts(t, anchor{ft, true})
		if _, err := w.svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: "term_a"}); code(err) != domain.CodeNothingToWatch {
			t.Fatalf("watch an idle pane: %v", err)
		}
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking })
		wt, err := w.svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: "term_a"})
		if err != nil || wt.Mode != domain.WatchModeExact || wt.Confidence() != domain.ConfidenceExact {
			t.Fatalf("watch: %+v %v", wt, err)
		}
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenAwaitingApproval })
		w.waitWebhook(t, wt.ID, "watch.approval_observed")
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking })
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Completed: true, FinalMessage: "all done"} })
		done := w.waitWatch(t, wt.ID, domain.WatchCompleted)
		if done.FinalMessage != "all done" {
			t.Fatalf("final message %q", done.FinalMessage)
		}
		if got := webhookTypes(t, w, wt.ID); len(got) != 2 || got[0] != "watch.approval_observed" || got[1] != "watch.completed" {
			t.Fatalf("webhooks %v", got)
		}
		if n, i := ft.counts(); n != 0 || i != 0 {
			t.Fatalf("a watch typed: %d submits, %d interrupts", n, i)
		}
		// The conversation row offered watch while a task ran, never send.
		if _, err := w.svc.GetWatch(w.other, wt.ID); code(err) != domain.CodeWatchNotFound {
			t.Fatalf("another host read the watch: %v", err)
		}
	})
}

func TestBestEffortWatchNeedsStableIdleAndGoneIsInvalidated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		old := domain.StableIdle
		domain.StableIdle = 100 * time.Millisecond
		defer func() { domain.StableIdle = old }()
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		w.useParts(t, anchor{ft, false})
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking })
		cs, _ := w.svc.Conversations(w.host)
		if len(cs[0].Actions) != 1 || cs[0].Actions[0].Name != "watch" {
			t.Fatalf("actions while working: %+v", cs[0].Actions)
		}
		wt, err := w.svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: "term_a"})
		if err != nil || wt.Confidence() != domain.ConfidenceBest {
			t.Fatalf("watch: %+v %v", wt, err)
		}
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenIdle })
		w.waitWatch(t, wt.ID, domain.WatchCompleted)

		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking })
		wt2, _ := w.svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: "term_a"})
		ft.set(func(f *fakeTerm) { f.gone = true })
		w.waitWatch(t, wt2.ID, domain.WatchInvalidated)
		if n, i := ft.counts(); n != 0 || i != 0 {
			t.Fatalf("a watch typed: %d submits, %d interrupts", n, i)
		}
	})
}

// Another host cannot Watch a pane a Turn of this host holds (it would read
// its final message); the holding host and the operator can.
func TestWatchRefusedWhileAnotherHostsTurnHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		w.useParts(t, anchor{ft, true})
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "mine"})
		if err != nil {
			t.Fatal(err)
		}
		ft.set(func(f *fakeTerm) {
			f.progress = domain.TurnProgress{Accepted: true}
			f.term.ScreenState = domain.ScreenWorking
		})
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		if _, err := w.svc.StartWatch(w.other, domain.NewWatchInput{TerminalID: "term_a"}); code(err) != domain.CodeConflictActiveTurn {
			t.Fatalf("another host's watch of a held pane: %v", err)
		}
		if _, err := w.svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: "term_a"}); err != nil {
			t.Fatalf("the holding host's own watch: %v", err)
		}
	})
}

// One controller's active Watches are bounded.
func TestWatchesPerHostAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		ft.term.ScreenState = domain.ScreenWorking
		w := newWorld(t, "", ft)
		w.useParts(t, anchor{ft, true})
		for i := range domain.MaxActiveWatchesPerHost {
			if _, err := w.svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: "term_a"}); err != nil {
				t.Fatalf("watch %d: %v", i, err)
			}
		}
		if _, err := w.svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: "term_a"}); code(err) != domain.CodeWatchLimit {
			t.Fatalf("one watch too many: %v", err)
		}
		if _, err := w.svc.StartWatch(w.other, domain.NewWatchInput{TerminalID: "term_a"}); err != nil {
			t.Fatalf("another host's first watch: %v", err)
		}
	})
}

type threadAnchor struct{ anchor }

// threadAnchorPanes is a pane transport that anchors on a named thread.
type threadAnchorPanes struct {
	panes
	a threadAnchor
}

func (p threadAnchorPanes) AnchorWatchThread(ctx context.Context, t domain.Terminal, thread string) (domain.DurableMark, bool, error) {
	return p.a.AnchorWatchThread(ctx, t, thread)
}

func (a threadAnchor) AnchorWatchThread(_ context.Context, _ domain.Terminal, thread string) (domain.DurableMark, bool, error) {
	return domain.DurableMark("w-" + thread), thread == "thr_pane", nil
}

type fakeBackend struct {
	thread string
	ok     bool
	during func() // runs while the backend is asked
	asked  int
}

func (b *fakeBackend) ForegroundThread(context.Context, domain.Terminal) (string, bool, error) {
	b.asked++
	if b.during != nil {
		b.during()
	}
	return b.thread, b.ok, nil
}

// A Codex pane whose records cannot name its task: the backend names its
// thread, with no input, and the Watch is exact; only while the pane worked
// before and after it was asked, the same process, and only a thread whose
// record holds the open task. Anything less stays best effort.
func TestBackendNamesTheThreadOfAWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		ft.term.Agent.Kind, ft.term.Agent.ThreadProbe, ft.term.NativeIdentity, ft.term.ScreenState = domain.AgentCodex, true, domain.IdentityAmbiguous, domain.ScreenWorking
		w := newWorld(t, "", ft)
		a := threadAnchor{anchor{ft, false}}
		w.use(t, threadAnchorPanes{w.panes.With(a), a})
		b := &fakeBackend{thread: "thr_pane", ok: true}
		w.svc.UseBackendThreads(b)
		start := func() domain.Watch {
			t.Helper()
			wt, err := w.svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: "term_a"})
			if err != nil {
				t.Fatal(err)
			}
			w.svc.Unwatch(w.host, wt.ID)
			return wt
		}
		if wt := start(); wt.Mode != domain.WatchModeExact || wt.Mark != "w-thr_pane" {
			t.Fatalf("named thread: %+v", wt)
		}
		b.ok = false
		if wt := start(); wt.Mode != domain.WatchModeActivity {
			t.Fatalf("backend could not name it: %+v", wt)
		}
		b.ok, b.thread = true, "thr_other" // its record holds no open task
		if wt := start(); wt.Mode != domain.WatchModeActivity {
			t.Fatalf("a thread without the open task: %+v", wt)
		}
		b.thread = "thr_pane"
		b.during = func() { ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenAwaitingApproval }) }
		if wt := start(); wt.Mode != domain.WatchModeActivity {
			t.Fatalf("the pane changed while the backend was asked: %+v", wt)
		}
		b.during = nil
		ft.set(func(f *fakeTerm) {
			f.term.ScreenState = domain.ScreenWorking
			f.term.NativeIdentity = domain.IdentityResolved
		})
		asked := b.asked
		start()
		ft.set(func(f *fakeTerm) {
			f.term.Agent.Kind, f.term.Agent.ThreadProbe = domain.AgentClaude, false
			f.term.NativeIdentity = domain.IdentityAmbiguous
		})
		start()
		if b.asked != asked {
			t.Fatal("the backend was asked of a pane whose records name its task, or of Claude Code")
		}
		if n, i := ft.counts(); n != 0 || i != 0 {
			t.Fatalf("a watch typed: %d submits, %d interrupts", n, i)
		}
	})
}
