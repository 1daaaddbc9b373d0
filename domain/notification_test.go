package domain

import (
	"testing"
	"time"
)

func TestRetryPolicy(t *testing.T) {
	p := RetryPolicy{Schedule: []time.Duration{time.Second, time.Minute}, Jitter: 0.1}
	now := time.Unix(0, 0)
	next, ok := p.After(now, 1, 0)
	if !ok || next.Sub(now) < 900*time.Millisecond || next.Sub(now) > 1100*time.Millisecond {
		t.Fatalf("first retry at %s", next.Sub(now))
	}
	if next, ok = p.After(now, 2, 5*time.Minute); !ok || next.Sub(now) != 5*time.Minute {
		t.Fatalf("Retry-After not honoured: %s", next.Sub(now))
	}
	if next, _ = p.After(now, 2, 100*time.Hour); next.Sub(now) != maxRetryAfter {
		t.Fatalf("Retry-After not bounded: %s", next.Sub(now))
	}
	if _, ok = p.After(now, 3, 0); ok {
		t.Fatal("retried past the schedule")
	}
}
