package domain

import (
	"slices"
	"time"
)

// A pane Turn's decision: what a round's look and read mean for the Turn.
// It reads nothing itself; the reads it asks for are made by the round
// (decidePaneRound) through paneLooks.

// paneState is what a pane's Turn monitor carries from one round to the
// next, and what its decision reads.
type paneState struct {
	t           Turn        // the stored Turn
	mark        DurableMark // where the next record read starts
	term        Terminal    // the last screen believed
	announced   string      // fingerprint of the prompt or step last announced
	lastScreen  time.Time   // the last look at the screen
	lastPersist time.Time   // the last transition stored
	// What the last read of the record said: nothing that needs an answer
	// can be drawn now (TurnProgress.RecordQuiet); a tool call is open;
	// the agent waits for the person (TurnProgress.Waiting).
	recordQuiet, recordOpen, recordWaiting bool
	// actions: the record's latest actions as last read; actionsChanged:
	// the round's read changed them.
	actions        []ProgressAction
	actionsChanged bool
	// answering: AKK is answering the Turn's prompt or step now (its keys
	// are going in, or their outcome is not yet recorded), so a prompt
	// that looks new is that answer's own intermediate screen (a menu
	// whose selection moved), never one to announce.
	answering bool
	// unseenWait: the Turn already waited on a prompt or step when this
	// monitor began (a daemon's restart), and no look of this monitor has
	// shown it yet. A screen without it then proves nothing: the agent
	// may not have drawn it again yet (Claude Code draws its own dialog
	// once the hook's request ended with the old daemon). Leaving the wait
	// takes the prompt seen, then gone, or the record moving on.
	unseenWait bool
}

// paneRound is one round: when it began, what it looked at, and the
// transition it decided.
type paneRound struct {
	now          time.Time
	fresh        bool   // the screen was looked at in this round
	wasAnnounced string // announced when the round began
	reads        paneReads
	next         Turn
	typ          string
	webhook      bool
	announced    string // announced after the round
	changed      bool   // next is to be stored
	// need is a read the decision asked for before it can decide (none:
	// decided); the round makes it and decides again.
	need paneNeed
}

// paneNeed is a read a pane round's decision asks for.
type paneNeed struct {
	kind  paneNeedKind
	state TurnState // needPrompt: the state whose prompt or step
	fp    string    // needConfirm: the fingerprint to confirm
}

type paneNeedKind int

const (
	needNothing paneNeedKind = iota
	needPrompt               // the fingerprint of the prompt or step the Turn would wait on
	needConfirm              // whether a fingerprint that differs from the one announced was read twice
	needAsync                // the fingerprint of an async question's step
)

// paneReads are the reads a round made for its decision, each at most
// once: a prompt's or step's fingerprint ("" none) for the state it was
// read for, a changed fingerprint's confirmation, an async question's step.
type paneReads struct {
	promptDone bool
	promptFor  TurnState
	prompt     string

	confirmDone bool
	confirmFP   string
	confirmed   bool

	asyncDone bool
	async     string
	asyncOK   bool
}

// paneLooks is what a round reads of the screen for its decision, each
// only when the decision asks for it (decidePaneRound): the fingerprint of
// the prompt or step a Turn in state waits on ("" when none), whether a
// fingerprint that differs from the one announced was read twice, and the
// fingerprint of an async question's step (ok false when none is read).
type paneLooks interface {
	promptFingerprint(state TurnState) string
	confirmPrompt(fp string) bool
	asyncQuestion() (fp string, ok bool)
}

// decidePaneRound decides a round, making each read the decision asks for
// through looks (at most one of each kind) and deciding again with it.
func (s *Monitors) decidePaneRound(st paneState, r paneRound, looks paneLooks) paneRound {
	for {
		out := s.decidePane(st, r)
		switch n := out.need; {
		case n.kind == needPrompt && !r.reads.promptDone:
			r.reads.promptDone, r.reads.promptFor, r.reads.prompt = true, n.state, looks.promptFingerprint(n.state)
		case n.kind == needConfirm && !r.reads.confirmDone:
			r.reads.confirmDone, r.reads.confirmFP, r.reads.confirmed = true, n.fp, looks.confirmPrompt(n.fp)
		case n.kind == needAsync && !r.reads.asyncDone:
			r.reads.asyncDone = true
			r.reads.async, r.reads.asyncOK = looks.asyncQuestion()
		default:
			out.need = paneNeed{}
			return out
		}
	}
}

// decidePane is a round's transition from what the monitor knew (st) and
// what the round observed (r): the Turn to store, its event, and what is
// announced. It reads nothing and touches no store: when it needs a read
// the round has not made (r.reads), it returns r with that need alone,
// and is asked again once the read is made.
func (s *Monitors) decidePane(st paneState, r paneRound) paneRound {
	in := r
	ask := func(n paneNeed) paneRound { in.need = n; return in }
	t, term := st.t, st.term
	next, typ, webhook := r.next, r.typ, r.webhook
	announced := st.announced
	waitUnseen := st.unseenWait && !st.actionsChanged && term.ScreenState == ScreenWorking
	if typ == "" && !waitUnseen {
		next, typ, webhook = applyScreen(next, term)
	}
	if r.fresh && (typ == "" || typ == "turn.approval_required" || typ == "turn.interaction_required") {
		// A new prompt or step while the Turn already waits on one (a
		// person answered the last in the pane) is announced again: the
		// host's offer is for the old one.
		if next.State == TurnAwaitingApproval || next.State == TurnAwaitingInteraction {
			if !r.reads.promptDone || r.reads.promptFor != next.State {
				return ask(paneNeed{kind: needPrompt, state: next.State})
			}
		}
		if fp := r.reads.prompt; fp != "" && r.reads.promptFor == next.State {
			switch {
			case typ == "" && st.answering:
				// AKK's own answer going in (a selection moving): neither
				// announced nor remembered.
			case typ == "" && announced != "" && fp != announced && !term.ExactPrompt && !r.reads.confirmDone:
				return ask(paneNeed{kind: needConfirm, fp: fp})
			case typ == "" && announced != "" && fp != announced && !term.ExactPrompt && !r.reads.confirmed:
				// Announced when the next look reads it again.
			case typ == "" && announced != "" && fp != announced:
				typ, webhook = announceType(next.State), true
				announced = fp
			default:
				announced = fp
			}
		}
	}
	if typ == "" {
		if n, ty, wh := paneDeadline(s.turns.cfg, t, next, r.now); ty != "" {
			next, typ, webhook = n, ty, wh
		}
	}

	if r.fresh && typ == "" && next.State == TurnWorking && term.AsyncQuestion {
		// An async question is asked while the Turn works on: announced
		// once per step, the Turn's state unchanged.
		if !r.reads.asyncDone {
			return ask(paneNeed{kind: needAsync})
		}
		if fp, ok := r.reads.async, r.reads.asyncOK; ok {
			if fp != announced {
				typ, webhook = "turn.interaction_required", true
			}
			announced = fp
		}
	}

	moved := next.LatestText != t.LatestText || !slices.Equal(next.Actions, t.Actions)
	// Changes the record showed are stored in this round: the mark moves
	// past them.
	changes := len(next.NewChanges) > 0
	changed := typ != "" || moved || changes || (next.LastActivityAt.Sub(t.LastActivityAt) >= 5*time.Second)
	if changed {
		next.Mark = st.mark
		if typ == "" && moved {
			if !changes && r.now.Sub(st.lastPersist) < time.Second && next.LastActivityAt.Sub(t.LastActivityAt) < 5*time.Second {
				changed = false // progress text is throttled to one write a second
			} else {
				typ = "turn.progress"
			}
		}
	}
	r.next, r.typ, r.webhook, r.announced, r.changed = next, typ, webhook, announced, changed
	return r
}

// paneDeadline is the transition of a Turn t (next as the round left it)
// that nothing else moved, when one of its deadlines passed at now; typ is
// "" when none did.
func paneDeadline(cfg TurnConfig, t, next Turn, now time.Time) (Turn, string, bool) {
	switch {
	case now.After(t.HardDeadline()):
		next.State, next.FailureReason = TurnStalled, "the hard deadline passed; observation ended"
		return next, "turn.stalled", true
	case t.State == TurnDispatching && t.SubmitStage != SubmitEntered:
		// Reserved, but the daemon stopped before the submit was
		// recorded: input may or may not have happened.
		if now.Sub(t.UpdatedAt) > cfg.AcceptWindow {
			next.State, next.FailureReason = TurnDeliveryUncertain, "the daemon stopped while sending; delivery is not proven"
			return next, "turn.delivery_uncertain", true
		}
	case t.State == TurnDispatching && now.Sub(t.UpdatedAt) > cfg.AcceptWindow:
		next.State, next.FailureReason = TurnDeliveryUncertain, "Enter was pressed but the agent's record never showed the request"
		return next, "turn.delivery_uncertain", true
	case t.State != TurnDispatching && now.After(t.InactivityDeadline()):
		next.State, next.FailureReason = TurnStalled, "no activity within the inactivity limit"
		return next, "turn.stalled", true
	}
	return next, "", false
}
