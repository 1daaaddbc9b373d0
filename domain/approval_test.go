package domain_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"akk/domain"
)

type ctxT = context.Context

type fakeApproval struct {
	mu       sync.Mutex
	prompt   domain.ApprovalPrompt
	answers  []domain.ApprovalDecision
	stage    domain.AnswerStage
	onAnswer func()
	// cleared is what a verified answer leaves on screen: the prompt gone
	// (a verified answer is one whose prompt left the screen).
	cleared func()
}

func (f *fakeApproval) Prompt(_ ctxT, _ domain.Terminal) (domain.ApprovalPrompt, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.prompt, nil
}

func (f *fakeApproval) Answer(_ ctxT, _ domain.Terminal, fp string, d domain.ApprovalDecision) (domain.AnswerStage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fp != f.prompt.Fingerprint {
		return domain.AnswerNothing, domain.ErrPromptChanged
	}
	f.answers = append(f.answers, d)
	if f.onAnswer != nil {
		f.onAnswer()
	}
	if f.stage != "" {
		return f.stage, nil
	}
	f.prompt = domain.ApprovalPrompt{}
	if f.cleared != nil {
		f.cleared()
	}
	return domain.AnswerVerified, nil
}

func (f *fakeApproval) set(fn func(*fakeApproval)) { f.mu.Lock(); fn(f); f.mu.Unlock() }
func (f *fakeApproval) count() int                 { f.mu.Lock(); defer f.mu.Unlock(); return len(f.answers) }

func shellPrompt(fp string) domain.ApprovalPrompt {
	return domain.ApprovalPrompt{Present: true, Answerable: true, Kind: "shell_command", Tool: "Bash",
		CommandExcerpt: "echo hi", Decisions: []domain.ApprovalDecision{domain.ApproveOnce, domain.Reject}, Fingerprint: fp,
		RejectEndsTurn: true, Where: "in the pane"}
}

// awaitingTurn sends a Turn and brings it to awaiting_approval.
func awaitingTurn(t *testing.T) (*world, *fakeTerm, *fakeApproval, string) {
	ft := &fakeTerm{term: idleTerminal()}
	w := newWorld(t, "", ft)
	fa := &fakeApproval{cleared: func() {
		ft.set(func(f *fakeTerm) {
			if f.term.ScreenState == domain.ScreenAwaitingApproval {
				f.term.ScreenState = domain.ScreenWorking
			}
		})
	}}
	w.useParts(t, fa)
	r, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "run it"})
	if err != nil {
		t.Fatal(err)
	}
	ft.set(func(f *fakeTerm) { f.progress = domain.TurnProgress{Accepted: true} })
	w.waitState(t, r.Turn.ID, domain.TurnWorking)
	fa.set(func(f *fakeApproval) { f.prompt = shellPrompt("fp-1") })
	ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenAwaitingApproval })
	w.waitState(t, r.Turn.ID, domain.TurnAwaitingApproval)
	return w, ft, fa, r.Turn.ID
}

func TestApproveNeedsAFreshOfferAndTheSameFingerprint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, ft, fa, id := awaitingTurn(t)
		// No status read yet: no offer, no key.
		if _, err := w.svc.Approve(w.host, id, domain.ApproveOnce); code(err) != domain.CodeOfferExpired {
			t.Fatalf("approve without an offer: %v", err)
		}
		st, err := w.svc.Turn(w.host, id)
		if err != nil || st.Approval == nil || len(st.Approval.Decisions) != 2 || st.Approval.ManualRequired {
			t.Fatalf("status approval: %+v %v", st.Approval, err)
		}
		// Another conversation of the same host has no offer.
		otherConv := domain.WithPrincipal(w.host, domain.Principal{HostID: mustPrincipal(t, w).HostID, Conversation: "chat-2"})
		if _, err := w.svc.Approve(otherConv, id, domain.ApproveOnce); code(err) != domain.CodeOfferExpired {
			t.Fatalf("approve from another conversation: %v", err)
		}
		// The prompt changed since the status: zero keys.
		fa.set(func(f *fakeApproval) { f.prompt = shellPrompt("fp-2") })
		if _, err := w.svc.Approve(w.host, id, domain.ApproveOnce); code(err) != domain.CodePromptChanged {
			t.Fatalf("approve a changed prompt: %v", err)
		}
		if fa.count() != 0 {
			t.Fatal("a key reached a changed prompt")
		}
		// A fresh status, then approve: one answer, working again.
		w.svc.Turn(w.host, id)
		res, err := w.svc.Approve(w.host, id, domain.ApproveOnce)
		if err != nil || res.Outcome != domain.OutcomeDone {
			t.Fatalf("approve: %+v %v", res, err)
		}
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking })
		w.waitState(t, id, domain.TurnWorking)
		// A replay of the same answer sends nothing.
		if _, err := w.svc.Approve(w.host, id, domain.ApproveOnce); err == nil {
			t.Fatal("a replayed approval was accepted")
		}
		if fa.count() != 1 {
			t.Fatalf("%d answers", fa.count())
		}
		if got := webhookTypes(t, w, id); got[len(got)-1] != "turn.approval_required" {
			t.Fatalf("webhooks %v", got)
		}
	})
}

func TestRejectWaitsForHostAndUnprovenAnswerIsUncertain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, _, id := awaitingTurn(t)
		w.svc.Turn(w.host, id)
		if _, err := w.svc.Approve(w.host, id, domain.Reject); err != nil {
			t.Fatal(err)
		}
		w.waitState(t, id, domain.TurnWaitingForHost)

		w2, _, fa2, id2 := awaitingTurn(t)
		fa2.set(func(f *fakeApproval) { f.stage = domain.AnswerSent })
		w2.svc.Turn(w2.host, id2)
		res, err := w2.svc.Approve(w2.host, id2, domain.ApproveOnce)
		if err != nil || res.Outcome != domain.OutcomeUncertain || !res.DoNotRetry || res.Turn.State != domain.TurnResponseUncertain {
			t.Fatalf("unproven answer: %+v %v", res, err)
		}
	})
}

func TestUnanswerablePromptIsManualRequired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, fa, id := awaitingTurn(t)
		fa.set(func(f *fakeApproval) {
			f.prompt = domain.ApprovalPrompt{Present: true, Kind: "file_edit", Fingerprint: "fp-edit", Reason: "file edits are not profiled",
				RejectEndsTurn: true, Where: "in the pane"}
		})
		st, _ := w.svc.Turn(w.host, id)
		if st.Approval == nil || !st.Approval.ManualRequired || len(st.Approval.Decisions) != 0 {
			t.Fatalf("status approval: %+v", st.Approval)
		}
		if _, err := w.svc.Approve(w.host, id, domain.ApproveOnce); code(err) != domain.CodeManualRequired {
			t.Fatalf("approve a manual prompt: %v", err)
		}
		if fa.count() != 0 {
			t.Fatal("a key reached an unprofiled prompt")
		}
	})
}

func mustPrincipal(t *testing.T, w *world) domain.Principal {
	p, ok := domain.PrincipalFrom(w.host)
	if !ok {
		t.Fatal("no principal")
	}
	return p
}

// brokenApproval cannot read any prompt: a profile without a grammar, or a
// capture that failed.
type brokenApproval struct{ fakeApproval }

func (b *brokenApproval) Prompt(_ ctxT, _ domain.Terminal) (domain.ApprovalPrompt, error) {
	return domain.ApprovalPrompt{}, domain.E(domain.CodeUnavailable, "no permission prompt grammar")
}

func TestUnreadablePromptDegradesOneRowNotTheList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		ft.term.ScreenState = domain.ScreenAwaitingApproval
		w := newWorld(t, "", ft)
		w.useParts(t, &brokenApproval{})
		list, err := w.svc.Conversations(w.host)
		if err != nil {
			t.Fatalf("list failed for one unreadable prompt: %v", err)
		}
		if len(list) != 1 || list[0].Approval == nil || !list[0].Approval.ManualRequired || len(list[0].Terminal.Warnings) == 0 {
			t.Fatalf("row %+v", list)
		}
		for _, a := range list[0].Actions {
			if a.Name == "approve" {
				t.Fatalf("approve offered on an unreadable prompt: %+v", list[0].Actions)
			}
		}
	})
}

// Many hosts' calls at once on one pane: exactly one dispatch, and exactly
// one key for one prompt.
func TestConcurrentSendsAndApprovals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		var wg sync.WaitGroup
		codes := make(chan domain.Code, 100)
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: fmt.Sprintf("task %d", i)})
				if err == nil {
					codes <- ""
					return
				}
				codes <- code(err)
			}()
		}
		wg.Wait()
		close(codes)
		ok, conflicts := 0, 0
		for c := range codes {
			switch c {
			case "":
				ok++
			case domain.CodeConflictActiveTurn, domain.CodeTerminalNotIdle:
				conflicts++
			default:
				t.Errorf("unexpected code %q", c)
			}
		}
		if submits, _ := ft.counts(); ok != 1 || conflicts != 99 || submits != 1 {
			t.Fatalf("%d dispatched, %d refused, %d submits; want 1, 99, 1", ok, conflicts, submits)
		}

		w2, _, fa, id := awaitingTurn(t)
		if _, err := w2.svc.Turn(w2.host, id); err != nil { // the offer
			t.Fatal(err)
		}
		var answered atomic.Int32
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := w2.svc.Approve(w2.host, id, domain.ApproveOnce); err == nil {
					answered.Add(1)
				}
			}()
		}
		wg.Wait()
		if fa.count() != 1 || answered.Load() != 1 {
			t.Fatalf("%d keys, %d answers for one prompt; want 1 and 1", fa.count(), answered.Load())
		}
	})
}

// The fence is per occurrence: the same prompt shown again after a proven
// answer (the agent asks for the same command later) is answerable again,
// while a prompt whose answer was not proven is never answered twice.
func TestSamePromptAgainIsANewOccurrence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, ft, fa, id := awaitingTurn(t)
		w.svc.Turn(w.host, id)
		if res, err := w.svc.Approve(w.host, id, domain.ApproveOnce); err != nil || res.Outcome != domain.OutcomeDone {
			t.Fatalf("first answer: %+v %v", res, err)
		}
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking })
		w.waitState(t, id, domain.TurnWorking)
		w.lookedAgain(t, ft, 4) // the monitor saw the agent at work (see TestInteractionStepByStepWithOpaqueIDs)
		// The same command asks again: the same fingerprint.
		fa.set(func(f *fakeApproval) { f.prompt = shellPrompt("fp-1") })
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenAwaitingApproval })
		w.waitState(t, id, domain.TurnAwaitingApproval)
		st, err := w.svc.Turn(w.host, id)
		if err != nil || st.Approval == nil || st.Approval.ManualRequired {
			t.Fatalf("the same prompt asked again: %+v %v", st.Approval, err)
		}
		if res, err := w.svc.Approve(w.host, id, domain.ApproveOnce); err != nil || res.Outcome != domain.OutcomeDone {
			t.Fatalf("second answer: %+v %v", res, err)
		}
		if fa.count() != 2 {
			t.Fatalf("%d answers", fa.count())
		}

		// A pane no Turn holds: an unproven answer keeps its occurrence
		// fenced while it is shown; a proven one ends it.
		ft2 := &fakeTerm{term: idleTerminal()}
		w2 := newWorld(t, "", ft2)
		fa2 := &fakeApproval{prompt: shellPrompt("fp-9"), stage: domain.AnswerSent}
		w2.useParts(t, fa2)
		ft2.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenAwaitingApproval })
		offered := func() *domain.ApprovalView {
			t.Helper()
			rows, err := w2.svc.Conversations(w2.host)
			if err != nil || len(rows) != 1 {
				t.Fatalf("list: %+v %v", rows, err)
			}
			return rows[0].Approval
		}
		if av := offered(); av == nil || av.ManualRequired {
			t.Fatalf("offer: %+v", av)
		}
		if res, err := w2.svc.ApproveTerminal(w2.host, "term_a", domain.ApproveOnce); err != nil || res.Outcome != domain.OutcomeUncertain {
			t.Fatalf("unproven answer: %+v %v", res, err)
		}
		if av := offered(); av == nil || !av.ManualRequired {
			t.Fatalf("the prompt answered without proof is offered again: %+v", av)
		}
		fa2.set(func(f *fakeApproval) { f.stage = ""; f.prompt = shellPrompt("fp-10") })
		offered()
		if res, err := w2.svc.ApproveTerminal(w2.host, "term_a", domain.ApproveOnce); err != nil || res.Outcome != domain.OutcomeDone {
			t.Fatalf("proven answer: %+v %v", res, err)
		}
		fa2.set(func(f *fakeApproval) { f.prompt = shellPrompt("fp-10") })
		if av := offered(); av == nil || av.ManualRequired {
			t.Fatalf("the same prompt after a proven answer: %+v", av)
		}
		if fa2.count() != 2 {
			t.Fatalf("%d answers", fa2.count())
		}
	})
}

// The agent asks its next prompt as the answer to the last is proven (a
// hook's next request, held at once with a fast model), and the monitor
// stores it before the answer is recorded: recording the answer leaves the
// Turn waiting on the new prompt. (It made the Turn working, and the next
// look announced the same new prompt a second time.)
func TestAnswerRecordedAfterTheNextPromptLeavesItWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, _, fa, id := awaitingTurn(t)
		if _, err := w.svc.Turn(w.host, id); err != nil { // the offer
			t.Fatal(err)
		}
		fa.set(func(f *fakeApproval) {
			f.cleared = func() { // under f's lock, as the answer is proven
				f.prompt = shellPrompt("fp-2")
				// The monitor's write of the new prompt, before the answer's.
				cur, err := w.store.Turn(context.Background(), id)
				if err != nil {
					t.Error(err)
					return
				}
				cur.LatestText = "asking again"
				if err := w.store.InTx(context.Background(), func(tx domain.Tx) error { return tx.UpdateTurn(context.Background(), cur) }); err != nil {
					t.Error(err)
				}
			}
		})
		res, err := w.svc.Approve(w.host, id, domain.ApproveOnce)
		if err != nil || res.Outcome != domain.OutcomeDone {
			t.Fatalf("approve: %+v %v", res, err)
		}
		if res.Turn.State != domain.TurnAwaitingApproval {
			t.Fatalf("the answer to fp-1 left the Turn %s; it waits on fp-2", res.Turn.State)
		}
	})
}
