package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkE2EAbuse (make abuse) replays what a hostile local client tried
// against a running akkd: a real daemon binary, attacked over loopback. For
// each attack it prints what the daemon answered, the daemon's peak RSS while
// it ran and the slowest /v1/health seen meanwhile (a fresh connection every
// 50 ms, as a monitoring probe makes). The targets: health under 100 ms and
// RSS under 100 MB throughout; the benchmark fails when a target or an
// expected answer is missed.
func BenchmarkE2EAbuse(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "akkd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	dir := b.TempDir()
	addr := freeAddr(b)
	cmd := exec.Command(bin, "--listen", addr, "--state-dir", dir, "--log-level", "error", "--tmux-default-sockets", "off")
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	b.Cleanup(func() { cmd.Process.Kill(); <-done })
	url := "http://" + addr
	waitHealthy(b, url, done)
	tok, _ := os.ReadFile(filepath.Join(dir, "operator.token"))
	a := &abuser{b: b, url: url, addr: addr, operator: strings.TrimSpace(string(tok)), pid: cmd.Process.Pid}
	a.host = a.newHost("attacker")

	b.ResetTimer()
	for _, at := range a.attacks() {
		a.run(at)
	}
	b.StopTimer()
	fmt.Fprintf(os.Stdout, "\n%-34s %-62s %9s %10s\n", "attack", "answer", "peak RSS", "health max")
	for _, r := range a.results {
		mark := ""
		if r.fail != "" {
			mark = "  FAIL: " + r.fail
		}
		fmt.Fprintf(os.Stdout, "%-34s %-62s %6.1f MB %7.1f ms%s\n", r.name, r.answer, float64(r.rssKB)/1024, float64(r.health.Microseconds())/1000, mark)
	}
	for _, r := range a.results {
		if r.fail != "" {
			b.Errorf("%s: %s", r.name, r.fail)
		}
	}
}

type attack struct {
	name string
	// do attacks and returns what the daemon answered, and what was wrong
	// with the answer ("" when it was the expected one).
	do func() (answer, wrong string)
}

type attackResult struct {
	name, answer, fail string
	rssKB              int
	health             time.Duration
}

type abuser struct {
	b                   *testing.B
	url, addr, operator string
	pid                 int
	host                hostCreds
	results             []attackResult
}

func (a *abuser) newHost(name string) hostCreds {
	var h hostCreds
	if code := call(a.b, "POST", a.url+"/v1/hosts", a.operator, `{"name":"`+name+`","webhook_url":"http://127.0.0.1:9/hook"}`, &h); code != 201 {
		a.b.Fatalf("create host: %d", code)
	}
	return h
}

// run runs one attack while sampling the daemon's RSS and the health route.
func (a *abuser) run(at attack) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var peak atomic.Int64
	var worst atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
		for {
			if kb := rssKB(a.pid); int64(kb) > peak.Load() {
				peak.Store(int64(kb))
			}
			start := time.Now()
			resp, err := probe.Get(a.url + "/v1/health")
			took := time.Since(start)
			if err != nil || resp.StatusCode != 200 {
				took = 30 * time.Second
			}
			if resp != nil {
				resp.Body.Close()
			}
			if int64(took) > worst.Load() {
				worst.Store(int64(took))
			}
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	answer, wrong := at.do()
	close(stop)
	wg.Wait()
	r := attackResult{name: at.name, answer: answer, fail: wrong, rssKB: int(peak.Load()), health: time.Duration(worst.Load())}
	var targets []string
	if r.fail != "" {
		targets = append(targets, r.fail)
	}
	if r.rssKB > 100*1024 {
		targets = append(targets, "RSS over 100 MB")
	}
	if r.health > 100*time.Millisecond {
		targets = append(targets, "health over 100 ms")
	}
	r.fail = strings.Join(targets, "; ")
	a.results = append(a.results, r)
}

func rssKB(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}

// req makes one request on a fresh connection and returns its status and body.
func (a *abuser) req(method, path string, hdr map[string]string, body string) (int, string) {
	r, err := http.NewRequest(method, a.url+path, strings.NewReader(body))
	if err != nil {
		a.b.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			r.Host = v
			continue
		}
		r.Header.Set(k, v)
	}
	if body != "" && r.Header.Get("Content-Type") == "" {
		r.Header.Set("Content-Type", "application/json")
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := c.Do(r)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	bb, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		return resp.StatusCode, "sid=" + sid + " " + string(bb)
	}
	return resp.StatusCode, string(bb)
}

func bearer(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}

// tally counts answers by status.
type tally map[int]int

func (t tally) String() string {
	var codes []int
	for c := range t {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", t[c], c))
	}
	return strings.Join(parts, " ")
}

func problemCode(body string) string {
	if i := strings.Index(body, `"code":"`); i >= 0 {
		rest := body[i+8:]
		if j := strings.IndexByte(rest, '"'); j >= 0 {
			return rest[:j]
		}
	}
	return ""
}

const mcpInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"abuse","version":"1"}}}`

func mcpHeaders(tok, sid string) map[string]string {
	h := bearer(tok)
	h["Accept"] = "application/json, text/event-stream"
	if sid != "" {
		h["Mcp-Session-Id"] = sid
	}
	return h
}

func (a *abuser) attacks() []attack {
	same := func(h map[string]string) map[string]string {
		h["Sec-Fetch-Site"] = "same-origin"
		return h
	}
	return []attack{
		{"nested JSON, 9000 levels, no token", func() (string, string) {
			body := strings.Repeat(`{"a":`, 9000) + "1" + strings.Repeat("}", 9000)
			start := time.Now()
			code, resp := a.req("POST", "/v1/ui/session", same(map[string]string{}), body)
			ans := fmt.Sprintf("%d %s, %d B, %s", code, problemCode(resp), len(resp), time.Since(start).Round(time.Millisecond))
			if code < 400 || code >= 500 || len(resp) > 2048 {
				return ans, "want a short 4xx problem"
			}
			return ans, ""
		}},
		{"2000 MCP initialize, one host", func() (string, string) {
			t := tally{}
			for range 2000 {
				code, _ := a.req("POST", "/mcp", mcpHeaders(a.host.Token, ""), mcpInit)
				t[code]++
			}
			return t.String(), "" // what matters is what they cost: RSS and health
		}},
		{"40 one-shot MCP clients, one host", func() (string, string) {
			h := a.newHost("oneshot")
			t := tally{}
			for range 40 {
				// A one-shot client is a process per call: not faster than
				// one call in 100 ms.
				time.Sleep(100 * time.Millisecond)
				code, resp := a.req("POST", "/mcp", mcpHeaders(h.Token, ""), mcpInit)
				sid, _, _ := strings.Cut(strings.TrimPrefix(resp, "sid="), " ")
				if code != 200 {
					t[code]++
					continue
				}
				a.req("POST", "/mcp", mcpHeaders(h.Token, sid), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
				code, _ = a.req("POST", "/mcp", mcpHeaders(h.Token, sid), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
				t[code]++
			}
			if t[200] != 40 {
				return t.String(), "a one-shot client was refused"
			}
			return t.String(), ""
		}},
		{"520 event streams, one host", func() (string, string) {
			t := tally{}
			var bodies []io.Closer
			for range 520 {
				r, _ := http.NewRequest("GET", a.url+"/v1/events", nil)
				r.Header.Set("Authorization", "Bearer "+a.host.Token)
				c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
				resp, err := c.Do(r)
				if err != nil {
					t[0]++
					continue
				}
				t[resp.StatusCode]++
				if resp.StatusCode == 200 {
					bodies = append(bodies, resp.Body)
				} else {
					resp.Body.Close()
				}
			}
			opCode, _ := a.req("GET", "/v1/events?since=0", map[string]string{"Authorization": "Bearer " + a.operator, "Accept": "application/json"}, "")
			for _, c := range bodies {
				c.Close()
			}
			ans := t.String() + fmt.Sprintf("; operator's own stream %d", opCode)
			if len(bodies) > 64 {
				return ans, "no per-host stream cap"
			}
			return ans, ""
		}},
		{"600 idle sockets, no request", func() (string, string) {
			var conns []net.Conn
			for range 600 {
				c, err := net.Dial("tcp", a.addr)
				if err != nil {
					break
				}
				conns = append(conns, c)
			}
			time.Sleep(2 * time.Second) // the sockets stay idle while health is probed
			code, _ := a.req("GET", "/v1/health", nil, "")
			for _, c := range conns {
				c.Close()
			}
			return fmt.Sprintf("%d sockets open; health %d", len(conns), code), ""
		}},
		{"revoke: rotate token, delete host", func() (string, string) {
			h := a.newHost("revoked")
			ended := func(revoke func()) time.Duration {
				r, _ := http.NewRequest("GET", a.url+"/v1/events", nil)
				r.Header.Set("Authorization", "Bearer "+h.Token)
				resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(r)
				if err != nil || resp.StatusCode != 200 {
					return -1
				}
				lines := make(chan struct{})
				go func() {
					sc := bufio.NewScanner(resp.Body)
					for sc.Scan() {
					}
					close(lines)
				}()
				start := time.Now()
				revoke()
				select {
				case <-lines:
					return time.Since(start)
				case <-time.After(10 * time.Second):
					resp.Body.Close()
					return 10 * time.Second
				}
			}
			rot := ended(func() {
				var nh hostCreds
				call(a.b, "POST", a.url+"/v1/hosts/"+h.HostID+"/rotate-token", a.operator, "", &nh)
				h.Token = nh.Token
			})
			del := ended(func() { call(a.b, "DELETE", a.url+"/v1/hosts/"+h.HostID, a.operator, "", nil) })
			ans := fmt.Sprintf("stream ended %s after rotation, %s after deletion", rot.Round(time.Millisecond), del.Round(time.Millisecond))
			if rot < 0 || rot >= 10*time.Second || del < 0 || del >= 10*time.Second {
				return ans, "a revoked principal's stream stayed open"
			}
			return ans, ""
		}},
		{"1000 dashboard sign-ins, one host", func() (string, string) {
			code, _, cookie := a.signIn(a.operator)
			if code != 201 {
				return fmt.Sprintf("operator sign-in %d", code), "operator cannot sign in"
			}
			t := tally{}
			for range 1000 {
				c, _, _ := a.signIn(a.host.Token)
				t[c]++
			}
			code, _ = a.req("GET", "/v1/conversations", same(map[string]string{"Cookie": cookie}), "")
			ans := t.String() + fmt.Sprintf("; operator's cookie then %d", code)
			if code != 200 {
				return ans, "the operator's session was evicted"
			}
			return ans, ""
		}},
		{"sign-in with a foreign Host", func() (string, string) {
			_, port, _ := net.SplitHostPort(a.addr)
			code, resp := a.req("POST", "/v1/ui/session", map[string]string{"Host": "evil.example:" + port, "Origin": "http://evil.example:" + port},
				`{"token":"`+a.operator+`"}`)
			ans := fmt.Sprintf("%d %s", code, problemCode(resp))
			if code < 400 {
				return ans, "a foreign Host was served"
			}
			return ans, ""
		}},
		{"MCP with a foreign Origin", func() (string, string) {
			h := mcpHeaders(a.operator, "")
			h["Origin"] = "http://evil.example"
			code, resp := a.req("POST", "/mcp", h, mcpInit)
			ans := fmt.Sprintf("%d %s", code, problemCode(resp))
			if code < 400 {
				return ans, "a foreign Origin was served"
			}
			return ans, ""
		}},
		{"metrics without a token", func() (string, string) {
			code, _ := a.req("GET", "/metrics", nil, "")
			return fmt.Sprintf("%d (public unless --metrics-token)", code), ""
		}},
	}
}

// signIn exchanges a token for a dashboard cookie as the dashboard's own page.
func (a *abuser) signIn(token string) (int, string, string) {
	r, _ := http.NewRequest("POST", a.url+"/v1/ui/session", strings.NewReader(`{"token":"`+token+`"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(r)
	if err != nil {
		return 0, err.Error(), ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var cookie string
	for _, c := range resp.Cookies() {
		if c.Name == "akk_session" {
			cookie = c.Name + "=" + c.Value
		}
	}
	return resp.StatusCode, string(b), cookie
}
