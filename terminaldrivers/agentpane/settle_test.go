package agentpane

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"akk/domain"
	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/screen"
)

// screenRunner answers every capture with the same screen after delay.
type screenRunner struct {
	mu       sync.Mutex
	delay    time.Duration
	captures int
}

func (r *screenRunner) Run(_ context.Context, args ...string) ([]byte, error) {
	r.mu.Lock()
	r.captures++
	d := r.delay
	r.mu.Unlock()
	time.Sleep(d)
	return []byte("a prompt\ntitle\n"), nil
}

func TestSettleAdaptsToWhenThePromptWasFirstSeenAndToLoad(t *testing.T) {
	term := domain.Terminal{Pane: domain.PaneLocator{Socket: "/s", PaneID: "%1"}}
	same := func(screen.Capture) string { return "fp" }
	const settle = 300 * time.Millisecond

	// Seen long ago (an offer the host read a while back): two captures, no wait.
	r := &screenRunner{}
	x := newTestAdapter(t, r, Config{AnswerPollEvery: 10 * time.Millisecond})
	x.seen["fp"] = time.Now().Add(-time.Minute)
	start := time.Now()
	if err := x.settled(context.Background(), term, settle, "fp", same); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= settle || r.captures != 2 { // a wait would be the whole settle
		t.Fatalf("an old prompt waited %s over %d captures", took, r.captures)
	}

	// Just drawn: the whole settle.
	r = &screenRunner{}
	x = newTestAdapter(t, r, Config{AnswerPollEvery: 10 * time.Millisecond})
	start = time.Now()
	if err := x.settled(context.Background(), term, settle, "fp", same); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < settle {
		t.Fatalf("a new prompt waited only %s", took)
	}

	// A slow machine (captures take 60 ms): the wait stretches.
	r = &screenRunner{delay: 60 * time.Millisecond}
	x = newTestAdapter(t, r, Config{AnswerPollEvery: 10 * time.Millisecond})
	start = time.Now()
	if err := x.settled(context.Background(), term, settle, "fp", same); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < settle+4*60*time.Millisecond {
		t.Fatalf("under load the wait was only %s", took)
	}

	// Captures slower than a quarter of VerifyWithin: the wait stretches
	// past settle and VerifyWithin, and a still screen still settles.
	r = &screenRunner{delay: 80 * time.Millisecond}
	x = newTestAdapter(t, r, Config{AnswerPollEvery: 10 * time.Millisecond, VerifyWithin: 100 * time.Millisecond})
	if err := x.settled(context.Background(), term, settle, "fp", same); err != nil {
		t.Fatalf("a still screen on a slow machine: %v", err)
	}

	// The same prompt drawn again after AKK answered it (the same command
	// asked for in a later Turn), or after it went from the screen: a new
	// occurrence, the whole settle again.
	r = &screenRunner{}
	x = newTestAdapter(t, r, Config{AnswerPollEvery: 10 * time.Millisecond})
	x.showing("term_1", "prompt", "fp")
	x.seen["fp"] = time.Now().Add(-time.Minute) // read a while ago
	if err := x.settled(context.Background(), term, settle, "fp", same); err != nil {
		t.Fatal(err)
	}
	x.showing("term_1", "prompt", "fp") // still drawn while the key is taken
	start = time.Now()
	if err := x.settled(context.Background(), term, settle, "fp", same); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < settle {
		t.Fatalf("the prompt drawn again after its answer waited only %s", took)
	}
	x.showing("term_1", "prompt", "fp")
	x.seen["fp"] = time.Now().Add(-time.Minute)
	x.showing("term_1", "prompt", "")   // gone
	x.showing("term_1", "prompt", "fp") // drawn again
	start = time.Now()
	if err := x.settled(context.Background(), term, settle, "fp", same); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < settle {
		t.Fatalf("the prompt drawn again after it went waited only %s", took)
	}

	// The prompt changes while settling: nothing is pressed.
	r = &screenRunner{}
	x = newTestAdapter(t, r, Config{AnswerPollEvery: 10 * time.Millisecond})
	n := 0
	changing := func(screen.Capture) string {
		if n++; n > 2 {
			return "other"
		}
		return "fp"
	}
	if err := x.settled(context.Background(), term, settle, "fp", changing); !errors.Is(err, domain.ErrPromptChanged) {
		t.Fatalf("a changed prompt: %v", err)
	}
}

// seqRunner answers captures from a list of screens, the last one repeated.
type seqRunner struct {
	mu      sync.Mutex
	screens []string
}

func (r *seqRunner) Run(_ context.Context, args ...string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.screens[0]
	if len(r.screens) > 1 {
		r.screens = r.screens[1:]
	}
	return []byte(s + "\ntitle\n"), nil
}

// After a key, a busy agent draws the menu it had for a few more captures:
// two of them agree, but the menu the key left is the one to wait for.
func TestMenuAfterAKeyIsTheOneTheKeyLeft(t *testing.T) {
	term := domain.Terminal{Pane: domain.PaneLocator{Socket: "/s", PaneID: "%1"}}
	read := func(c screen.Capture) (agent.PermissionMenu, bool) {
		if len(c.Lines) == 0 {
			return agent.PermissionMenu{}, false
		}
		switch c.Lines[0].Text {
		case "row 1":
			return agent.PermissionMenu{Labels: []string{"low", "high"}, Selected: 0}, true
		case "row 2":
			return agent.PermissionMenu{Labels: []string{"low", "high"}, Selected: 1}, true
		}
		return agent.PermissionMenu{}, false
	}
	plan := &agent.PermissionPlan{ReadMenu: read}
	r := &seqRunner{screens: []string{"row 1", "row 1", "row 1", "row 2"}}
	x := newTestAdapter(t, r, Config{AnswerPollEvery: time.Millisecond, VerifyWithin: time.Second})
	m, ok := x.stableMenuWhere(context.Background(), term, plan, func(m agent.PermissionMenu) bool { return m.Selected == 1 })
	if !ok || m.Selected != 1 {
		t.Fatalf("read %+v (%v), want the second row selected", m, ok)
	}
	// A menu that never moves: not proven, within VerifyWithin.
	r = &seqRunner{screens: []string{"row 1"}}
	x = newTestAdapter(t, r, Config{AnswerPollEvery: time.Millisecond, VerifyWithin: 50 * time.Millisecond})
	if _, ok := x.stableMenuWhere(context.Background(), term, plan, func(m agent.PermissionMenu) bool { return m.Selected == 1 }); ok {
		t.Fatal("a menu that never moved read as moved")
	}
}
