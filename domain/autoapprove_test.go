package domain_test

import (
	"fmt"
	"testing"
	"testing/synctest"

	"akk/domain"
)

func commandPrompt(fp, cmd string) domain.ApprovalPrompt {
	p := shellPrompt(fp)
	p.Command, p.CommandExcerpt = cmd, cmd
	return p
}

// A rule is plain words inside the project; a rejected policy changes
// nothing.
func TestApprovalPolicyValidation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t, "", &fakeTerm{term: idleTerminal()})
		hostID := mustPrincipal(t, w).HostID
		good := []domain.ApprovalRule{{Argv: []string{"touch", "notes.txt"}}, {Agent: "codex", Project: "/work/p", Argv: []string{"make", "test"}}}
		if got, err := w.svc.SetApprovalPolicy(w.host, hostID, good); err != nil || len(got) != 2 {
			t.Fatalf("set: %+v %v", got, err)
		}
		for name, argv := range map[string][]string{
			"composition": {"touch", "notes.txt;", "rm", "x"}, "expansion": {"touch", "$HOME/x"}, "redirection": {"touch", ">", "f"},
			"glob": {"rm", "*.txt"}, "absolute": {"touch", "/etc/x"}, "parent": {"touch", "../x"}, "env": {"A=1", "make"},
			"quote": {"echo", "'x'"}, "empty": {}, "space": {"touch", "a b"}, "tilde": {"touch", "~/x"},
		} {
			_, err := w.svc.SetApprovalPolicy(w.host, hostID, []domain.ApprovalRule{{Argv: argv}})
			if code(err) != domain.CodeValidationFailed {
				t.Errorf("%s: %v", name, err)
			}
		}
		if _, err := w.svc.SetApprovalPolicy(w.host, hostID, []domain.ApprovalRule{{Agent: "vim", Argv: []string{"ls"}}}); code(err) != domain.CodeValidationFailed {
			t.Errorf("agent: %v", err)
		}
		if got, err := w.svc.ApprovalPolicy(w.host, hostID); err != nil || len(got) != 2 {
			t.Fatalf("a rejected policy changed the stored one: %+v %v", got, err)
		}
		if _, err := w.svc.ApprovalPolicy(w.host, "host_other"); code(err) != domain.CodeForbidden {
			t.Errorf("another host's policy: %v", err)
		}
	})
}

// A prompt whose command is exactly a rule's argv is approved once on the
// host's behalf, with an auto_approved callback and no approval_required;
// any other command (or none read whole) is the host's, with no key.
func TestAutoApprovalExactCommandOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, ft, fa, id := awaitingTurn(t) // a first prompt, before any policy: the host's
		hostID := mustPrincipal(t, w).HostID
		if _, err := w.svc.SetApprovalPolicy(w.host, hostID, []domain.ApprovalRule{{Argv: []string{"touch", "notes.txt"}}}); err != nil {
			t.Fatal(err)
		}
		w.svc.Turn(w.host, id)
		if _, err := w.svc.Approve(w.host, id, domain.ApproveOnce); err != nil {
			t.Fatal(err)
		}
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking })
		w.waitState(t, id, domain.TurnWorking)

		// As in the pane: an answered prompt leaves the screen to the agent at work.
		fa.set(func(f *fakeApproval) {
			f.onAnswer = func() { ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking }) }
		})
		ask := func(p domain.ApprovalPrompt) {
			t.Helper()
			fa.set(func(f *fakeApproval) { f.prompt = p })
			ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenAwaitingApproval })
		}
		ask(commandPrompt("fp-touch", "touch notes.txt"))
		w.waitWebhook(t, id, "turn.approval_auto_approved")
		if fa.count() != 2 {
			t.Fatalf("%d answers", fa.count())
		}
		ft.set(func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking })
		w.waitState(t, id, domain.TurnWorking)
		count := func(typ string) (n int) {
			for _, x := range webhookTypes(t, w, id) {
				if x == typ {
					n++
				}
			}
			return n
		}
		if count("turn.approval_required") != 1 || count("turn.approval_auto_approved") != 1 {
			t.Fatalf("webhooks %v", webhookTypes(t, w, id))
		}
		// Each of these is announced to the host, and gets no key.
		for _, cmd := range []string{"touch notes.txt; rm x", "touch $HOME/x", "touch notes.txt > f", "touch  notes.txt", ""} {
			before := count("turn.approval_required")
			ask(commandPrompt("fp-other-"+cmd, cmd))
			w.until(t, func() string {
				if count("turn.approval_required") == before {
					return fmt.Sprintf("%q never announced; webhooks %v", cmd, webhookTypes(t, w, id))
				}
				return ""
			})
			if fa.count() != 2 {
				t.Fatalf("%q was approved", cmd)
			}
		}
		if count("turn.approval_auto_approved") != 1 {
			t.Fatalf("webhooks %v", webhookTypes(t, w, id))
		}
	})
}
