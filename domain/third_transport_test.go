package domain_test

import (
	"slices"
	"testing"
	"testing/synctest"

	"akk/domain"
	"akk/domain/endpointtest"
	"akk/endpoints"
)

// A third transport is one adapter package and one line that wires it in:
// the scripted daemon of endpointtest, written against the public port
// alone, is listed, sent to, followed, approved, interrupted and watched
// through the same use cases as Codex's daemon, with nothing of it in the
// domain.
func TestAThirdTransportIsOneAdapterAndOneLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorld(t, "", ft)
		w.useParts(t, anchor{ft, false})
		tr := endpointtest.New("th-9", "/work/proj")
		endpoints.UseThreadTransport(w.svc, endpointtest.Kind, tr, ft) // the one line
		ctx := t.Context()

		// Listed as a row of its own, with a send to its conversation.
		l, err := w.svc.List(w.host)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(l.Conversations, func(c domain.Conversation) bool { return c.ID == tr.ConversationID() })
		if i < 0 {
			t.Fatalf("no row %s in %+v", tr.ConversationID(), l.Conversations)
		}
		row := l.Conversations[i]
		if row.Endpoint.Kind != endpointtest.Kind.Endpoint || row.Backend == nil || row.Backend.Kind != endpointtest.Kind.Endpoint ||
			!slices.ContainsFunc(row.Actions, func(a domain.Action) bool { return a.Name == "send" && a.Body["conversation_id"] == row.ID }) {
			t.Fatalf("row %+v", row)
		}

		// Sent to: one start with the request, a Turn holding the thread.
		r, err := w.svc.Send(w.host, domain.SendInput{ConversationID: tr.ConversationID(), Request: "build it"})
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.Requests(); !slices.Equal(got, []string{"build it"}) {
			t.Fatalf("starts %v", got)
		}
		if r.Turn.TerminalID != tr.EndpointID() || r.Turn.Endpoint.Kind != endpointtest.Kind.Endpoint || r.Turn.DeliveryPath != endpointtest.Kind.Path {
			t.Fatalf("turn %+v", r.Turn)
		}
		if _, err := w.svc.Send(w.host, domain.SendInput{ConversationID: tr.ConversationID(), Request: "again"}); code(err) != domain.CodeConflictActiveTurn {
			t.Fatalf("a second send while the turn holds the thread: %v", err)
		}

		// Followed: its progress, its prompt, the host's answer, its end.
		if err := tr.Say(ctx, domain.BackendEvent{Kind: domain.BackendProgress, Text: "on it"}); err != nil {
			t.Fatal(err)
		}
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		if err := tr.Ask(ctx, "make test"); err != nil {
			t.Fatal(err)
		}
		w.waitState(t, r.Turn.ID, domain.TurnAwaitingApproval)
		st, err := w.svc.Turn(w.host, r.Turn.ID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Approval == nil || st.Approval.CommandExcerpt != "make test" || st.Approval.ManualRequired {
			t.Fatalf("approval %+v", st.Approval)
		}
		if _, err := w.svc.Approve(w.other, r.Turn.ID, domain.ApproveOnce); code(err) != domain.CodeTurnNotFound {
			t.Fatalf("another host's approval: %v", err)
		}
		res, err := w.svc.Approve(w.host, r.Turn.ID, domain.ApproveOnce)
		if err != nil || res.Outcome != domain.OutcomeDone {
			t.Fatalf("approve: %+v, %v", res, err)
		}
		if got := tr.Decisions(); !slices.Equal(got, []domain.ApprovalDecision{domain.ApproveOnce}) {
			t.Fatalf("decisions %v", got)
		}
		w.waitState(t, r.Turn.ID, domain.TurnWorking)
		if err := tr.Say(ctx, domain.BackendEvent{Kind: domain.BackendCompleted, Text: "built"}); err != nil {
			t.Fatal(err)
		}
		if got := w.waitState(t, r.Turn.ID, domain.TurnCompleted); got.FinalMessage != "built" {
			t.Fatalf("final message %q", got.FinalMessage)
		}

		// Interrupted: a cancel reaches the daemon once, which ends the turn.
		r2, err := w.svc.Send(w.host, domain.SendInput{ConversationID: tr.ConversationID(), Request: "then this"})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Say(ctx, domain.BackendEvent{Kind: domain.BackendProgress, Text: "working"}); err != nil {
			t.Fatal(err)
		}
		w.waitState(t, r2.Turn.ID, domain.TurnWorking)
		if _, err := w.svc.Cancel(w.host, r2.Turn.ID); err != nil {
			t.Fatal(err)
		}
		w.waitState(t, r2.Turn.ID, domain.TurnCancelled)
		if n := tr.Interrupts(); n != 1 {
			t.Fatalf("%d interrupts, want 1", n)
		}

		// Watched: a turn another client started, followed to its end.
		if _, _, err := tr.Start(ctx, domain.BackendThread{ThreadID: "th-9"}, "by hand", "", domain.BackendTurnOptions{}); err != nil {
			t.Fatal(err)
		}
		wa, err := w.svc.StartWatch(w.host, domain.NewWatchInput{TerminalID: tr.EndpointID()})
		if err != nil {
			t.Fatal(err)
		}
		if wa.Mode != domain.WatchModeExact || wa.Endpoint.Kind != endpointtest.Kind.Endpoint {
			t.Fatalf("watch %+v", wa)
		}
		if err := tr.Say(ctx, domain.BackendEvent{Kind: domain.BackendCompleted, Text: "by hand, done"}); err != nil {
			t.Fatal(err)
		}
		if got := w.waitWatch(t, wa.ID, domain.WatchCompleted); got.FinalMessage != "by hand, done" {
			t.Fatalf("watch final message %q", got.FinalMessage)
		}

		// Its models, read with no input.
		m, err := w.svc.Models(w.host, tr.EndpointID())
		if err != nil || m.Effective == nil || m.Effective.Model != "scripted-1" {
			t.Fatalf("models %+v, %v", m, err)
		}
	})
}
