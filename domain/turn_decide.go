package domain

import (
	"slices"
	"time"
)

// A followed Turn's decision, the same for every transport: what a
// round observed (an Observation, in terms of no transport) means for
// the Turn. It reads nothing itself; the reads it asks for are made by
// the round (decideTurnRound) through promptLooks.

// Observation is what one round of a monitor (a Turn's or a Watch's)
// observed of the agent: what it recorded, what it asks now, whether its
// endpoint is still there. Each transport's monitor makes its own (a
// pane's from its screen and its agent's record, a thread's from its
// daemon's events); the decisions (decideTurn, decideWatch) are the same
// for all.
type Observation struct {
	// Record is what the agent recorded since the Turn's mark (nil: the
	// round read none).
	Record *TurnProgress
	// RecordMoved: the record's latest actions changed in this round.
	RecordMoved bool
	// RecordFailed: the round's read of the record failed (the Turn's
	// status says so until a read succeeds).
	RecordFailed bool
	// Asks is what the agent asks of the person now; Idle: it waits for
	// the person's next words.
	Asks Asking
	Idle bool
	// ExactPrompt: the prompt asked is read from an exact channel (its
	// fingerprint needs no second look). AsyncQuestion: a question is
	// asked while the agent works on.
	ExactPrompt, AsyncQuestion bool
	// Looked: the round looked at what the agent shows now, so the
	// fingerprint of a prompt or step it asks may be read (promptLooks).
	Looked bool
	// Clock: the round is the monitor's own, on its clock (not an event
	// of the agent's), so the Turn's deadlines are checked.
	Clock bool
	// Lost: the endpoint is gone, and Why says how.
	Lost EndpointLoss
	Why  string
}

// Ends says nothing more follows the observation: the endpoint is lost,
// or the turn ended.
func (o Observation) Ends() bool {
	return o.Lost != EndpointThere || (o.Record != nil && o.Record.Ended())
}

// Received is o as a monitor Received it at now from a transport that
// says what happens as it happens (a thread's daemon): what it recorded is
// activity at now, and a change that states no time was made at now.
func (o Observation) Received(now time.Time) Observation {
	if o.Record == nil {
		return o
	}
	rec := *o.Record
	if rec.LastActivity.IsZero() {
		rec.LastActivity = now
	}
	rec.Changes = slices.Clone(rec.Changes)
	for i, c := range rec.Changes {
		if c.At.IsZero() || c.At.Year() <= 1 {
			rec.Changes[i].At = now
		}
	}
	o.Record = &rec
	return o
}

// Asking is what an agent asks of the person at a round.
type Asking int

const (
	AskingUnknown  Asking = iota // not seen, or the agent neither works nor asks
	AskingNothing                // the agent works on, asking nothing
	AskingApproval               // a permission prompt
	AskingQuestion               // a question or questionnaire step
)

// EndpointLoss is how a followed Turn's endpoint went away.
type EndpointLoss int

const (
	EndpointThere EndpointLoss = iota
	// EndpointClosed: the agent is gone (its pane closed, it exited):
	// nothing more can come of the turn.
	EndpointClosed
	// EndpointUnreachable: what runs the agent cannot be reached; the
	// turn may go on there (renew or recover when it is back).
	EndpointUnreachable
)

// followState is what a Turn's monitor carries from one round to the
// next, and what its decision reads.
type followState struct {
	t           Turn        // the stored Turn
	mark        DurableMark // where the next record read starts
	announced   string      // fingerprint of the prompt or step last announced
	lastPersist time.Time   // the last transition stored
	// answering: AKK is answering the Turn's prompt or step now (its keys
	// are going in, or their outcome is not yet recorded), so a prompt
	// that looks new is that answer's own intermediate screen (a menu
	// whose selection moved), never one to announce.
	answering bool
	// unseenWait: the Turn already waited on a prompt or step when this
	// monitor began (a daemon's restart), and no look of this monitor has
	// shown it yet. A look without it then proves nothing: the agent
	// may not have drawn it again yet (Claude Code draws its own dialog
	// once the hook's request ended with the old daemon). Leaving the wait
	// takes the prompt seen, then gone, or the record moving on.
	unseenWait bool
}

// turnRound is one round: when it began, what it observed, and the
// transition it decided.
type turnRound struct {
	now          time.Time
	seen         Observation // what the round observed
	wasAnnounced string      // announced when the round began
	reads        roundReads
	next         Turn
	typ          string
	webhook      bool
	announced    string // announced after the round
	changed      bool   // next is to be stored
	// need is a read the decision asked for before it can decide (none:
	// decided); the round makes it and decides again.
	need roundNeed
}

// roundNeed is a read a round's decision asks for.
type roundNeed struct {
	kind  roundNeedKind
	state TurnState // needPrompt: the state whose prompt or step
	fp    string    // needConfirm: the fingerprint to confirm
}

type roundNeedKind int

const (
	needNothing roundNeedKind = iota
	needPrompt                // the fingerprint of the prompt or step the Turn would wait on
	needConfirm               // whether a fingerprint that differs from the one announced was read twice
	needAsync                 // the fingerprint of an async question's step
)

// roundReads are the reads a round made for its decision, each at most
// once: a prompt's or step's fingerprint ("" none) for the state it was
// read for, a changed fingerprint's confirmation, an async question's step.
type roundReads struct {
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

// PromptLooks is what a round reads of the screen for its decision, each
// only when the decision asks for it (decideTurnRound): the fingerprint of
// the prompt or step a Turn in state waits on ("" when none), whether a
// fingerprint that differs from the one announced was read twice, and the
// fingerprint of an async question's step (ok false when none is read).
type PromptLooks interface {
	PromptFingerprint(state TurnState) string
	ConfirmPrompt(fp string) bool
	AsyncQuestion() (fp string, ok bool)
}

// decideTurnRound decides a round, making each read the decision asks for
// through looks (at most one of each kind) and deciding again with it.
func (s *Monitors) decideTurnRound(st followState, r turnRound, looks PromptLooks) turnRound {
	for {
		out := s.decideTurn(st, r)
		switch n := out.need; {
		case n.kind == needPrompt && !r.reads.promptDone:
			r.reads.promptDone, r.reads.promptFor, r.reads.prompt = true, n.state, looks.PromptFingerprint(n.state)
		case n.kind == needConfirm && !r.reads.confirmDone:
			r.reads.confirmDone, r.reads.confirmFP, r.reads.confirmed = true, n.fp, looks.ConfirmPrompt(n.fp)
		case n.kind == needAsync && !r.reads.asyncDone:
			r.reads.asyncDone = true
			r.reads.async, r.reads.asyncOK = looks.AsyncQuestion()
		default:
			out.need = roundNeed{}
			return out
		}
	}
}

// decideTurn is a round's transition from what the monitor knew (st) and
// what the round observed (r): the Turn to store, its event, and what is
// announced. It reads nothing and touches no store: when it needs a read
// the round has not made (r.reads), it returns r with that need alone,
// and is asked again once the read is made.
func (s *Monitors) decideTurn(st followState, r turnRound) turnRound {
	in := r
	ask := func(n roundNeed) turnRound { in.need = n; return in }
	t, obs := st.t, r.seen
	next, typ, webhook := s.observed(t, obs, r.now)
	announced := st.announced
	waitUnseen := st.unseenWait && !obs.RecordMoved && obs.Asks == AskingNothing
	if typ == "" && !waitUnseen {
		next, typ, webhook = applyAsks(next, obs.Asks)
	}
	if obs.Looked && (typ == "" || typ == "turn.approval_required" || typ == "turn.interaction_required") {
		// A new prompt or step while the Turn already waits on one (a
		// person answered the last in the pane) is announced again: the
		// host's offer is for the old one.
		if next.State == TurnAwaitingApproval || next.State == TurnAwaitingInteraction {
			if !r.reads.promptDone || r.reads.promptFor != next.State {
				return ask(roundNeed{kind: needPrompt, state: next.State})
			}
		}
		if fp := r.reads.prompt; fp != "" && r.reads.promptFor == next.State {
			switch {
			case typ == "" && st.answering:
				// AKK's own answer going in (a selection moving): neither
				// announced nor remembered.
			case typ == "" && announced != "" && fp != announced && !obs.ExactPrompt && !r.reads.confirmDone:
				return ask(roundNeed{kind: needConfirm, fp: fp})
			case typ == "" && announced != "" && fp != announced && !obs.ExactPrompt && !r.reads.confirmed:
				// Announced when the next look reads it again.
			case typ == "" && announced != "" && fp != announced:
				typ, webhook = announceType(next.State), true
				announced = fp
			default:
				announced = fp
			}
		}
	}
	if typ == "" && obs.Clock {
		if n, ty, wh := turnDeadline(s.turns.cfg, t, next, r.now); ty != "" {
			next, typ, webhook = n, ty, wh
		}
	}

	if obs.Looked && typ == "" && next.State == TurnWorking && obs.AsyncQuestion {
		// An async question is asked while the Turn works on: announced
		// once per step, the Turn's state unchanged.
		if !r.reads.asyncDone {
			return ask(roundNeed{kind: needAsync})
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

// observed folds into t what a round's observation proves of the Turn's
// progress and end: a lost endpoint (unless a last read of the record
// found the turn ended), then the record.
func (s *Monitors) observed(t Turn, obs Observation, now time.Time) (Turn, string, bool) {
	ended := obs.Record != nil && obs.Record.Ended()
	switch {
	case obs.Lost == EndpointClosed && !ended:
		t.State, t.FailureReason = TurnFailed, obs.Why
		return t, "turn.failed", true
	case obs.Lost == EndpointUnreachable && !ended:
		t.State, t.FailureReason = TurnStalled, obs.Why
		return t, "turn.stalled", true
	case obs.Record != nil:
		return s.ledger.applyProgress(t, *obs.Record, now)
	}
	return t, "", false
}

// turnDeadline is the transition of a Turn t (next as the round left it)
// that nothing else moved, when one of its deadlines passed at now; typ is
// "" when none did.
func turnDeadline(cfg TurnConfig, t, next Turn, now time.Time) (Turn, string, bool) {
	switch {
	case !now.Before(t.HardDeadline()):
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
