package domain_test

import (
	"github.com/coder/quartz"

	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"akk/domain"
	"akk/domain/panetest"
	"akk/persistence"
	"akk/persistence/storetest"
)

// fakeTerm is a scripted terminal: tests set its screen and what the
// agent's record proves, and count every input.
type fakeTerm struct {
	mu         sync.Mutex
	term       domain.Terminal
	gone       bool
	progress   domain.TurnProgress
	submits    []string
	interrupts int
	stage      domain.SubmitStage
	submitErr  error
	looks      int           // Observe calls so far
	looked     chan struct{} // closed at the next Observe
}

func (f *fakeTerm) Observe(_ context.Context, id string) (domain.Terminal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looks++
	if f.looked != nil {
		close(f.looked)
		f.looked = nil
	}
	if f.gone || id != f.term.ID {
		return domain.Terminal{}, domain.ErrTerminalGone
	}
	return f.term, nil
}
func (f *fakeTerm) Mark(context.Context, domain.Terminal) (domain.DurableMark, error) {
	return "m0", nil
}
func (f *fakeTerm) Submit(_ context.Context, _ domain.Terminal, text string) (domain.SubmitStage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.submits = append(f.submits, text)
	if f.stage != "" {
		return f.stage, f.submitErr
	}
	f.term.ScreenState = domain.ScreenWorking
	return domain.SubmitEntered, nil
}
func (f *fakeTerm) Interrupt(context.Context, domain.Terminal) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.interrupts++
	return nil
}
func (f *fakeTerm) Progress(_ context.Context, _ domain.Terminal, mark domain.DurableMark, _ string) (domain.TurnProgress, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.progress
	p.Mark = mark
	return p, nil
}
func (f *fakeTerm) set(fn func(f *fakeTerm)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

// lookedAgain waits until the terminal has been observed n more times
// after the call: with n of 4, a monitor round that began before the
// screen last changed has ended, and one has decided on the changed
// screen (a screen is confirmed by a second look), whatever it stored or
// left as it was.
func (w *world) lookedAgain(t *testing.T, f *fakeTerm, n int) {
	t.Helper()
	f.mu.Lock()
	want := f.looks + n
	f.mu.Unlock()
	next := func() <-chan struct{} {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.looked == nil {
			f.looked = make(chan struct{})
		}
		return f.looked
	}
	w.untilOn(t, next, func() string {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.looks >= want {
			return ""
		}
		return fmt.Sprintf("the terminal was observed %d times, want %d", f.looks, want)
	})
}

func (f *fakeTerm) counts() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.submits), f.interrupts
}

func (f *fakeTerm) Discover(context.Context) ([]domain.Terminal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gone {
		return nil, nil
	}
	return []domain.Terminal{f.term}, nil
}
func (f *fakeTerm) Diagnose(context.Context) (domain.TerminalDiagnosis, error) {
	return domain.TerminalDiagnosis{}, nil
}

// clock is a quartz mock, moved forward by skew (a world's Advance) for
// what reads the time, and by the world's waits (see untilOn) for its
// timers and tickers.
type clock struct {
	*quartz.Mock
	skew *atomic.Int64
}

func newClock(t *testing.T, skew *atomic.Int64) clock {
	// Quiet: a failing test shows its evidence, not every tick.
	return clock{Mock: quartz.NewMock(t).WithLogger(quartz.NoOpLogger), skew: skew}
}

func (c clock) Now(...string) time.Time {
	return c.Mock.Now().Add(time.Duration(c.skew.Load()))
}

func (c clock) Since(t time.Time, _ ...string) time.Duration { return c.Now().Sub(t) }
func (c clock) Until(t time.Time, _ ...string) time.Duration { return t.Sub(c.Now()) }

type ids struct{}

func (ids) New(p string) string {
	b := make([]byte, 8)
	rand.Read(b)
	return p + "_" + hex.EncodeToString(b)
}
func (ids) Secret(n int) []byte { b := make([]byte, n); rand.Read(b); return b }

type world struct {
	svc     *domain.Service
	store   storetest.Store
	changes *changes // the store's commits, for waits that never sleep
	term    *fakeTerm
	cancel  context.CancelFunc
	skew    *atomic.Int64
	clock   clock           // the service's clock
	host    context.Context // a host principal
	other   context.Context // another host

	panes    panes // the pane transport, as last wired (use)
	redact   domain.Redactor
	cfg      domain.TurnConfig
	monitors context.Context // the monitors' context
}

// use wires p in as the world's pane transport (before the test's first
// Turn or Watch), with the world's redactor and timing, and starts its
// monitors.
func (w *world) use(t *testing.T, p domain.PaneTransport) {
	t.Helper()
	if ps, ok := p.(panes); ok {
		w.panes = ps
	}
	panetest.Use(w.svc, p, w.redact, w.cfg)
	if err := w.svc.StartTurnMonitors(w.monitors); err != nil {
		t.Fatal(err)
	}
}

// useParts wires in the world's pane transport with parts in their roles
// (panes.with).
func (w *world) useParts(t *testing.T, parts ...any) { t.Helper(); w.use(t, w.panes.With(parts...)) }

func idleTerminal() domain.Terminal {
	return domain.Terminal{ID: "term_a", Agent: domain.Agent{Kind: domain.AgentClaude, Version: "2.1.328", Profile: "claude-2.1.328"},
		ScreenState: domain.ScreenIdle, ComposerEmpty: true, NativeIdentity: domain.IdentityResolved, NativeThreadID: "thread-1"}
}

func newWorld(t *testing.T, dbPath string, term *fakeTerm) *world {
	t.Helper()
	return newWorldRedacting(t, dbPath, term, nil)
}

// newWorldRedacting is newWorld with a redactor for screen-derived text.
func newWorldRedacting(t *testing.T, dbPath string, term *fakeTerm, redact domain.Redactor) *world {
	t.Helper()
	if dbPath == "" {
		dbPath = newLocation(t)
	}
	store, err := storetest.OpenStoreAt(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	clk := testClock(t)
	svc := domain.NewService(store, clk, ids{}, nil)
	svc.UseTerminals(term)
	// Windows no busy machine runs out of by accident: a test that wants
	// one to pass moves the clock (Advance) rather than waiting for it.
	cfg := domain.TurnConfig{PollInterval: 5 * time.Millisecond, ScreenInterval: 10 * time.Millisecond,
		AcceptWindow: 5 * time.Second, DefaultInactivity: time.Minute}
	panetest.Use(svc, panesOf(term), redact, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.StartTurnMonitors(ctx); err != nil {
		t.Fatal(err)
	}
	w := &world{svc: svc, store: store, term: term, skew: clk.skew, clock: clk, changes: watchChanges(store),
		panes: panesOf(term), redact: redact, cfg: cfg, monitors: ctx}
	w.cancel = func() { cancel(); svc.WaitTurnMonitors(); store.Close() }
	t.Cleanup(w.cancel)
	op := domain.WithPrincipal(context.Background(), domain.Principal{Operator: true})
	a, err := svc.RegisterHost(op, domain.NewHost{Name: "a", WebhookURL: "http://127.0.0.1:9/a"})
	if err != nil {
		// A second world on the same store: reuse the first host.
		hs, _ := store.Hosts(context.Background())
		a.Host = hs[0]
	}
	b, _ := svc.RegisterHost(op, domain.NewHost{Name: "b", WebhookURL: "http://127.0.0.1:9/b"})
	w.host = domain.WithPrincipal(context.Background(), domain.Principal{HostID: a.Host.ID, Conversation: "chat-1"})
	w.other = domain.WithPrincipal(context.Background(), domain.Principal{HostID: b.Host.ID})
	return w
}

// now is the service's clock's time.
func (w *world) now() time.Time { return w.clock.Now() }

// Advance moves the service's clock forward.
func (w *world) Advance(d time.Duration) { w.skew.Add(int64(d)) }

func (w *world) waitState(t *testing.T, id string, want domain.TurnState) domain.Turn {
	t.Helper()
	var cur domain.Turn
	w.until(t, func() string {
		// The store, not the status: a status read would create offers.
		var err error
		if cur, err = w.store.Turn(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		if cur.State == want {
			return ""
		}
		return fmt.Sprintf("turn %s is %s, want %s", id, cur.State, want)
	})
	return cur
}

// changes wakes waiters at each transaction the store commits with an
// event or an outbox row: every state change a test waits for writes one.
type changes struct {
	mu sync.Mutex
	ch chan struct{}
}

func watchChanges(store storetest.Store) *changes {
	c := &changes{ch: make(chan struct{})}
	store.OnChange(func(persistence.Change) { c.fire() })
	return c
}

func (c *changes) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.ch)
	c.ch = make(chan struct{})
}

// next is closed at the next commit.
func (c *changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ch
}

// until waits for evidence, never for a duration: unmet says what is not
// so yet ("" once it is), read again at each commit of the store.
func (w *world) until(t *testing.T, unmet func() string) {
	t.Helper()
	w.untilOn(t, w.changes.next, unmet)
}

// waitBound bounds a test's wait for evidence, in the world's clock: past
// it, the evidence is taken to be missing and the test fails.
const waitBound = 10 * time.Second

// untilOn is until woken by next's channels, failing once the world's
// clock has moved waitBound (see drive).
func (w *world) untilOn(t *testing.T, next func() <-chan struct{}, unmet func() string) {
	t.Helper()
	bound := w.clock.NewTimer(waitBound, "test", "bound")
	defer bound.Stop()
	for {
		woken := next() // before the read: a commit in between wakes at once
		why := unmet()
		if why == "" {
			return
		}
		select {
		case <-woken:
		case <-bound.C:
			t.Fatal(why)
		}
	}
}

// clocks are the running tests' clocks: a test's worlds (a world started
// again on the same store, a second service) share its one clock, moved
// by one driver.
var clocks sync.Map // *testing.T → clock

// testClock is t's clock, made and driven at its first call (see drive)
// until t ends.
func testClock(t *testing.T) clock {
	if c, ok := clocks.Load(t); ok {
		return c.(clock)
	}
	c := newClock(t, new(atomic.Int64))
	clocks.Store(t, c)
	stop, driven := make(chan struct{}), make(chan struct{})
	go func() { drive(c, stop); close(driven) }()
	// Registered before any world's: it runs after them.
	t.Cleanup(func() { close(stop); <-driven; clocks.Delete(t) })
	return c
}

// drive moves c, in a synctest bubble, until stop is closed: each time
// every other goroutine of the bubble waits (the test for its evidence,
// the monitors for their next tick), c moves to its next timer or tick,
// and the world runs again. No real time passes. When nothing is left to
// wake anything, drive ends and the bubble reports the deadlock with
// every goroutine's stack.
func drive(c clock, stop <-chan struct{}) {
	for {
		synctest.Wait()
		select {
		case <-stop:
			return
		default:
		}
		d, ok := c.Peek()
		if !ok {
			return
		}
		c.Advance(d).MustWait(context.Background())
	}
}

func webhookTypes(t *testing.T, w *world, turnID string) []string {
	t.Helper()
	ns, err := w.store.NotificationsAbout(context.Background(), turnID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range ns {
		out = append(out, n.Type)
	}
	return out
}

func code(err error) domain.Code { return domain.ErrorCode(err) }

func TestSendAcceptedThenCompleted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "fix the bug", MessageID: "m-1"})
		if err != nil || r.Outcome != domain.OutcomeDone || r.Turn.State != domain.TurnDispatching {
			t.Fatalf("send: %+v %v", r, err)
		}
		ft.set(func(f *fakeTerm) {
			f.progress = domain.TurnProgress{Accepted: true, NativeTurnID: "nt-1", LatestText: "working on it"}
		})
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		ft.set(func(f *fakeTerm) { f.progress.Completed, f.progress.FinalMessage = true, "fixed" })
		done := w.waitState(t, r.Turn.ID, domain.TurnCompleted)
		if done.FinalMessage != "fixed" || done.Conversation != "chat-1" {
			t.Fatalf("completed turn %+v", done)
		}
		if got := webhookTypes(t, w, r.Turn.ID); len(got) != 2 || got[0] != "turn.accepted" || got[1] != "turn.completed" {
			t.Fatalf("webhooks %v", got)
		}
		// Idempotent: the same key returns the same Turn and types nothing.
		again, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "fix the bug", MessageID: "m-1"})
		if err != nil || !again.Existing || again.Turn.ID != r.Turn.ID {
			t.Fatalf("idempotent send: %+v %v", again, err)
		}
		if _, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "other", MessageID: "m-1"}); code(err) != domain.CodeIdempotencyKeyReused {
			t.Fatalf("key reuse: %v", err)
		}
		if n, _ := ft.counts(); n != 1 {
			t.Fatalf("%d submits, want 1", n)
		}
		// Another host cannot see it.
		if _, err := w.svc.Turn(w.other, r.Turn.ID); code(err) != domain.CodeTurnNotFound {
			t.Fatalf("other host: %v", err)
		}
	})
}

func TestSendRefusalsTypeNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		cases := []struct {
			name string
			in   domain.SendInput
			prep func(f *fakeTerm)
			want domain.Code
		}{
			{"slash", domain.SendInput{TerminalID: "term_a", Request: "/clear"}, nil, domain.CodeSlashCommandRejected},
			{"slash after blank lines", domain.SendInput{TerminalID: "term_a", Request: "\n\n  /model x\nthen"}, nil, domain.CodeSlashCommandRejected},
			{"shell", domain.SendInput{TerminalID: "term_a", Request: "!rm -rf ."}, nil, domain.CodeShellPrefixRejected},
			{"empty", domain.SendInput{TerminalID: "term_a", Request: "  \n"}, nil, domain.CodeValidationFailed},
			{"escape", domain.SendInput{TerminalID: "term_a", Request: "hi\x1b[201~"}, nil, domain.CodeValidationFailed},
			{"too long", domain.SendInput{TerminalID: "term_a", Request: strings.Repeat("é", 4001)}, nil, domain.CodeValidationFailed},
			{"tab", domain.SendInput{TerminalID: "term_a", Request: "a\tb"}, nil, domain.CodeValidationFailed},
			{"zero-width space before a slash command", domain.SendInput{TerminalID: "term_a", Request: "\u200b/clear"}, nil, domain.CodeValidationFailed},
			{"byte order mark", domain.SendInput{TerminalID: "term_a", Request: "\ufeffhi"}, nil, domain.CodeValidationFailed},
			{"right-to-left override", domain.SendInput{TerminalID: "term_a", Request: "run tests\u202e/gnp.exe"}, nil, domain.CodeValidationFailed},
			{"isolate", domain.SendInput{TerminalID: "term_a", Request: "a \u2066b\u2069 c"}, nil, domain.CodeValidationFailed},
			{"both targets", domain.SendInput{TerminalID: "term_a", SessionID: "sess_x", Request: "hi"}, nil, domain.CodeValidationFailed},
			{"unknown terminal", domain.SendInput{TerminalID: "term_zz", Request: "hi"}, nil, domain.CodeTerminalNotFound},
			{"unknown session", domain.SendInput{SessionID: "sess_zz", Request: "hi"}, nil, domain.CodeSessionNotFound},
			{"working", domain.SendInput{TerminalID: "term_a", Request: "hi"}, func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking }, domain.CodeTerminalNotIdle},
			{"composer text", domain.SendInput{TerminalID: "term_a", Request: "hi"}, func(f *fakeTerm) { f.term.ComposerEmpty = false }, domain.CodeTerminalNotIdle},
			{"unprofiled", domain.SendInput{TerminalID: "term_a", Request: "hi"}, func(f *fakeTerm) { f.term.Agent.Profile = domain.ProfileUnprofiled }, domain.CodeUnprofiledAgent},
			{"screen changed at submit", domain.SendInput{TerminalID: "term_a", Request: "hi"}, func(f *fakeTerm) { f.stage, f.submitErr = domain.SubmitNothing, errors.New("not idle") }, domain.CodeTerminalNotIdle},
		}
		for _, c := range cases {
			// (No subtests in a bubble: each case names itself.)
			func() {
				ft.set(func(f *fakeTerm) { f.term = idleTerminal(); f.stage, f.submitErr = "", nil; f.submits = nil })
				if c.prep != nil {
					ft.set(c.prep)
				}
				_, err := w.svc.Send(w.host, c.in)
				if code(err) != c.want {
					t.Fatalf("%s: code %s (%v), want %s", c.name, code(err), err, c.want)
				}
				ts, _ := w.svc.Turns(w.host, "", 0)
				if len(ts) != 0 {
					t.Fatalf("%s: a refused send left a turn: %+v", c.name, ts)
				}
			}()
		}
		if n, _ := ft.counts(); n != 0 && len(ft.submits) > 1 {
			t.Fatalf("submits: %v", ft.submits)
		}
	})
}

func TestSecondSendToHeldTerminalConflicts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "one"})
		if err != nil {
			t.Fatal(err)
		}
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenIdle }) // even if the screen looks idle
		if _, err := w.svc.Send(w.other, domain.SendInput{TerminalID: "term_a", Request: "two"}); code(err) != domain.CodeConflictActiveTurn {
			t.Fatalf("second send: %v", err)
		}
		// The listing offers no send while a Turn holds the terminal, and hides whose it is.
		cs, _ := w.svc.Conversations(w.other)
		if len(cs[0].Actions) != 0 || !cs[0].HeldByOther || cs[0].CurrentTurn != nil {
			t.Fatalf("listing for another host: %+v", cs[0])
		}
		cs, _ = w.svc.Conversations(w.host)
		if cs[0].CurrentTurn == nil || cs[0].CurrentTurn.ID != r.Turn.ID {
			t.Fatalf("listing for the owner: %+v", cs[0])
		}
	})
}

func TestUnprovenDeliveryIsUncertainAndNeverRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal(), stage: domain.SubmitPasted, submitErr: errors.New("composer did not match")}
		w := newWorld(t, "", ft)
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "x", MessageID: "k"})
		if err != nil || r.Outcome != domain.OutcomeUncertain || !r.DoNotRetry || r.Turn.State != domain.TurnDeliveryUncertain {
			t.Fatalf("send: %+v %v", r, err)
		}
		again, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "x", MessageID: "k"})
		if err != nil || !again.DoNotRetry || again.Turn.ID != r.Turn.ID {
			t.Fatalf("retry with the same key: %+v %v", again, err)
		}
		if n, _ := ft.counts(); n != 1 {
			t.Fatalf("%d submits", n)
		}
		if got := webhookTypes(t, w, r.Turn.ID); len(got) != 1 || got[0] != "turn.delivery_uncertain" {
			t.Fatalf("webhooks %v", got)
		}
	})
}

func TestCancelPressesOnceAndHumanInterruptWaitsForHost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		r, _ := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "slow"})
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true} })
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		if _, err := w.svc.Cancel(w.host, r.Turn.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Cancel(w.host, r.Turn.ID); err != nil {
			t.Fatal(err)
		}
		if _, n := ft.counts(); n != 1 {
			t.Fatalf("%d interrupts, want 1", n)
		}
		ft.set(func(f *fakeTerm) { f.progress.Interrupted = true; f.term.ScreenState = domain.ScreenIdle })
		w.waitState(t, r.Turn.ID, domain.TurnCancelled)

		// A person's interrupt (no cancel asked) leaves the Turn waiting for the host.
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{} })
		r2, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "again", MessageID: "m-2"})
		if err != nil {
			t.Fatal(err)
		}
		ft.set(func(f *fakeTerm) {
			f.progress = domain.TurnProgress{Accepted: true, Interrupted: true}
			f.term.ScreenState = domain.ScreenIdle
		})
		w.waitState(t, r2.Turn.ID, domain.TurnWaitingForHost)
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{} })
		if _, err := w.svc.Respond(w.host, r2.Turn.ID, "/clear"); code(err) != domain.CodeSlashCommandRejected {
			t.Fatalf("respond slash: %v", err)
		}
		res, err := w.svc.Respond(w.host, r2.Turn.ID, "go on")
		if err != nil || res.Turn.State != domain.TurnDispatching {
			t.Fatalf("respond: %+v %v", res, err)
		}
		// The original send, retried with its key after the respond, is the same Turn.
		if same, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "again", MessageID: "m-2"}); err != nil || !same.Existing || same.Turn.ID != r2.Turn.ID {
			t.Fatalf("resend after respond: %+v %v", same, err)
		}
		ft.set(func(f *fakeTerm) {
			f.progress = domain.TurnProgress{Accepted: true, Completed: true, FinalMessage: "ok"}
		})
		w.waitState(t, r2.Turn.ID, domain.TurnCompleted)
		// The respond is accepted anew inside the same Turn.
		if got := strings.Join(webhookTypes(t, w, r2.Turn.ID), ","); got != "turn.accepted,turn.waiting_for_host,turn.accepted,turn.completed" {
			t.Fatalf("webhooks %v", got)
		}
	})
}

func TestStallRenewAndRestartResumes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := newLocation(t)
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, db, ft)
		r, _ := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "task"})
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true} })
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		w.Advance(2 * time.Minute) // no activity within the inactivity limit
		w.waitState(t, r.Turn.ID, domain.TurnStalled)
		if _, err := w.svc.Renew(w.host, r.Turn.ID); err != nil {
			t.Fatal(err)
		}
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		ft.set(func(f *fakeTerm) { f.progress.LastActivity = w.now().Add(time.Hour) }) // keep it alive
		// The daemon stops; the agent finishes meanwhile; a new daemon resumes.
		w.cancel()
		ft.set(func(f *fakeTerm) { f.progress.Completed, f.progress.FinalMessage = true, "done" })
		w2 := newWorld(t, db, ft)
		w2.host = w.host
		w2.waitState(t, r.Turn.ID, domain.TurnCompleted)
		completed := 0
		for _, typ := range webhookTypes(t, w2, r.Turn.ID) {
			if typ == "turn.completed" {
				completed++
			}
		}
		if completed != 1 {
			t.Fatalf("%d turn.completed webhooks", completed)
		}
		if n, i := ft.counts(); n != 1 || i != 0 {
			t.Fatalf("input after restart: %d submits, %d interrupts", n, i)
		}
	})
}

func TestCloseReleasesWithoutInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		r, _ := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "task"})
		if _, err := w.svc.Close(w.other, r.Turn.ID, ""); code(err) != domain.CodeTurnNotFound {
			t.Fatalf("other host close: %v", err)
		}
		res, err := w.svc.Close(w.host, r.Turn.ID, "done by hand")
		if err != nil || res.Turn.State != domain.TurnClosed {
			t.Fatalf("close: %+v %v", res, err)
		}
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenIdle })
		if _, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "next"}); err != nil {
			t.Fatalf("send after close: %v", err)
		}
		if n, i := ft.counts(); n != 2 || i != 0 {
			t.Fatalf("%d submits %d interrupts", n, i)
		}
	})
}

// cancellingTerm cancels the request that asked for input while its keys
// are being sent, and records whether the key sequence's own context held.
type cancellingTerm struct {
	*fakeTerm
	cancelRequest func()
	seqErr        error
}

func (c *cancellingTerm) Submit(ctx context.Context, t domain.Terminal, text string) (domain.SubmitStage, error) {
	c.cancelRequest() // the client goes away after the paste
	c.seqErr = ctx.Err()
	return c.fakeTerm.Submit(ctx, t, text)
}

// Once the reservation is durable, the key sequence runs to its end even
// when the request's context ends (a disconnect, a shutdown).
func TestKeySequenceOutlivesTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		ctx, cancel := context.WithCancel(w.host)
		ct := &cancellingTerm{fakeTerm: ft, cancelRequest: cancel}
		w.use(t, panesOf(ct))
		r, err := w.svc.Send(ctx, domain.SendInput{TerminalID: "term_a", Request: "keep going"})
		if err != nil || ct.seqErr != nil {
			t.Fatalf("send %+v %v; the key sequence's context ended with the request: %v", r, err, ct.seqErr)
		}
		if r.Outcome != domain.OutcomeDone {
			t.Fatalf("outcome %s", r.Outcome)
		}
		if err := w.svc.WaitForInput(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

// The store holds at most one Turn that holds a terminal, whoever writes it.
func TestStoreRefusesASecondHoldingTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "first"})
		if err != nil {
			t.Fatal(err)
		}
		second := r.Turn
		second.ID, second.MessageID, second.State = "turn_second", "", domain.TurnDispatching
		err = w.store.InTx(context.Background(), func(tx domain.Tx) error { return tx.InsertTurn(context.Background(), second) })
		if code(err) != domain.CodeConflictActiveTurn {
			t.Fatalf("a second holding Turn of one terminal: %v", err)
		}
		second.State = domain.TurnCompleted
		if err := w.store.InTx(context.Background(), func(tx domain.Tx) error { return tx.InsertTurn(context.Background(), second) }); err != nil {
			t.Fatalf("a finished Turn beside the holding one: %v", err)
		}
	})
}

// conflictStore fails the next Turn update with a revision conflict, as
// when the monitor wrote the Turn between an action's read and its write.
type conflictStore struct {
	storetest.Store
	armed atomic.Bool
	down  atomic.Int32 // the next this many write transactions find the store out of reach
	// readsDown: the next this many reads of a Turn find it out of reach.
	readsDown atomic.Int32
}

func (c *conflictStore) Turn(ctx context.Context, id string) (domain.Turn, error) {
	if c.readsDown.Add(-1) >= 0 {
		return domain.Turn{}, &domain.Error{Code: domain.CodeStoreUnavailable, Message: "the store cannot be reached"}
	}
	c.readsDown.Store(0)
	return c.Store.Turn(ctx, id)
}

func (c *conflictStore) InTx(ctx context.Context, fn func(domain.Tx) error) error {
	if c.down.Add(-1) >= 0 {
		return &domain.Error{Code: domain.CodeStoreUnavailable, Message: "the store cannot be reached"}
	}
	c.down.Store(0)
	return c.Store.InTx(ctx, func(tx domain.Tx) error { return fn(conflictTx{tx, &c.armed}) })
}

type conflictTx struct {
	domain.Tx
	armed *atomic.Bool
}

func (c conflictTx) UpdateTurn(ctx context.Context, t domain.Turn) error {
	if c.armed.CompareAndSwap(true, false) {
		return domain.ErrRevisionConflict
	}
	return c.Tx.UpdateTurn(ctx, t)
}

// conflictService is a second service on w's store whose next Turn update
// can be made to meet a revision conflict; with (optional) wires more in
// before its monitors start.
func conflictService(t *testing.T, w *world, ft *fakeTerm, with func(*domain.Service), parts ...any) (*domain.Service, *conflictStore) {
	t.Helper()
	cs := &conflictStore{Store: w.store}
	svc := domain.NewService(cs, w.clock, ids{}, nil)
	svc.UseTerminals(ft)
	panetest.Use(svc, panesOf(ft).With(parts...), nil, domain.TurnConfig{PollInterval: 5 * time.Millisecond, ScreenInterval: 10 * time.Millisecond,
		AcceptWindow: 300 * time.Millisecond, DefaultInactivity: time.Minute})
	if with != nil {
		with(svc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); svc.WaitTurnMonitors() })
	if err := svc.StartTurnMonitors(ctx); err != nil {
		t.Fatal(err)
	}
	return svc, cs
}

// An action whose write meets a revision conflict (the monitor wrote the
// Turn meanwhile) reads the Turn again and acts on what it is now, instead
// of failing with an internal error; a refused respond leaves the Turn
// monitored.
func TestActionsRetryARevisionConflict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		svc, cs := conflictService(t, w, ft, nil)
		r, err := svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "first"})
		if err != nil {
			t.Fatal(err)
		}
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true} })
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		cs.armed.Store(true)
		res, err := svc.Cancel(w.host, r.Turn.ID)
		if err != nil || res.Outcome != domain.OutcomeDone {
			t.Fatalf("cancel after a conflict: %+v %v", res, err)
		}
		if _, interrupts := ft.counts(); interrupts != 1 {
			t.Fatalf("%d interrupts, want exactly 1", interrupts)
		}
		cs.armed.Store(true)
		if _, err := svc.Close(w.host, r.Turn.ID, "done by hand"); err != nil {
			t.Fatalf("close after a conflict: %v", err)
		}
	})
}

// A pane monitor whose read of its Turn, right after its own write woke
// it, finds the store out of reach keeps following the Turn: the agent's
// end is stored once the store answers. (It used to end there, leaving the
// Turn working for good: seen when PostgreSQL restarted mid-Turn.)
func TestPaneMonitorOutlivesAStoreOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		svc, cs := conflictService(t, w, ft, nil)
		r, err := svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "first"})
		if err != nil {
			t.Fatal(err)
		}
		cs.readsDown.Store(1)
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true} })
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		ft.set(func(f *fakeTerm) { f.progress.Completed, f.progress.FinalMessage = true, "done" })
		w.waitState(t, r.Turn.ID, domain.TurnCompleted)
		if cs.readsDown.Load() > 0 {
			t.Fatal("no read met the outage")
		}
	})
}

// A removed host's Turn keeps running but queues no more webhooks.
func TestRemovedHostsTurnStopsCallingBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "work on"})
		if err != nil {
			t.Fatal(err)
		}
		ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true} })
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		op := domain.WithPrincipal(context.Background(), domain.Principal{Operator: true})
		if err := w.svc.DeleteHost(op, r.Turn.HostID); err != nil {
			t.Fatal(err)
		}
		before, _ := w.store.NotificationsAbout(context.Background(), r.Turn.ID)
		ft.set(func(f *fakeTerm) {
			f.progress = domain.TurnProgress{Accepted: true, Completed: true, FinalMessage: "done"}
		})
		w.waitState(t, r.Turn.ID, domain.TurnCompleted)
		after, _ := w.store.NotificationsAbout(context.Background(), r.Turn.ID)
		if len(after) != len(before) {
			t.Fatalf("notifications for a removed host: %d before, %d after", len(before), len(after))
		}
		for _, n := range after {
			if n.State == domain.NotificationPending {
				t.Fatalf("a removed host's notification is pending: %+v", n)
			}
		}
		if st, err := w.svc.Turn(op, r.Turn.ID); err != nil || st.Turn.State != domain.TurnCompleted {
			t.Fatalf("the operator reads the removed host's Turn: %+v %v", st.Turn.State, err)
		}
	})
}

// RecentTurnsOf reads each terminal's newest Turns, at most per of them,
// newest first, in one query; a terminal with none is absent.
func TestRecentTurnsOf(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "first"})
		if err != nil {
			t.Fatal(err)
		}
		base := r.Turn
		base.State = domain.TurnCompleted
		insert := func(x domain.Turn) {
			t.Helper()
			if err := w.store.InTx(context.Background(), func(tx domain.Tx) error { return tx.InsertTurn(context.Background(), x) }); err != nil {
				t.Fatal(err)
			}
		}
		termB := domain.EndpointRef{Kind: domain.EndpointPane, ID: "term_b"}
		var want []string
		for i := range 5 {
			x := base
			x.ID, x.MessageID, x.TerminalID, x.Endpoint = fmt.Sprintf("turn_b%d", i), "", termB.String(), termB
			x.CreatedAt = base.CreatedAt.Add(time.Duration(i+1) * time.Second)
			insert(x)
			want = append([]string{x.ID}, want...)
		}
		// A thread whose id is a pane's: another endpoint.
		thread := domain.EndpointRef{Kind: domain.EndpointCodexThread, ID: "term_b"}
		x := base
		x.ID, x.MessageID, x.TerminalID, x.Endpoint = "turn_thread", "", thread.String(), thread
		insert(x)
		paneA, none := domain.EndpointRef{Kind: domain.EndpointPane, ID: "term_a"}, domain.EndpointRef{Kind: domain.EndpointPane, ID: "term_none"}
		got, err := w.store.RecentTurnsOf(context.Background(), []domain.EndpointRef{paneA, termB, none, thread}, 3)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, x := range got[termB] {
			ids = append(ids, x.ID)
		}
		if len(got) != 3 || len(got[paneA]) != 1 || got[paneA][0].ID != r.Turn.ID || strings.Join(ids, ",") != strings.Join(want[:3], ",") ||
			len(got[thread]) != 1 || got[thread][0].ID != "turn_thread" {
			t.Fatalf("RecentTurnsOf = %v (term_b %v, want %v)", got, ids, want[:3])
		}
	})
}

// panes is a pane transport of the tests' fakes (panetest).
type panes = panetest.Panes

func panesOf(term domain.TurnTerminal) panes { return panetest.Of(term) }
