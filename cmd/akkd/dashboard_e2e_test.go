package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// TestE2EDashboard drives the dashboard in real headless Chromium
// (web/test/dashboard.mjs, with playwright-core) against a real akkd and
// the newest pinned Claude Code (two panes) and Codex in their panes, a Codex pane
// merged with its thread, and a Codex project's backend conversation with
// no pane: sign in; the "Needs you" queue (two prompts and a question from
// three panes, one notification each raised while another view shows, the
// title's count, a prompt approved from the queue that runs once, a prompt
// changed under a second page refused, a Turn waiting for words closed, the
// question answered); the overview filtered and sorted; the service worker
// caching no API answer; an update of 100 stand-in rows timed in the page;
// the cards, a task
// live from working to idle (in a pane, and through the backend), a prompt approved and one
// rejected, a changed prompt refused, a single-choice step, an async
// question answered with typed text queued for the next task, and a
// two-question questionnaire, the pane's threads, a Turn's page, a host registered and pinged,
// the doctor, sign-out, and a host session that sees no other controller's
// Turn; axe-core on every view and each view at 390 px. Screenshots go to
// $AKK_ARTIFACTS (default: a temporary directory). Then the CSRF proof and
// the routes' auth are checked from outside the browser.
func TestE2EDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("-short (make check): no browser")
	}
	modules := filepath.Join(nodeToolsDir(), "node_modules")
	chromium := os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	_, errC := os.Stat(chromium)
	_, errP := os.Stat(filepath.Join(modules, "playwright-core"))
	if errC != nil || errP != nil {
		if os.Getenv("AKK_REQUIRE_TOOLS") == "1" {
			t.Fatalf("the browser test needs %s and playwright-core in %s (make node-tools)", chromium, modules)
		}
		t.Skipf("the browser test needs %s and playwright-core (make node-tools)", chromium)
	}
	agents := newestOfEachKind(agenttest.RequireAgents(t))
	daemonBinary(t)
	var envs []*agenttest.Env
	var sockets []string
	projects := map[string]string{}
	var codexEnv *agenttest.Env
	for _, a := range agents {
		// Codex is offered the async question tool (its model catalog).
		e := agenttest.New(t, a, agenttest.Options{AsyncQuestions: a.Kind == agenttest.KindCodex})
		if a.Kind == agenttest.KindCodex {
			codexEnv = e
		}
		e.StartReady()
		if a.Kind == agenttest.KindCodex {
			e.PlanMode() // Codex asks questions in Plan mode only
		}
		envs = append(envs, e)
		sockets = append(sockets, e.SocketPath())
		projects[a.Kind] = e.ProjectDir
	}
	// A second Claude Code pane: two panes with permission prompts waiting
	// at once, and a question in a third, fill the "Needs you" queue.
	var claude2 *agenttest.Env
	for _, a := range agents {
		if a.Kind == agenttest.KindClaude {
			claude2 = agenttest.New(t, a, agenttest.Options{})
			claude2.StartReady()
			envs = append(envs, claude2)
			sockets = append(sockets, claude2.SocketPath())
		}
	}
	// A Claude Code pane at its start-up dialog (an untrusted folder),
	// started after the main run: the queue names what the dialog asks;
	// nobody answers it.
	var dialog *agenttest.Env
	for _, a := range agents {
		if a.Kind == agenttest.KindClaude {
			dialog = agenttest.New(t, a, agenttest.Options{Untrusted: true})
			sockets = append(sockets, dialog.SocketPath())
		}
	}
	// A Codex pane that names its thread in the pane title: one card with
	// its thread (merged).
	mx := agenttest.New(t, codexEnv.Agent, agenttest.Options{ThreadTitle: true})
	mx.StartReady()
	sockets = append(sockets, mx.SocketPath())
	// A project with a backend conversation and no pane: the newest
	// Codex's daemon of its own home, which akkd starts (--codex-projects).
	bx := agenttest.New(t, codexEnv.Agent, agenttest.Options{})
	rec := newReceiver(t, "")
	d := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+strings.Join(sockets, ":"),
		"AKK_CODEX_HOMES="+bx.CodexHome, "AKK_CODEX_PROJECTS="+bx.ProjectDir,
		"AKK_CODEX_BIN="+filepath.Join(bx.Agent.Dir, "node_modules", ".bin", "codex"),
		agenttest.FakeOpenAIKeyEnv+"="+bx.APIKey(), "TMPDIR="+filepath.Join(bx.Home, "tmp"))
	op := d.token()
	var b hostCreds
	call(t, "POST", d.url+"/v1/hosts", op, `{"name":"b","webhook_url":"http://`+rec.addr+`/b"}`, &b)
	for _, e := range envs {
		findRow(t, d.url, op, e.ProjectDir, 30*time.Second, hasSend)
	}
	findBackendRow(t, d.url, op, bx.ProjectDir, 60*time.Second, backendSend)
	rowsOf(t, d.url, op, mx.ProjectDir, "", "", func(rs []mergedRow) bool {
		return len(rs) == 1 && rs[0].Terminal != nil && rs[0].Backend != nil
	})

	// The operator's phone: its pushes reach a stand-in push service,
	// which the browser test reads to hand them to the page's service
	// worker (headless Chromium has no push service of its own).
	ps := NewPushService(t)
	phone, _ := NewPushClient()
	sub, _ := json.Marshal(map[string]any{"endpoint": ps.Register("phone", phone), "keys": map[string]string{"p256dh": phone.P256dh(), "auth": phone.AuthSecret()}})
	if code := call(t, "POST", d.url+"/v1/ui/push/subscriptions", op, string(sub), nil); code != 201 {
		t.Fatalf("subscribe the phone: %d", code)
	}

	artifacts := os.Getenv("AKK_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	root, _ := agenttest.ModuleRoot()
	cmd := exec.Command("node", filepath.Join(root, "web", "test", "dashboard.mjs"))
	cmd.Env = append(os.Environ(), "AKK_URL="+d.url, "AKK_OPERATOR_TOKEN="+op, "AKK_HOST_B_TOKEN="+b.Token,
		"AKK_CLAUDE_PROJECT="+projects[agenttest.KindClaude], "AKK_CODEX_PROJECT="+projects[agenttest.KindCodex], "AKK_BACKEND_PROJECT="+bx.ProjectDir, "AKK_MERGED_PROJECT="+mx.ProjectDir,
		"AKK_CLAUDE2_PROJECT="+claude2.ProjectDir, "AKK_DIALOG_PROJECT="+dialog.ProjectDir,
		"AKK_RECEIVER_URL=http://"+rec.addr+"/ui", "AKK_PUSHES_URL="+ps.URL+"/_pushes", "AKK_ARTIFACTS="+artifacts, "AKK_NODE_MODULES="+modules, "CHROMIUM="+chromium)
	out, err := cmd.CombinedOutput()
	t.Logf("browser test (screenshots in %s):\n%s", artifacts, out)
	if err != nil {
		for _, e := range envs {
			t.Logf("pane %s:\n%s", e.ProjectDir, e.Capture())
		}
		dumpTurns(t, d, op)
		t.Fatalf("the browser test failed: %v; its last words:\n%s", err, lastLines(out, 6))
	}
	// The start-up dialog, named in the queue.
	dialog.Start()
	dcmd := exec.Command("node", filepath.Join(root, "web", "test", "dashboard.mjs"), "dialog")
	dcmd.Env = cmd.Env
	out, err = dcmd.CombinedOutput()
	t.Logf("browser test, the start-up dialog:\n%s", out)
	if err != nil {
		t.Logf("pane %s:\n%s", dialog.ProjectDir, dialog.Capture())
		t.Fatalf("the browser test failed: %v", err)
	}
	if strings.Contains(dialog.Capture(), "Yes, I trust this folder") == false {
		t.Fatalf("the dialog was answered:\n%s", dialog.Capture())
	}
	// The command approved from the queue ran once.
	if b, err := os.ReadFile(filepath.Join(projects[agenttest.KindClaude], "akk-queue-once")); err != nil || string(b) != "ran\n" {
		t.Fatalf("the command approved from the queue: %q, %v", b, err)
	}
	// The merged card's task ran once, in the thread the pane shows.
	mx.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken("a task for the merged card"))
	if n := userRequests(mx.Model, "a task for the merged card"); n != 1 {
		t.Fatalf("the merged card's task reached the model %d times", n)
	}
	// The answer queued in the browser reached the model as the agent's next task.
	codexEnv.WaitModelRequest("the queued async answer", 60*time.Second, func(r fakemodel.Request) bool {
		return !r.Aux && strings.Contains(r.UserText, "Teal from the dashboard")
	})

	// Outside the browser: a cookie session's mutation needs the
	// same-origin proof; the session routes need a cookie.
	cookie := uiSignIn(t, d.url, op)
	for _, c := range []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"no origin proof", nil, 403},
		{"another origin", map[string]string{"Origin": "http://evil.example"}, 403},
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same origin", map[string]string{"Origin": d.url}, 422},
	} {
		req, _ := http.NewRequest("POST", d.url+"/v1/turns", strings.NewReader(`{"terminal_id":"term_x","request":"/clear"}`))
		req.Header.Set("Content-Type", "application/json")
		req.AddCookie(cookie)
		for k, v := range c.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	for _, m := range []string{"GET", "DELETE"} {
		req, _ := http.NewRequest(m, d.url+"/v1/ui/session", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("%s /v1/ui/session without a cookie: %d", m, resp.StatusCode)
		}
	}
}

func nodeToolsDir() string {
	if d := os.Getenv("AKK_NODE_TOOLS_DIR"); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		cache = filepath.Join(os.Getenv("HOME"), ".cache")
	}
	return filepath.Join(cache, "akk", "node-tools")
}

// uiSignIn signs in as the dashboard does and returns the session cookie.
func uiSignIn(t *testing.T, url, token string) *http.Cookie {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/ui/session", strings.NewReader(`{"token":"`+token+`"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", url)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "akk_session" {
			return c
		}
	}
	t.Fatalf("sign-in: %d and no cookie", resp.StatusCode)
	return nil
}

// dumpTurns logs what AKK holds about every pane's latest Turn: its
// status, its events and its interaction, for a failure's reader.
func dumpTurns(t *testing.T, d *proc, op string) {
	url := d.url
	client := &http.Client{Timeout: 20 * time.Second}
	get := func(path string, out any) bool {
		req, _ := http.NewRequest("GET", url+path, nil)
		req.Header.Set("Authorization", "Bearer "+op)
		resp, err := client.Do(req)
		if err != nil {
			// A daemon that does not answer: its goroutines say where it hangs.
			t.Logf("GET %s: %v; stopping akkd with SIGQUIT for its stacks", path, err)
			d.cmd.Process.Signal(syscall.SIGQUIT)
			<-d.done
			d.cmd = nil
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		t.Logf("GET %s: %d\n%s", path, resp.StatusCode, b)
		if out != nil {
			json.Unmarshal(b, out)
		}
		return true
	}
	var list struct {
		Conversations []struct {
			Project string `json:"project"`
			Managed *struct {
				Current *struct {
					TurnID string `json:"turn_id"`
				} `json:"current_turn"`
				Recent *struct {
					TurnID string `json:"turn_id"`
				} `json:"recent_turn"`
			} `json:"managed"`
		} `json:"conversations"`
	}
	if !get("/v1/conversations", &list) {
		return
	}
	for _, c := range list.Conversations {
		if c.Managed == nil {
			continue
		}
		id := ""
		if c.Managed.Current != nil {
			id = c.Managed.Current.TurnID
		} else if c.Managed.Recent != nil {
			id = c.Managed.Recent.TurnID
		}
		if id == "" {
			continue
		}
		for _, path := range []string{"", "/events", "/interaction"} {
			if !get("/v1/turns/"+id+path, nil) {
				return
			}
		}
	}
}

// lastLines is the last n lines of out: a failure's own words, repeated
// after the long dumps that precede it.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
