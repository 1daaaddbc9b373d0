package agentpane

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
	"akk/terminaldrivers/discovery"
)

// TestE2ESharedCodexDaemon runs two Codex 0.169.0 TUIs on one CODEX_HOME,
// so one app-server daemon writes both panes' rollouts, and sends each a
// different request at the same moment: each Turn binds the thread that
// holds its own request.
func TestE2ESharedCodexDaemon(t *testing.T) {
	a := agenttest.RequireAgent(t, agenttest.KindCodex, "0.169.0")
	e := agenttest.New(t, a, agenttest.Options{})
	e.StartReady()
	args := []string{"new-window", "-d", "-t", "akk", "-n", "second", "-c", e.ProjectDir, "--", "env"}
	args = append(args, e.AgentEnv()...)
	if _, err := e.Tmux(append(args, a.Entry())...); err != nil {
		t.Fatal(err)
	}
	d, err := discovery.New(discovery.Config{ExtraSockets: []string{e.SocketPath()}, OnlyExtraSockets: true})
	if err != nil {
		t.Fatal(err)
	}
	x := New(d, Config{})
	ctx := context.Background()
	var terms []domain.Terminal
	deadline := time.Now().Add(agenttest.StartTimeout)
	for {
		terms, err = d.Discover(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ready := 0
		for _, term := range terms {
			if term.SendReady() {
				ready++
			}
		}
		if len(terms) == 2 && ready == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("two send-ready panes not listed: %+v", terms)
		}
		time.Sleep(300 * time.Millisecond)
	}

	var wg sync.WaitGroup
	results := make([]domain.TurnProgress, 2)
	holders := make([]int, 2)
	texts := []string{"a request for the first pane", "a request for the second pane"}
	for i, term := range terms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A fresh second TUI may still flash a working state: a refusal
			// sent nothing, so the test (not the product) tries again.
			var mark domain.DurableMark
			for try := 0; ; try++ {
				var err error
				if mark, err = x.Mark(ctx, term); err != nil {
					t.Errorf("mark %d: %v", i, err)
					return
				}
				stage, err := x.Submit(ctx, term, texts[i])
				if stage == domain.SubmitEntered {
					break
				}
				if stage != domain.SubmitNothing || !errors.Is(err, ErrNotReady) || try == 20 {
					t.Errorf("submit %d: %s, %v", i, stage, err)
					return
				}
				time.Sleep(500 * time.Millisecond)
			}
			if m, err := decodeMark(mark); err == nil {
				holders[i] = m.Holder
			}
			deadline := time.Now().Add(agenttest.TurnTimeout)
			for {
				p, err := x.Progress(ctx, term, mark, texts[i])
				if err != nil {
					t.Errorf("progress %d: %v", i, err)
					return
				}
				mark = p.Mark
				if p.Ended() {
					results[i] = p
					return
				}
				if time.Now().After(deadline) {
					t.Errorf("pane %d: no end; %+v", i, p)
					return
				}
				time.Sleep(pollEvery)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if holders[0] == 0 || holders[0] != holders[1] {
		t.Errorf("rollout holders %v, want one shared daemon", holders)
	}
	for i, p := range results {
		if want := fakemodel.DefaultReply(texts[i]); !p.Completed || p.FinalMessage != want {
			t.Errorf("pane %d: %+v, want completion %q", i, p, want)
		}
	}
	if results[0].NativeThreadID == "" || results[0].NativeThreadID == results[1].NativeThreadID {
		t.Errorf("threads %q and %q, want two different ones", results[0].NativeThreadID, results[1].NativeThreadID)
	}
	t.Logf("threads %s", strings.Join([]string{results[0].NativeThreadID, results[1].NativeThreadID}, ", "))

	// The same request to both panes: the second is refused, untyped.
	same := "the same request for both panes"
	if stage, err := x.Submit(ctx, readyTerm(t, x, terms[0].ID), same); stage != domain.SubmitEntered {
		t.Fatalf("first of the same request: %s, %v", stage, err)
	}
	stage, err := x.Submit(ctx, readyTerm(t, x, terms[1].ID), same)
	if stage != domain.SubmitNothing || !errors.Is(err, ErrSameRequestInFlight) {
		t.Errorf("second of the same request: %s, %v", stage, err)
	}
	time.Sleep(time.Second)
	n := 0
	for _, q := range e.Model.Requests() {
		if q.UserText == same {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the model was asked the same request %d times, want once", n)
	}
}

// readyTerm observes a terminal until it is send-ready.
func readyTerm(t *testing.T, x *Adapter, id string) domain.Terminal {
	t.Helper()
	deadline := time.Now().Add(agenttest.TurnTimeout)
	for {
		term, err := x.Observe(context.Background(), id)
		if err == nil && term.SendReady() {
			return term
		}
		if time.Now().After(deadline) {
			t.Fatalf("terminal not send-ready: %+v, %v", term, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
