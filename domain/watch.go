package domain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// WatchTerminal is what Watches need from the terminal side, beyond
// TurnTerminal's Observe and Progress.
type WatchTerminal interface {
	// AnchorWatch looks for the native task running in t now. With exact
	// true, the mark sits just before that task's user message, so
	// Progress(t, mark, "") follows exactly that task; otherwise the mark is
	// the end of the record and the Watch is best effort.
	AnchorWatch(ctx context.Context, t Terminal) (mark DurableMark, exact bool, err error)
}

// WatchState is where a Watch stands. The names are part of the API.
type WatchState string

const (
	WatchActive      WatchState = "active"
	WatchCompleted   WatchState = "completed"
	WatchFailed      WatchState = "failed"
	WatchTimedOut    WatchState = "timed_out"
	WatchInvalidated WatchState = "invalidated"
	WatchUnwatched   WatchState = "unwatched"
)

// Watch modes and confidences.
const (
	WatchModeExact    = "exact_task"
	WatchModeActivity = "terminal_activity"
	// WatchModeTurn: the Watch of a Send, following its Turn exactly. It
	// has no monitor and sends no callback of its own: the Turn's are the
	// Send's completion callbacks.
	WatchModeTurn   = "managed_turn"
	ConfidenceExact = "exact"
	ConfidenceBest  = "best_effort"
)

// Watch observes a task a person started. It never sends input and never
// owns the terminal.
type Watch struct {
	ID           string
	HostID       string
	Conversation string
	TerminalID   string
	TurnID       string // a Send's Watch: the Turn it follows
	Mode         string
	State        WatchState
	Mark         DurableMark

	NativeTurnID  string
	FinalMessage  string
	LatestText    string
	Reason        string
	SeenActivity  bool // best effort: the pane was seen working
	IdleSince     time.Time
	ApprovalShown bool // a prompt is on screen now (one webhook per prompt)

	HardTimeout time.Duration
	CreatedAt   time.Time
	UpdatedAt   time.Time
	EndedAt     time.Time
	Revision    int64
}

// Confidence is how sure the Watch's end is.
func (w Watch) Confidence() string {
	if w.Mode == WatchModeExact || w.Mode == WatchModeTurn {
		return ConfidenceExact
	}
	return ConfidenceBest
}

// StableIdle is how long a best-effort Watch needs an idle screen after
// activity to call the task done.
var StableIdle = 3 * time.Second

// UseWatches wires the Watch anchor in (Observe and Progress come from the
// Turn terminal).
func (s *Service) UseWatches(w WatchTerminal) { s.watchTerm = w }

// BackendThreads names, from the agent's own backend and with no input into
// the pane, the thread a working terminal runs (Codex's managed app-server
// daemon: the one thread of the pane's daemon that runs a turn). ok only
// when that is proven; anything less is not ok, never a guess.
type BackendThreads interface {
	ForegroundThread(ctx context.Context, t Terminal) (threadID string, ok bool, err error)
}

// UseBackendThreads wires a backend in: a Watch of a pane whose records
// cannot name its task asks it before any probe.
func (s *Service) UseBackendThreads(b BackendThreads) { s.backend = b }

// NewWatchInput is a watch request.
type NewWatchInput struct {
	TerminalID         string `validate:"required,max=100"`
	HardTimeoutMinutes int    `validate:"omitempty,min=1,max=10080"`
	// Identify: on a Codex pane whose records cannot name its task, type
	// the closed status probe once to anchor the Watch exactly.
	Identify bool
}

// ThreadAnchor may be implemented by a WatchTerminal: AnchorWatchThread
// anchors on the open task of one named thread among the record files a
// shared holder keeps (what the status probe names).
type ThreadAnchor interface {
	AnchorWatchThread(ctx context.Context, t Terminal, threadID string) (mark DurableMark, exact bool, err error)
}

func (s *Service) watchData(w Watch) map[string]any {
	d := map[string]any{"watch_id": w.ID, "terminal_id": w.TerminalID, "conversation": w.Conversation,
		"state": string(w.State), "watch_mode": w.Mode, "confidence": w.Confidence()}
	if w.FinalMessage != "" {
		d["final_message"] = w.FinalMessage
	}
	if w.Reason != "" {
		d["reason"] = w.Reason
	}
	return d
}

func (s *Service) watchTransition(ctx context.Context, w Watch, typ string, webhook bool) (Watch, error) {
	w.UpdatedAt = s.clock.Now().UTC()
	if w.State != WatchActive && w.EndedAt.IsZero() {
		w.EndedAt = w.UpdatedAt
	}
	err := s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.UpdateWatch(ctx, w); err != nil {
			return err
		}
		if typ == "" {
			return nil
		}
		_, err := s.emitLocked(ctx, tx, Event{Type: typ, HostID: w.HostID, Conversation: w.Conversation, Subject: w.ID,
			Data: s.watchData(w)}, webhook)
		return err
	})
	if err != nil {
		return w, err
	}
	w.Revision++
	s.nudge(w.ID)
	return w, nil
}

// MaxActiveWatchesPerHost bounds one controller's active Watches (each
// costs a monitor).
const MaxActiveWatchesPerHost = 64

func countHost(ws []Watch, host string) int {
	n := 0
	for _, w := range ws {
		if w.HostID == host {
			n++
		}
	}
	return n
}

// StartWatch observes the task running in a terminal.
func (s *Service) StartWatch(ctx context.Context, in NewWatchInput) (Watch, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return Watch{}, err
	}
	if s.turns == nil || s.watchTerm == nil {
		return Watch{}, E(CodeUnavailable, "watches are not configured")
	}
	if err := s.validate(in); err != nil {
		return Watch{}, err
	}
	if IsBackendEndpoint(in.TerminalID) {
		return s.startBackendWatch(ctx, p, in)
	}
	term, err := s.turns.term.Observe(ctx, in.TerminalID)
	if errors.Is(err, ErrTerminalGone) {
		return Watch{}, E(CodeTerminalNotFound, "no terminal "+in.TerminalID)
	}
	if err != nil {
		return Watch{}, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	if !term.Watchable() {
		return Watch{}, E(CodeNothingToWatch, "the pane is "+string(term.ScreenState)+"; a Watch follows a task that is working or awaiting approval")
	}
	if err := s.mayWatch(ctx, p, term.ID, "terminal"); err != nil {
		return Watch{}, err
	}
	mark, exact, err := s.watchTerm.AnchorWatch(ctx, term)
	if err != nil {
		return Watch{}, &Error{Code: CodeUnavailable, Message: "could not read the agent's record", Err: err}
	}
	if !exact {
		if m, ok := s.backendAnchor(ctx, term); ok {
			mark, exact = m, true
		}
	}
	if !exact && in.Identify {
		if mark, exact, err = s.identifiedAnchor(ctx, p, term, mark); err != nil {
			return Watch{}, err
		}
	}
	now := s.clock.Now().UTC()
	w := Watch{ID: s.ids.New("watch"), HostID: p.HostID, Conversation: p.Conversation, TerminalID: term.ID,
		Mode: WatchModeActivity, State: WatchActive, Mark: mark, SeenActivity: true,
		HardTimeout: s.turns.cfg.DefaultHard, CreatedAt: now, UpdatedAt: now, Revision: 1}
	if exact {
		w.Mode = WatchModeExact
	}
	return s.beginWatch(ctx, w, in)
}

// beginWatch stores a new Watch (its hard timeout the request's, when it
// names one) and starts its monitor.
func (s *Service) beginWatch(ctx context.Context, w Watch, in NewWatchInput) (Watch, error) {
	if in.HardTimeoutMinutes > 0 {
		w.HardTimeout = time.Duration(in.HardTimeoutMinutes) * time.Minute
	}
	if err := s.insertWatch(ctx, w); err != nil {
		return Watch{}, err
	}
	s.startWatchMonitor(w.ID)
	return w, nil
}

// mayWatch refuses a new Watch of endpoint (a "terminal" or a "thread")
// that another controller's Turn holds (its task and final message are not
// this caller's to read), or one over the caller's limit.
func (s *Service) mayWatch(ctx context.Context, p Principal, endpoint, what string) error {
	if holding, err := s.holdingTurn(ctx, endpoint); err == nil {
		if !p.CanSeeHost(holding.HostID) {
			return E(CodeConflictActiveTurn, "a Turn of another controller holds this "+what)
		}
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	if active, err := s.store.ActiveWatches(ctx); err != nil {
		return err
	} else if n := countHost(active, p.HostID); n >= MaxActiveWatchesPerHost {
		return E(CodeWatchLimit, fmt.Sprintf("this controller has %d active Watches, the most it may have; unwatch one first", n))
	}
	return nil
}

// backendAnchor anchors a Watch of a Codex pane whose records cannot name
// its task on the thread the agent's backend names, with no input: the pane
// works before the backend is asked and still works, the same process,
// after; the thread's record holds an open task.
func (s *Service) backendAnchor(ctx context.Context, term Terminal) (DurableMark, bool) {
	anchor, ok := s.watchTerm.(ThreadAnchor)
	if s.backend == nil || !ok || term.Agent.Kind != AgentCodex || term.NativeIdentity != IdentityAmbiguous || term.ScreenState != ScreenWorking {
		return "", false
	}
	thread, ok, err := s.backend.ForegroundThread(ctx, term)
	if err != nil || !ok {
		return "", false
	}
	after, err := s.turns.term.Observe(ctx, term.ID)
	if err != nil || after.Process != term.Process || after.ScreenState != ScreenWorking {
		return "", false
	}
	m, exact, err := anchor.AnchorWatchThread(ctx, after, thread)
	if err != nil || !exact {
		return "", false
	}
	return m, true
}

// identifiedAnchor anchors a Watch of a Codex pane whose records cannot
// name its task: under the terminal's lock, the closed status probe once
// into the working pane's empty composer names the foreground thread, and
// the Watch anchors on that thread's open task. A probe that cannot start
// is refused with no key; one that sent keys and proved no card keeps the
// best-effort mark (observation stays read-only).
func (s *Service) identifiedAnchor(ctx context.Context, p Principal, term Terminal, mark DurableMark) (DurableMark, bool, error) {
	anchor, ok := s.watchTerm.(ThreadAnchor)
	if term.Agent.Kind != AgentCodex || s.native == nil || !ok {
		return "", false, E(CodeManualRequired, "identify is a Codex probe; this pane's Watch needs none or cannot have one")
	}
	unlock := s.turns.lockTerminal(term.ID)
	defer unlock()
	now, err := s.turns.term.Observe(ctx, term.ID)
	if errors.Is(err, ErrTerminalGone) {
		return "", false, E(CodeTerminalNotFound, "no live pane runs terminal "+term.ID)
	}
	if err != nil {
		return "", false, &Error{Code: CodeUnavailable, Message: "could not observe the terminal", Err: err}
	}
	if now.Agent.Compatibility || !now.Agent.Profiled() {
		return "", false, E(CodeManualRequired, "the probe runs only on a version's own profile")
	}
	if now.ScreenState != ScreenWorking || !now.ComposerEmpty {
		return "", false, E(CodeTerminalNotIdle, fmt.Sprintf("the probe needs a working pane with an empty composer (screen %s)", now.ScreenState))
	}
	seq, done := s.keySequence(ctx)
	defer done()
	st, stage, err := s.native.WorkingStatusCard(seq, now)
	if rerr := refusedBeforeInput(stage, err, "the status plan"); rerr != nil {
		return "", false, rerr
	}
	if err != nil || stage != AnswerVerified || st.NativeThreadID == "" {
		s.noteNativeUncertain(seq, p, term.ID, "watch_identify", err)
		return mark, false, nil
	}
	m, exact, err := anchor.AnchorWatchThread(seq, now, st.NativeThreadID)
	if err != nil {
		return mark, false, nil
	}
	return m, exact, nil
}

// insertWatch stores a new Watch with its watch.started event.
func (s *Service) insertWatch(ctx context.Context, w Watch) error {
	return s.store.InTx(ctx, func(tx Tx) error {
		if err := tx.InsertWatch(ctx, w); err != nil {
			return err
		}
		_, err := s.emitLocked(ctx, tx, Event{Type: "watch.started", HostID: w.HostID, Conversation: w.Conversation,
			Subject: w.ID, Data: s.watchData(w)}, false)
		return err
	})
}

func (s *Service) ownedWatch(ctx context.Context, id string) (Watch, error) {
	p, err := requirePrincipal(ctx)
	if err != nil {
		return Watch{}, err
	}
	w, err := s.store.Watch(ctx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && !p.CanSeeHost(w.HostID)) {
		return Watch{}, E(CodeWatchNotFound, "no watch "+id)
	}
	return w, err
}

// GetWatch returns a Watch.
func (s *Service) GetWatch(ctx context.Context, id string) (Watch, error) {
	w, err := s.ownedWatch(ctx, id)
	if err != nil {
		return Watch{}, err
	}
	return s.projectWatch(ctx, w)
}

// Unwatch ends a Watch. No input.
func (s *Service) Unwatch(ctx context.Context, id string) (Watch, error) {
	w, err := s.ownedWatch(ctx, id)
	if err != nil {
		return Watch{}, err
	}
	s.stopMonitor(w.ID)
	for i := 0; i < 5; i++ {
		if p, err := s.projectWatch(ctx, w); err != nil {
			return Watch{}, err
		} else if p.State != WatchActive {
			return p, nil
		}
		if w.State != WatchActive {
			return w, nil
		}
		w.State = WatchUnwatched
		out, err := s.watchTransition(ctx, w, "watch.unwatched", false)
		if errors.Is(err, ErrRevisionConflict) {
			if w, err = s.store.Watch(ctx, id); err != nil {
				return Watch{}, err
			}
			continue
		}
		return out, err
	}
	return Watch{}, fmt.Errorf("unwatch %s: the watch kept changing", id)
}

// RenewWatch restarts a timed-out or invalidated Watch whose terminal still
// runs a task. No input.
func (s *Service) RenewWatch(ctx context.Context, id string) (Watch, error) {
	w, err := s.ownedWatch(ctx, id)
	if err != nil {
		return Watch{}, err
	}
	if w.TurnID != "" {
		return s.viaTurn(ctx, w, s.Renew)
	}
	if w.State != WatchTimedOut {
		return Watch{}, E(CodeWatchStateConflict, "watch "+id+" is "+string(w.State)+"; only a timed-out Watch is renewed")
	}
	if IsBackendEndpoint(w.TerminalID) {
		if _, err := s.backendThread(ctx, strings.TrimPrefix(w.TerminalID, backendEndpointPrefix)); err != nil {
			return Watch{}, E(CodeTerminalNotFound, "the watched thread is no longer loaded in its daemon")
		}
	} else if _, err := s.turns.term.Observe(ctx, w.TerminalID); err != nil {
		return Watch{}, E(CodeTerminalNotFound, "the watched pane is gone or its agent restarted")
	}
	w.State, w.EndedAt, w.Reason = WatchActive, time.Time{}, ""
	w.CreatedAt = s.clock.Now().UTC() // the hard timeout counts again from now
	if w, err = s.watchTransition(ctx, w, "watch.renewed", false); err != nil {
		return Watch{}, err
	}
	s.startWatchMonitor(w.ID)
	return w, nil
}

// RecoverWatch reconciles an exact Watch with the agent's record. No input.
func (s *Service) RecoverWatch(ctx context.Context, id string) (Watch, error) {
	w, err := s.ownedWatch(ctx, id)
	if err != nil {
		return Watch{}, err
	}
	if w.TurnID != "" {
		return s.viaTurn(ctx, w, s.Recover)
	}
	if w.Mode != WatchModeExact || w.State == WatchCompleted || w.State == WatchUnwatched || IsBackendEndpoint(w.TerminalID) {
		// (A backend Watch's monitor follows the daemon's own events,
		// and a turn that ended meanwhile ends it when it follows on.)
		return w, nil
	}
	term, err := s.turns.term.Observe(ctx, w.TerminalID)
	if err != nil {
		return Watch{}, E(CodeTerminalNotFound, "the watched pane is gone or its agent restarted; its record cannot be read")
	}
	p, err := s.turns.term.Progress(ctx, term, w.Mark, "")
	if err != nil {
		return Watch{}, &Error{Code: CodeUnavailable, Message: "could not read the agent's record", Err: err}
	}
	next, typ, webhook := s.applyWatchProgress(w, p)
	if typ == "" {
		return w, nil
	}
	return s.watchTransition(ctx, next, typ, webhook)
}

// RetryWatchCallback redelivers a Watch's failed notification.
func (s *Service) RetryWatchCallback(ctx context.Context, id, notificationID string) (Notification, error) {
	w, err := s.ownedWatch(ctx, id)
	if err != nil {
		return Notification{}, err
	}
	subject := id
	if w.TurnID != "" {
		subject = w.TurnID // a Send's Watch calls back through its Turn
	}
	return s.retryCallbackOf(ctx, "watch "+id, subject, notificationID)
}

// viaTurn runs a Turn action for a Send's Watch and returns the Watch as
// it then reads.
func (s *Service) viaTurn(ctx context.Context, w Watch, action func(context.Context, string) (ActionResult, error)) (Watch, error) {
	if _, err := action(ctx, w.TurnID); err != nil {
		return Watch{}, err
	}
	cur, err := s.store.Watch(ctx, w.ID)
	if err != nil {
		return Watch{}, err
	}
	return s.projectWatch(ctx, cur)
}

func (s *Service) applyWatchProgress(w Watch, p TurnProgress) (Watch, string, bool) {
	if p.LatestText != "" {
		w.LatestText, _ = s.cutGraphemes(s.redact(p.LatestText), ProgressLimit)
	}
	if p.NativeTurnID != "" {
		w.NativeTurnID = p.NativeTurnID
	}
	switch {
	case p.Completed:
		w.State, w.FinalMessage = WatchCompleted, s.redact(p.FinalMessage)
		return w, "watch.completed", true
	case p.Failed:
		w.State, w.Reason = WatchFailed, s.redact(p.FailureReason)
		return w, "watch.failed", true
	case p.Interrupted:
		w.State, w.Reason = WatchFailed, "the task was interrupted in the pane"
		return w, "watch.failed", true
	}
	return w, "", false
}

func (s *Service) startWatchMonitor(id string) {
	// Watches share the monitor registry of Turns (ids never collide).
	s.startMonitorFunc(id, s.watchMonitor)
}

// watchMonitor follows one Watch. It never sends input.
func (s *Service) watchMonitor(ctx context.Context, id string) {
	tr := s.turns
	w, err := s.store.Watch(ctx, id)
	if err != nil {
		return
	}
	if IsBackendEndpoint(w.TerminalID) {
		s.backendWatchMonitor(ctx, w)
		return
	}
	tick := time.NewTicker(tr.cfg.PollInterval)
	defer tick.Stop()
	var lastScreen time.Time
	var term Terminal
	// An exact Watch wakes on a write to the record (armed before each
	// read), as a Turn's monitor does; the tick is then a safety net.
	notifier, _ := tr.term.(RecordNotifier)
	var written <-chan struct{}
	stopWritten := func() {}
	defer func() { stopWritten() }()
	var scr screenWatch // tmux's report of the screen's next change
	defer scr.release()
	// mark is where the record was last read to: each read goes on from it
	// (as a Turn's monitor does), not from the Watch's anchor, which is
	// stored only when the Watch changes.
	mark := w.Mark
	var reads recordReads
	for w.State == WatchActive {
		if notifier != nil && written == nil && w.Mode == WatchModeExact {
			if ch, stop, err := notifier.Changed(mark); err == nil {
				written, stopWritten = ch, stop
			}
		}
		now := s.clock.Now().UTC()
		next, typ, webhook := w, "", false
		looked := scr.lookNow(ctx, tr, w.TerminalID, term.ID != "", lastScreen, now)
		if looked {
			lastScreen = now
			obs, err := tr.look(ctx, w.TerminalID)
			switch {
			case errors.Is(err, ErrTerminalGone):
				next.State, next.Reason = WatchInvalidated, "the pane closed or its agent restarted"
				typ, webhook = "watch.invalidated", true
			case err == nil && !scr.confirm(term, obs):
				// Believed when the next look shows the same.
			case err == nil:
				term = obs
				switch {
				case obs.ScreenState == ScreenAwaitingApproval && !w.ApprovalShown:
					next.ApprovalShown = true
					typ, webhook = "watch.approval_observed", true
				case obs.ScreenState != ScreenAwaitingApproval && w.ApprovalShown:
					next.ApprovalShown = false
					typ = "watch.approval_cleared"
				case w.Mode == WatchModeActivity && obs.ScreenState == ScreenIdle:
					if w.IdleSince.IsZero() {
						next.IdleSince = now
						typ = "watch.idle_seen"
					} else if now.Sub(w.IdleSince) >= StableIdle {
						next.State, next.Reason = WatchCompleted, "the pane was idle again after activity (best effort)"
						typ, webhook = "watch.completed", true
					}
				case w.Mode == WatchModeActivity && !w.IdleSince.IsZero():
					next.IdleSince = time.Time{}
					typ = "watch.activity_seen"
				}
			case ctx.Err() != nil:
				return
			default:
				slog.Warn("watch monitor: observe", "watch_id", id, "err", err)
			}
		}
		if typ == "" && term.ID != "" && w.Mode == WatchModeExact && reads.due(tr.cfg, written != nil, looked, now) {
			if p, err := tr.term.Progress(ctx, term, mark, ""); err == nil {
				next, typ, webhook = s.applyWatchProgress(next, p)
				next.Mark, mark = p.Mark, p.Mark
			}
		}
		if typ == "" && now.After(w.CreatedAt.Add(w.HardTimeout)) {
			next.State, next.Reason = WatchTimedOut, "the hard timeout passed; observation ended"
			typ, webhook = "watch.timed_out", true
		}
		if typ != "" {
			stored, err := s.watchTransition(ctx, next, typ, webhook)
			switch {
			case errors.Is(err, ErrRevisionConflict):
				if w, err = s.store.Watch(ctx, id); err != nil {
					return
				}
				mark = w.Mark
				continue
			case err != nil:
				if ctx.Err() != nil {
					return
				}
				slog.Error("watch monitor: store", "watch_id", id, "err", err)
			default:
				w = stored
			}
		}
		tick.Reset(scr.wait(tr.cfg, written != nil, term.ID != "", lastScreen, s.clock.Now().UTC()))
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-written:
			stopWritten()
			written, stopWritten = nil, func() {}
			reads.woke = true
		case <-scr.ch:
			scr.fired()
		case <-nudges(ctx):
			reads.woke = true
			cur, err := s.store.Watch(ctx, id)
			if err != nil {
				return
			}
			if cur.Revision != w.Revision {
				mark = cur.Mark
			}
			w = cur
			lastScreen = time.Time{}
		}
	}
}
