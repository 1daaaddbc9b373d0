package main

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// connTracker bounds the connections served at once without making new
// ones wait (a listener that blocks Accept at its limit lets a crowd of
// silent sockets keep health and the operator out). At the cap, the
// oldest connections that have sent no request yet or idle between
// requests are closed to make room; when every connection is serving a
// request, reserve more are let in, and beyond that a new connection is
// closed at once. A connection that sends nothing within firstByte is
// closed.
type connTracker struct {
	max, reserve int
	firstByte    time.Duration

	mu    sync.Mutex
	conns map[net.Conn]*trackedConn
}

type trackedConn struct {
	state http.ConnState
	since time.Time // when it entered state
	timer *time.Timer
}

func newConnTracker(max, reserve int, firstByte time.Duration) *connTracker {
	return &connTracker{max: max, reserve: reserve, firstByte: firstByte, conns: map[net.Conn]*trackedConn{}}
}

// track is the http.Server's ConnState hook.
func (t *connTracker) track(c net.Conn, state http.ConnState) {
	var closing []net.Conn
	t.mu.Lock()
	tc := t.conns[c]
	switch state {
	case http.StateNew:
		tc = &trackedConn{state: state, since: time.Now()}
		tc.timer = time.AfterFunc(t.firstByte, func() { t.silent(c, tc) })
		t.conns[c] = tc
		if over := len(t.conns) - t.max; over > 0 {
			closing = t.oldestIdleLocked(over, c)
		}
		if len(t.conns) > t.max+t.reserve {
			t.forgetLocked(c)
			closing = append(closing, c)
		}
	case http.StateActive, http.StateIdle:
		if tc != nil {
			tc.state, tc.since = state, time.Now()
			tc.timer.Stop()
		}
	default: // hijacked or closed
		t.forgetLocked(c)
	}
	t.mu.Unlock()
	for _, c := range closing {
		c.Close()
	}
}

// silent closes a connection that has sent no byte since it was accepted.
func (t *connTracker) silent(c net.Conn, tc *trackedConn) {
	t.mu.Lock()
	still := t.conns[c] == tc && tc.state == http.StateNew
	if still {
		t.forgetLocked(c)
	}
	t.mu.Unlock()
	if still {
		c.Close()
	}
}

// oldestIdleLocked forgets and returns up to n of the oldest connections
// that are new (no request yet) or idle, other than keep.
func (t *connTracker) oldestIdleLocked(n int, keep net.Conn) []net.Conn {
	type cand struct {
		c     net.Conn
		since time.Time
	}
	var cands []cand
	for c, tc := range t.conns {
		if c != keep && (tc.state == http.StateNew || tc.state == http.StateIdle) {
			cands = append(cands, cand{c, tc.since})
		}
	}
	var out []net.Conn
	for ; n > 0 && len(cands) > 0; n-- {
		oldest := 0
		for i := range cands {
			if cands[i].since.Before(cands[oldest].since) {
				oldest = i
			}
		}
		out = append(out, cands[oldest].c)
		t.forgetLocked(cands[oldest].c)
		cands[oldest] = cands[len(cands)-1]
		cands = cands[:len(cands)-1]
	}
	return out
}

func (t *connTracker) forgetLocked(c net.Conn) {
	if tc := t.conns[c]; tc != nil {
		tc.timer.Stop()
		delete(t.conns, c)
	}
}
