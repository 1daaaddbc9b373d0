package agentpane

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"akk/domain"
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
