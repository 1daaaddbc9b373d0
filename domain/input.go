package domain

import (
	"context"
	"sync"
	"time"
)

// KeySequenceBound bounds a key sequence once it started: it runs to its
// end under this bound, whatever happens to the request that asked for it.
const KeySequenceBound = 30 * time.Second

// inputGate counts the key sequences in flight: every use case that types
// into a pane starts its sequence here, and a daemon shutting down waits
// for them (WaitForInput).
type inputGate struct {
	timer basics // the clock a sequence is bounded on
	wg    sync.WaitGroup
}

// keySequence is the context a key sequence runs under once its
// reservation is durable: a client that disconnects, or a daemon shutting
// down, must not stop it between the paste and the Enter (that would leave
// text in the composer and the Turn uncertain). Call done when it ends.
func (g *inputGate) keySequence(ctx context.Context) (seq context.Context, done func()) {
	g.wg.Add(1)
	seq, cancel := g.timer.boundedFrom(ctx, KeySequenceBound, "key-sequence")
	return seq, func() { cancel(); g.wg.Done() }
}

// WaitForInput waits until no key sequence is in flight, or ctx ends: a
// daemon shutting down calls it before it stops.
func (g *inputGate) WaitForInput(ctx context.Context) error {
	idle := make(chan struct{})
	go func() { g.wg.Wait(); close(idle) }()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answerMarks counts, by Turn, the answers AKK is giving its prompt or
// step (answerTurn): their monitors announce no prompt meanwhile.
type answerMarks struct {
	mu        sync.Mutex
	answering map[string]int
}

// answerTurn marks an answer to Turn id's prompt or step as under way,
// until done is called: from before its first key until its outcome is
// recorded. Meanwhile the Turn's monitor announces no prompt or step: what
// it reads then is the answer's own doing (a menu's selection moving, the
// next step drawn before the answer is recorded), and the recorded
// outcome moves the Turn on, after which a step still shown is announced.
func (a *answerMarks) answerTurn(id string) (done func()) {
	a.mu.Lock()
	if a.answering == nil {
		a.answering = map[string]int{}
	}
	a.answering[id]++
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		if a.answering[id]--; a.answering[id] <= 0 {
			delete(a.answering, id)
		}
		a.mu.Unlock()
	}
}

// answeringNow reports whether an answer to Turn id is under way.
func (a *answerMarks) answeringNow(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.answering[id] > 0
}
