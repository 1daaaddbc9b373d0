package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nodeTools finds the Node tools installed by scripts/install-node-tools.sh.
// Tests that need them skip without them, unless AKK_REQUIRE_TOOLS=1.
func nodeTools(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (make check): no Node tools")
	}
	dir := os.Getenv("AKK_NODE_TOOLS_DIR")
	if dir == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			cache = filepath.Join(os.Getenv("HOME"), ".cache")
		}
		dir = filepath.Join(cache, "akk", "node-tools")
	}
	_, err := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks"))
	_, nodeErr := exec.LookPath("node")
	if err != nil || nodeErr != nil {
		msg := "node tools not installed (run scripts/install-node-tools.sh): " + dir
		if os.Getenv("AKK_REQUIRE_TOOLS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

func TestSignaturesVerifyWithStandardWebhooksPackage(t *testing.T) {
	tools := nodeTools(t)
	rec := newReceiver(t, "")
	rec.failNext = 1
	d := startDaemon(t, t.TempDir(), map[string]string{"AKK_WEBHOOK_RETRY_SCHEDULE": "100ms"})
	defer d.stop()
	var h hostCreds
	call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"n","webhook_url":"http://`+rec.addr+`/h"}`, &h)
	call(t, "POST", d.url+"/v1/hosts/"+h.HostID+"/ping", d.token, "", nil)
	got := rec.wait(t, 2) // one refused, one retried

	type wire struct {
		ID        string `json:"id"`
		Timestamp string `json:"timestamp"`
		Signature string `json:"signature"`
		Body      string `json:"body"`
	}
	in := struct {
		Secret     string `json:"secret"`
		Deliveries []wire `json:"deliveries"`
	}{Secret: h.WebhookSecret}
	for _, g := range got {
		in.Deliveries = append(in.Deliveries, wire{g.id, g.timestamp, g.signature, string(g.body)})
	}
	b, _ := json.Marshal(in)
	run := func(input []byte) (string, error) {
		cmd := exec.Command("node", "testdata/verify-webhooks.cjs")
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(tools, "node_modules"))
		cmd.Stdin = bytes.NewReader(input)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(b); err != nil || !strings.Contains(out, "verified 2") {
		t.Fatalf("standardwebhooks rejected our signatures: %v\n%s", err, out)
	}
	// The check can fail: a tampered body must not verify.
	in.Deliveries[0].Body = strings.Replace(in.Deliveries[0].Body, "ping", "pong", 1)
	b, _ = json.Marshal(in)
	if out, err := run(b); err == nil {
		t.Fatalf("tampered body verified: %s", out)
	}
}
