package turnio

import (
	"context"
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
			mark, err := x.Mark(ctx, term)
			if err != nil {
				t.Errorf("mark %d: %v", i, err)
				return
			}
			if m, err := decodeMark(mark); err == nil {
				holders[i] = m.Holder
			}
			if stage, err := x.Submit(ctx, term, texts[i]); stage != domain.SubmitEntered {
				t.Errorf("submit %d: %s, %v", i, stage, err)
				return
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
}
