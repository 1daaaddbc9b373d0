package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// hostGet is a GET of url with its Host header set to host.
func hostGet(t *testing.T, url, host string) int {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The daemon serves the loopback names, its listen address's host and the
// --allowed-hosts names; any other Host is refused. "*" turns the check off.
func TestDaemonServesOnlyItsHosts(t *testing.T) {
	d := startDaemon(t, t.TempDir(), map[string]string{"AKK_ALLOWED_HOSTS": "akk.example.net, Other.Example:8443"})
	defer d.stop()
	port := d.url[strings.LastIndex(d.url, ":"):]
	for host, want := range map[string]int{
		"127.0.0.1" + port: 200, "localhost" + port: 200, "[::1]" + port: 200,
		"akk.example.net": 200, "other.example" + port: 200,
		"evil.example" + port: 403, "evil.example": 403,
	} {
		if got := hostGet(t, d.url+"/v1/health", host); got != want {
			t.Errorf("Host %s: %d, want %d", host, got, want)
		}
	}
	any := startDaemon(t, t.TempDir(), map[string]string{"AKK_ALLOWED_HOSTS": "*"})
	defer any.stop()
	if got := hostGet(t, any.url+"/v1/health", "evil.example"); got != 200 {
		t.Errorf("with *: %d", got)
	}
}

func TestAllowedHostsFlag(t *testing.T) {
	bare := func(k string) string { return map[string]string{"AKK_STATE_DIR": "/tmp/akk-state"}[k] }
	cfg, err := parseConfig([]string{"akkd", "--allowed-hosts", "a.example,b.example:80, [::2]:9"}, bare, io.Discard)
	if err != nil || strings.Join(cfg.allowedHosts, " ") != "a.example b.example:80 [::2]:9" {
		t.Fatalf("%v %q", err, cfg.allowedHosts)
	}
	for _, bad := range []string{"http://a.example", "a.example/x", "a b"} {
		if _, err := parseConfig([]string{"akkd", "--allowed-hosts", bad}, bare, io.Discard); err == nil || !strings.Contains(err.Error(), "--allowed-hosts") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// AKK_METRICS_TOKEN puts /metrics behind that bearer token.
func TestDaemonMetricsToken(t *testing.T) {
	d := startDaemon(t, t.TempDir(), map[string]string{"AKK_METRICS_TOKEN": "m-secret"})
	defer d.stop()
	for auth, want := range map[string]int{"": 401, "Bearer " + d.token: 401, "Bearer m-secret": 200} {
		req, _ := http.NewRequest("GET", d.url+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Authorization %q: %d, want %d", auth, resp.StatusCode, want)
		}
	}
}

// A listen address other than loopback gets one warning at start.
func TestWarnsWhenListeningBeyondLoopback(t *testing.T) {
	for listen, want := range map[string]int{
		"127.0.0.1:7788": 0, "localhost:7788": 0, "[::1]:7788": 0, "127.0.0.2:7788": 0,
		"0.0.0.0:7788": 1, ":7788": 1, "[::]:7788": 1, "192.168.1.5:7788": 1, "akk.example.net:7788": 1,
	} {
		var buf strings.Builder
		warnIfExposed(slog.New(slog.NewTextHandler(&buf, nil)), listen)
		if got := strings.Count(buf.String(), "level=WARN"); got != want || (want == 1 && !strings.Contains(buf.String(), "TLS")) {
			t.Errorf("%s: %d warnings, want %d: %s", listen, got, want, buf.String())
		}
	}
}
