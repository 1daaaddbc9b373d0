package main

import (
	"os/exec"
	"strings"
	"testing"
	"time"

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
	if code := call(t, "POST", n1.url+"/v1/hosts", n1.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h","delivery_node":"n1"}`, &host); code != 201 {
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

// A node's lifecycle, no agents: a node whose derived advertise URL is a
// loopback one is refused once the fleet has other nodes, and so is one
// advertising another live node's URL; a live node cannot be removed; a
// stopped one's operator token opens nothing, and removed, it is no
// longer listed.
func TestFleetNodeLifecycle(t *testing.T) {
	url := storetest.NewDatabase(t)
	n1 := startProc(t, t.TempDir(), "AKK_STORE="+url, "AKK_NODE=n1", "AKK_TMUX_SOCKETS=/nonexistent/akk-none")
	n2 := startProc(t, t.TempDir(), "AKK_STORE="+url, "AKK_NODE=n2", "AKK_TMUX_SOCKETS=/nonexistent/akk-none")

	refused := func(why string, args ...string) {
		t.Helper()
		cmd := exec.Command(daemonBinary(t), append([]string{"--listen", freeAddr(t), "--state-dir", t.TempDir(), "--store", url}, args...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), why) {
			t.Fatalf("akkd %v: %v, want a refusal saying %q:\n%s", args, err, why, out)
		}
	}
	refused("a loopback address", "--node", "n3")
	refused("advertises "+n1.url+" already", "--node", "n3", "--advertise-url", n1.url)

	if code := call(t, "DELETE", n1.url+"/v1/nodes/n2", n1.token(), "", nil); code != 409 {
		t.Fatalf("remove a live node: %d", code)
	}
	if code := call(t, "DELETE", n1.url+"/v1/nodes/n9", n1.token(), "", nil); code != 404 {
		t.Fatalf("remove no node: %d", code)
	}
	token2 := n2.token()
	if code := call(t, "GET", n1.url+"/v1/nodes", token2, "", nil); code != 200 {
		t.Fatalf("n2's operator token on n1 while n2 lives: %d", code)
	}
	n2.kill()
	deadline := time.Now().Add(30 * time.Second)
	for call(t, "GET", n1.url+"/v1/nodes", token2, "", nil) != 401 {
		if time.Now().After(deadline) {
			t.Fatal("a stopped node's operator token still opens the fleet")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code := call(t, "DELETE", n1.url+"/v1/nodes/n2", n1.token(), "", nil); code != 204 {
		t.Fatalf("remove a stopped node: %d", code)
	}
	var nl struct {
		Nodes []struct{ Name string } `json:"nodes"`
	}
	if code := call(t, "GET", n1.url+"/v1/nodes", n1.token(), "", &nl); code != 200 || len(nl.Nodes) != 1 || nl.Nodes[0].Name != "n1" {
		t.Fatalf("nodes after the removal: %d %+v", code, nl)
	}
}
