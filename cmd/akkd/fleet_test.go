package main

import (
	"strings"
	"testing"

	"akk/persistence/storetest"
)

// Two nodes on one database, no agents: a host registered on one works on
// the other, an event stored through one reaches a stream on the other
// live, its webhook is delivered once; a token rotated on one ends the
// host's stream on the other.
func TestFleetEventsReachEveryNode(t *testing.T) {
	url := storetest.NewDatabase(t)
	rec := newReceiver(t, "")
	n1 := startProc(t, t.TempDir(), "AKK_STORE="+url, "AKK_NODE=n1", "AKK_TMUX_SOCKETS=/nonexistent/akk-none")
	n2 := startProc(t, t.TempDir(), "AKK_STORE="+url, "AKK_NODE=n2", "AKK_TMUX_SOCKETS=/nonexistent/akk-none")
	var host hostCreds
	if code := call(t, "POST", n1.url+"/v1/hosts", n1.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host); code != 201 {
		t.Fatalf("register: %d", code)
	}
	stream := openEvents(t, n2.url, host.Token, "")
	if code := call(t, "POST", n1.url+"/v1/hosts/"+host.HostID+"/ping", n2.token(), "", nil); code/100 != 2 {
		t.Fatalf("ping through n1 with n2's operator token: %d", code)
	}
	ev := stream.next(t)
	if ev.event != "host.ping" || !strings.Contains(ev.data, host.HostID) {
		t.Fatalf("n2's stream got %+v", ev)
	}
	if got := rec.wait(t, 1); len(got) != 1 {
		t.Fatalf("deliveries %d", len(got))
	}
	// The host's token rotated on n1: its stream on n2 ends at once.
	if code := call(t, "POST", n1.url+"/v1/hosts/"+host.HostID+"/rotate-token", n1.token(), "", nil); code != 200 {
		t.Fatalf("rotate: %d", code)
	}
	stream.ended(t)
	if code := call(t, "GET", n2.url+"/v1/turns", host.Token, "", nil); code != 401 {
		t.Fatalf("the old token on n2: %d", code)
	}
}
