package handlers

import (
	"testing"
	"time"
)

// When the dashboard's session table is full, the session signed in
// longest ago goes, never a newer one.
func TestUISessionsEvictTheOldest(t *testing.T) {
	var u uiSessions
	start := time.Now()
	var ids []string
	for i := range maxSessions {
		id, _ := u.add("tok", start.Add(time.Duration(i)*time.Second))
		ids = append(ids, id)
	}
	now := start.Add(time.Duration(maxSessions) * time.Second)
	newest, _ := u.add("tok", now)
	if _, ok := u.get(ids[0], now); ok {
		t.Fatal("the oldest session survived a full table")
	}
	for _, id := range []string{ids[1], ids[maxSessions-1], newest} {
		if _, ok := u.get(id, now); !ok {
			t.Fatalf("session %s was evicted", id)
		}
	}
}
