package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKill9RestartKeepsState kills a real akkd process with SIGKILL while a
// webhook is pending and checks that a restart keeps hosts, tokens, events and
// the pending delivery, which then arrives with its original webhook-id.
func TestKill9RestartKeepsState(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemon binary")
	}
	bin := daemonBinary(t)
	dir := t.TempDir()
	hookAddr := freeAddr(t) // nothing listens here until after the crash
	start := func() (*exec.Cmd, string) {
		addr := freeAddr(t)
		cmd := exec.Command(bin, "--listen", addr, "--state-dir", dir)
		cmd.Env = append(os.Environ(), "AKK_WEBHOOK_RETRY_SCHEDULE=200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms,200ms")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { cmd.Process.Kill(); <-done })
		waitHealthy(t, "http://"+addr, done)
		return cmd, "http://" + addr
	}

	cmd, url := start()
	b, _ := os.ReadFile(filepath.Join(dir, "operator.token"))
	token := strings.TrimSpace(string(b))
	var h hostCreds
	if code := call(t, "POST", url+"/v1/hosts", token, `{"name":"a","webhook_url":"http://`+hookAddr+`/hook"}`, &h); code != 201 {
		t.Fatalf("create: %d", code)
	}
	var n struct {
		NotificationID string `json:"notification_id"`
	}
	call(t, "POST", url+"/v1/hosts/"+h.HostID+"/ping", token, "", &n)
	time.Sleep(300 * time.Millisecond) // let it fail at least once
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	rec := newReceiver(t, hookAddr)
	_, url = start()
	got := rec.wait(t, 1)
	if got[0].id != n.NotificationID {
		t.Fatalf("webhook-id after restart %q, want %q", got[0].id, n.NotificationID)
	}
	verify(t, h.WebhookSecret, got[0])
	if code := call(t, "GET", url+"/v1/notifications", h.Token, "", nil); code != 200 {
		t.Fatalf("host token after crash: %d", code)
	}
	evs := readSSE(t, url+"/v1/events?since=0", token, "", 2)
	if evs[0].event != "host.created" || evs[1].event != "host.ping" {
		t.Fatalf("events after crash: %+v", evs)
	}
}
