package handlers

import (
	"testing"
	"time"
)

// When a principal has its most sessions, its own session signed in
// longest ago goes, never a newer one and never another principal's.
func TestUISessionsEvictTheOldest(t *testing.T) {
	var u uiSessions
	start := time.Now()
	other, _ := u.add("op", "operator", start)
	var ids []string
	for i := range maxSessionsPerPrincipal {
		id, _ := u.add("tok", "host:a", start.Add(time.Duration(i+1)*time.Second))
		ids = append(ids, id)
	}
	now := start.Add(time.Duration(maxSessionsPerPrincipal+1) * time.Second)
	newest, _ := u.add("tok", "host:a", now)
	if _, ok := u.get(ids[0], now); ok {
		t.Fatal("the oldest session survived a full table")
	}
	for _, id := range []string{other, ids[1], ids[maxSessionsPerPrincipal-1], newest} {
		if _, ok := u.get(id, now); !ok {
			t.Fatalf("session %s was evicted", id)
		}
	}
}
