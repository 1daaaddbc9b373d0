package domain_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"akk/domain"
)

// fakeNative scripts the native controls and counts every plan that
// could have sent a key.
type fakeNative struct {
	mu     sync.Mutex
	calls  int
	models domain.ModelState
	effort string // set by SetModel
	stage  domain.AnswerStage
	thread string
	// notReady status probes after a new thread find the pane moved on
	// (nothing typed) before one reads next.
	notReady int
	next     string
}

func (n *fakeNative) count() int { n.mu.Lock(); defer n.mu.Unlock(); return n.calls }
func (n *fakeNative) hit() domain.AnswerStage {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.calls++
	if n.stage != "" {
		return n.stage
	}
	return domain.AnswerVerified
}
func (n *fakeNative) StatusCard(context.Context, domain.Terminal) (domain.NativeStatus, domain.AnswerStage, error) {
	n.mu.Lock()
	if n.next != "" && n.notReady > 0 {
		n.notReady--
		n.mu.Unlock()
		return domain.NativeStatus{}, domain.AnswerNothing, errors.New("terminal not ready for a request: screen working (title spinner)")
	}
	thread := n.thread
	if n.next != "" {
		thread = n.next
	}
	n.mu.Unlock()
	return domain.NativeStatus{NativeThreadID: thread, AgentVersion: "2.1.328"}, n.hit(), nil
}
func (n *fakeNative) WorkingStatusCard(ctx context.Context, t domain.Terminal) (domain.NativeStatus, domain.AnswerStage, error) {
	return n.StatusCard(ctx, t)
}
func (n *fakeNative) NewThread(context.Context, domain.Terminal) (domain.AnswerStage, error) {
	n.mu.Lock()
	n.next = "0a0a0a0a-0000-4000-8000-000000000002"
	n.mu.Unlock()
	return n.hit(), nil
}
func (n *fakeNative) ResumeThread(context.Context, domain.Terminal, string) (domain.AnswerStage, error) {
	return n.hit(), nil
}
func (n *fakeNative) Models(context.Context, domain.Terminal) (domain.ModelState, domain.AnswerStage, error) {
	st := n.models
	n.mu.Lock()
	if n.effort != "" {
		st.Effort = n.effort
	}
	n.mu.Unlock()
	return st, n.hit(), nil
}
func (n *fakeNative) SetModel(_ context.Context, _ domain.Terminal, model, effort string) (domain.ModelState, domain.AnswerStage, error) {
	stage := n.hit()
	n.mu.Lock()
	n.effort = effort
	n.mu.Unlock()
	return domain.ModelState{Model: model, Effort: effort, Scope: "current_session"}, stage, nil
}

// nativePanes is a pane transport with n's model and permission controls.
type nativePanes struct {
	panes
	*fakeNative
}

func nativeWorld(t *testing.T) (*world, *fakeNative) {
	term := &fakeTerm{term: idleTerminal()}
	term.term.NativeIdentity, term.term.NativeThreadID = domain.IdentityResolved, "0a0a0a0a-0000-4000-8000-000000000001"
	w := newWorld(t, "", term)
	n := &fakeNative{thread: term.term.NativeThreadID, models: domain.ModelState{Model: "default", Effort: "medium", Scope: "current_session",
		Models: []domain.ModelOption{{Model: "default", Label: "Default", Efforts: []string{"low", "medium", "high"}}, {Model: "haiku", Label: "Haiku"}}}}
	w.use(t, nativePanes{w.panes.With(n), n})
	return w, n
}

// Every native control refuses with no plan run where the pane is not
// idle with an empty composer, another controller's Turn holds it, or its
// version is read with a neighbour's profile.
func TestNativeControlsRefuseBeforeAnyKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, n := nativeWorld(t)
		calls := map[string]func() error{
			"inspect":    func() error { _, err := w.svc.Inspect(w.host, "term_a", "status"); return err },
			"new thread": func() error { _, err := w.svc.NewThread(w.host, "term_a"); return err },
			"models":     func() error { _, err := w.svc.Models(w.host, "term_a"); return err },
		}
		for name, set := range map[string]func(f *fakeTerm){
			"a draft":       func(f *fakeTerm) { f.term.ComposerEmpty = false },
			"working":       func(f *fakeTerm) { f.term.ScreenState = domain.ScreenWorking },
			"compatibility": func(f *fakeTerm) { f.term.Agent.Compatibility = true },
		} {
			w.term.set(func(f *fakeTerm) { f.term = idleTerminal() })
			w.term.set(set)
			for what, fn := range calls {
				if err := fn(); err == nil {
					t.Errorf("%s on %s: no refusal", what, name)
				}
			}
		}
		if n.count() != 0 {
			t.Fatalf("%d plans ran on refused panes", n.count())
		}
		if _, err := w.svc.Inspect(w.host, "term_a", "config"); code(err) != domain.CodeValidationFailed {
			t.Fatalf("an unknown inspection: %v", err)
		}
	})
}

// The model catalogue authorizes one set-model of the same conversation:
// none, another conversation's, an effort it does not advertise all send
// no key; a tuple in effect is already_effective with no key.
func TestModelCatalogueIsConsumedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, n := nativeWorld(t)
		if _, err := w.svc.SetModel(w.host, "term_a", "default", "high"); code(err) != domain.CodeOfferExpired {
			t.Fatalf("without a catalogue: %v", err)
		}
		if _, err := w.svc.Models(w.host, "term_a"); err != nil {
			t.Fatal(err)
		}
		base := n.count()
		if _, err := w.svc.SetModel(w.other, "term_a", "default", "high"); code(err) != domain.CodeOfferExpired {
			t.Fatalf("another controller: %v", err)
		}
		if _, err := w.svc.SetModel(w.host, "term_a", "haiku", "high"); code(err) != domain.CodeValidationFailed {
			t.Fatalf("an effort the catalogue does not advertise for the model: %v", err)
		}
		if _, err := w.svc.SetModel(w.host, "term_a", "default", "high"); code(err) != domain.CodeOfferExpired {
			t.Fatalf("a consumed catalogue: %v", err)
		}
		if n.count() != base {
			t.Fatalf("refused set-models ran %d plans", n.count()-base)
		}
		w.svc.Models(w.host, "term_a")
		r, err := w.svc.SetModel(w.host, "term_a", "default", "medium")
		if err != nil || r.Outcome != "already_effective" || n.count() != base+1 {
			t.Fatalf("a tuple in effect: %+v %v (%d plans)", r, err, n.count()-base)
		}
		w.svc.Models(w.host, "term_a")
		if r, err := w.svc.SetModel(w.host, "term_a", "default", "high"); err != nil || r.Outcome != "changed" || r.Effective.Effort != "high" {
			t.Fatalf("a change: %+v %v", r, err)
		}
		// Keys sent without proof: uncertain, never claimed.
		n.stage = domain.AnswerSent
		w.svc.Models(w.host, "term_a")
		n.stage = ""
		w.svc.Models(w.host, "term_a")
		n.stage = domain.AnswerSent
		if r, err := w.svc.SetModel(w.host, "term_a", "default", "low"); err != nil || r.Outcome != "uncertain" || !r.DoNotRetry {
			t.Fatalf("an unproven change: %+v %v", r, err)
		}
	})
}

// A Codex new thread is proven by a status probe once the pane is idle
// again; a probe that finds the pane moved on since the look (its title
// redrawn, nothing typed) is asked again, not taken for an uncertain
// outcome.
func TestNewThreadProbesAgainWhenThePaneMovedOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, n := nativeWorld(t)
		w.term.set(func(f *fakeTerm) {
			f.term.Agent = domain.Agent{Kind: domain.AgentCodex, Version: "0.158.0", Profile: "codex-0.158.0", ThreadProbe: true}
		})
		n.mu.Lock()
		n.notReady = 2
		n.mu.Unlock()
		res, err := w.svc.NewThread(w.host, "term_a")
		if err != nil || res.Outcome != domain.OutcomeDone || res.NativeThreadID != "0a0a0a0a-0000-4000-8000-000000000002" ||
			res.Binding != domain.BindingPendingFirstTurn {
			t.Fatalf("new thread: %+v %v", res, err)
		}
	})
}
