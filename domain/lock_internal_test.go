package domain

import (
	"fmt"
	"sync"
	"testing"
)

// Locks of terminals nobody holds are dropped: unknown ids cannot grow the
// map without bound.
func TestTerminalLocksDoNotAccumulate(t *testing.T) {
	tr := &turns{locks: map[string]*terminalLock{}}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(2)
		for range 2 {
			go func() {
				defer wg.Done()
				tr.lockTerminal(fmt.Sprintf("term_%d", i%20))()
			}()
		}
	}
	wg.Wait()
	if n := len(tr.locks); n != 0 {
		t.Fatalf("%d terminal locks left after every holder released", n)
	}
}
