package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// netLab is a network of the test's own: a bridge on this machine with
// an address of a /24 of its own, and machines (network namespaces), each
// joined to the bridge by a veth pair with an address of its own. The
// fleet tests run each node on a machine of its own, reaching PostgreSQL,
// the webhook receiver and each other over it with real addresses, so a
// machine can be cut off the network, or die, as a real one would.
type netLab struct {
	t      testing.TB
	id     string // six hex digits that name the lab's links and namespaces
	prefix string // the /24's first three octets
	bridge string
}

// labMachine is one machine of a netLab.
type labMachine struct {
	lab  *netLab
	name string // the network namespace
	ip   string
	link string // the bridge's end of its veth pair
	n    int
	gen  int // how many times it was made (a dead machine's links go away in the background)
}

// newNetLab makes the bridge; it and every machine are removed when the
// test ends. Without root or iproute2 the test skips (fails when
// AKK_REQUIRE_TOOLS=1: CI needs it).
func newNetLab(t testing.TB) *netLab {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (make check): no network namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil || os.Geteuid() != 0 {
		msg := "network namespaces need root and iproute2 (ip)"
		if os.Getenv("AKK_REQUIRE_TOOLS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var b [3]byte
	rand.Read(b[:])
	l := &netLab{t: t, id: hex.EncodeToString(b[:]), prefix: fmt.Sprintf("10.%d.%d", 100+int(b[0])%100, b[1])}
	l.bridge = "akb" + l.id
	t.Cleanup(func() { exec.Command("ip", "link", "del", l.bridge).Run() })
	l.ip("link", "add", l.bridge, "type", "bridge")
	l.ip("addr", "add", l.prefix+".1/24", "dev", l.bridge)
	l.ip("link", "set", l.bridge, "up")
	return l
}

func (l *netLab) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// hostIP is this machine's address on the lab's network (PostgreSQL and
// the webhook receiver listen there).
func (l *netLab) hostIP() string { return l.prefix + ".1" }

// machine makes machine n (1 to 9): its namespace, its link, and the
// address prefix.(10+n).
func (l *netLab) machine(n int) *labMachine {
	l.t.Helper()
	m := &labMachine{lab: l, n: n, ip: fmt.Sprintf("%s.%d", l.prefix, 10+n)}
	m.up()
	return m
}

// up makes the machine's namespace and link (again, after die).
func (m *labMachine) up() {
	l := m.lab
	l.t.Helper()
	m.gen++
	m.name = fmt.Sprintf("akk%s-%d-%d", l.id, m.n, m.gen)
	m.link = fmt.Sprintf("akv%s%d%d", l.id, m.n, m.gen)
	peer := fmt.Sprintf("akp%s%d%d", l.id, m.n, m.gen)
	name := m.name
	l.t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	l.ip("netns", "add", m.name)
	l.ip("link", "add", m.link, "type", "veth", "peer", "name", peer)
	l.ip("link", "set", peer, "netns", m.name)
	l.ip("link", "set", m.link, "master", l.bridge, "up")
	l.ip("-n", m.name, "addr", "add", m.ip+"/24", "dev", peer)
	l.ip("-n", m.name, "link", "set", peer, "up")
	l.ip("-n", m.name, "link", "set", "lo", "up")
}

// cut takes the machine off the network: nothing it sends arrives,
// nothing reaches it, and no connection of its is closed (its peers hear
// nothing at all).
func (m *labMachine) cut() { m.lab.t.Helper(); m.lab.ip("link", "set", m.link, "down") }

// heal puts it back.
func (m *labMachine) heal() { m.lab.t.Helper(); m.lab.ip("link", "set", m.link, "up") }

// die removes the machine at once, its connections with it, sending
// nothing (cut it first: its peers then never hear of their end).
func (m *labMachine) die() { m.lab.t.Helper(); m.lab.ip("netns", "del", m.name) }

// command runs name on the machine.
func (m *labMachine) command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", m.name, name}, args...)...)
}
