package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
	"akk/terminaldrivers/screen"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// daemonBinary builds akkd once per test run.
func daemonBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "akkd-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "akkd")
		out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build akkd: %v", buildErr)
	}
	return builtBin
}

// proc is an akkd process that a test can kill -9 and start again.
type proc struct {
	t        testing.TB
	bin, dir string
	env      []string
	bare     bool // the environment is env alone, as under `env -i`
	// machine, when set, is the lab machine the daemon runs on (its own
	// network namespace), listening on its address; startWait bounds how
	// long a start may take (20 s when 0).
	machine   *labMachine
	startWait time.Duration
	url       string
	cmd       *exec.Cmd
	done      chan error
}

func startProc(t testing.TB, dir string, env ...string) *proc {
	p := &proc{t: t, bin: daemonBinary(t), dir: dir, env: env}
	p.start()
	t.Cleanup(func() { p.kill() })
	return p
}

// ownServerOnly is env with AKK_TMUX_DEFAULT_SOCKETS=off when it names
// the test's own tmux server (AKK_TMUX_SOCKETS): an akkd under test lists
// that server only, never the panes of tests running beside it.
func ownServerOnly(env []string) []string {
	for _, kv := range env {
		if strings.HasPrefix(kv, "AKK_TMUX_SOCKETS=") {
			return append(slices.Clone(env), "AKK_TMUX_DEFAULT_SOCKETS=off")
		}
	}
	return env
}

func (p *proc) start() {
	p.t.Helper()
	for attempt := 1; ; attempt++ {
		addr := freeAddr(p.t)
		p.cmd = exec.Command(p.bin, "--listen", addr, "--state-dir", p.dir, "--log-level", testLogLevel())
		if p.machine != nil {
			// A machine of its own: its own ports, the address the others
			// reach it at.
			addr = p.machine.ip + ":7788"
			p.cmd = p.machine.command(p.bin, "--listen", addr, "--advertise-url", "http://"+addr,
				"--state-dir", p.dir, "--log-level", testLogLevel())
		}
		if slices.ContainsFunc(p.env, func(kv string) bool { return strings.HasPrefix(kv, "AKK_NODE=") }) &&
			!slices.ContainsFunc(p.env, func(kv string) bool { return strings.HasPrefix(kv, "AKK_ADVERTISE_URL=") }) {
			// The nodes of a test's fleet run on this machine: their
			// loopback URLs are meant, and said so.
			p.cmd.Args = append(p.cmd.Args, "--advertise-url", "http://"+addr)
		}
		p.cmd.Env = append(os.Environ(), ownServerOnly(p.env)...)
		if p.bare {
			p.cmd.Env = ownServerOnly(p.env)
		}
		p.cmd.Env = append(p.cmd.Env, agenttest.TestNameEnv+"=/"+p.t.Name())
		var out lockedBuffer
		p.cmd.Stdout, p.cmd.Stderr = os.Stderr, io.MultiWriter(os.Stderr, &out)
		if err := p.cmd.Start(); err != nil {
			p.t.Fatal(err)
		}
		p.done = make(chan error, 1)
		go func(c *exec.Cmd, done chan error) { done <- c.Wait() }(p.cmd, p.done)
		p.url = "http://" + addr
		err := healthyOrExitedWithin(p.t, p.url, p.done, p.startWait)
		if err == nil {
			return
		}
		p.cmd = nil // exited
		if attempt < 5 && portTaken(err, out.String()) {
			continue
		}
		p.t.Fatalf("daemon exited: %v", err)
	}
}

// lockedBuffer is a bytes.Buffer safe for a process's output and a reader.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (p *proc) kill() {
	if p.cmd != nil && p.cmd.ProcessState == nil {
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		p.cmd = nil
	}
}

func (p *proc) token() string {
	b, err := os.ReadFile(filepath.Join(p.dir, "operator.token"))
	if err != nil {
		p.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

type webhook struct {
	Type string         `json:"type"`
	Data map[string]any `json:"data"`
}

// forTurn decodes the deliveries about one Turn (or Watch), one entry per webhook-id.
func (r *receiver) forTurn(t testing.TB, turnID string) (types []string, byID map[string]webhook) {
	byID = map[string]webhook{}
	for _, d := range r.deliveries() {
		var w webhook
		json.Unmarshal(d.body, &w)
		if w.Data["turn_id"] != turnID && w.Data["watch_id"] != turnID {
			continue
		}
		if _, seen := byID[d.id]; !seen {
			types = append(types, w.Type)
		}
		byID[d.id] = w
	}
	return types, byID
}

// count is how many distinct webhooks of type typ arrived about turnID.
func (r *receiver) count(t testing.TB, turnID, typ string) int {
	types, _ := r.forTurn(t, turnID)
	n := 0
	for _, x := range types {
		if x == typ {
			n++
		}
	}
	return n
}

func (r *receiver) waitTurn(t testing.TB, turnID, typ string, timeout time.Duration) webhook {
	t.Helper()
	timeout = agenttest.Patient(timeout)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		_, byID := r.forTurn(t, turnID)
		for _, w := range byID {
			if w.Type == typ {
				return w
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	types, byID := r.forTurn(t, turnID)
	var data []string
	for _, w := range byID {
		data = append(data, fmt.Sprintf("%s %v", w.Type, w.Data))
	}
	t.Fatalf("no %s webhook for %s within %s; got %v: %s", typ, turnID, timeout, types, strings.Join(data, "; "))
	return webhook{}
}

type sendAnswer struct {
	TurnID       string   `json:"turn_id"`
	WatchID      string   `json:"watch_id"`
	DeliveryPath string   `json:"delivery_path"`
	Warnings     []string `json:"warnings"`
	SessionID    string   `json:"session_id"`
	State        string   `json:"state"`
	Outcome      string   `json:"outcome"`
	DoNotRetry   bool     `json:"do_not_retry"`
	Code         string   `json:"code"`
}

// userRequests counts the model calls that carried this user text.
func userRequests(m *fakemodel.Server, text string) int {
	n := 0
	for _, r := range m.Requests() {
		if !r.Aux && strings.TrimSpace(r.UserText) == strings.TrimSpace(text) && len(r.ToolResults) == 0 {
			n++
		}
	}
	return n
}

// TestE2ETurns drives a real agent of every pinned version through the REST
// API: send to completion with a signed webhook, idempotent resend, a refused
// slash command, a busy pane, another host, kill -9 of the daemon mid-Turn,
// and a cancel.
func TestE2ETurns(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	agents := agenttest.RequireAgents(t)
	daemonBinary(t)
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			l := useWorld(t, a, worldSpec{}) // its world's own fake model: request counts are this pane's
			e, model, rec, d, host, other := l.e, l.model, l.rec, l.d, l.host, l.other

			// The row advertises send with its terminal id.
			row := findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, func(c conversationRow) bool { return hasSend(c) })
			term := row.Terminal.TerminalID

			// 1. A plain task completes; the webhook carries the final message and verifies.
			text := "Say hello for " + a.Name()
			body := `{"terminal_id":"` + term + `","request":"` + text + `","message_id":"m-1"}`
			var s sendAnswer
			if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, body, "chat-1", &s); code != 202 || s.Outcome != "done" {
				t.Fatalf("send: %d %+v", code, s)
			}
			done := rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
			if got, want := done.Data["final_message"], fakemodel.DefaultReply(text); got != want {
				t.Fatalf("final message %q, want %q", got, want)
			}
			if done.Data["conversation"] != "chat-1" || done.Data["session_id"] != s.SessionID || done.Data["terminal_id"] != term {
				t.Fatalf("completed data %+v", done.Data)
			}
			for _, dl := range rec.deliveries() {
				verify(t, host.WebhookSecret, dl)
			}
			if types, _ := rec.forTurn(t, s.TurnID); strings.Join(types, ",") != "turn.accepted,turn.completed" {
				t.Fatalf("webhooks %v", types)
			}

			// 1b. Secrets in the agent's answer never cross the API. (The
			// completion record may come before the screen is idle again:
			// Codex 0.158 and 0.159 draw their idle composer a moment later.)
			findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend)
			var sec sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"[[akk:secret]] show the keys"}`, &sec); code != 202 {
				t.Fatalf("secret send: %d %+v", code, sec)
			}
			secDone := rec.waitTurn(t, sec.TurnID, "turn.completed", 90*time.Second)
			var secStatus struct {
				Progress struct {
					LatestText string `json:"latest_text"`
				} `json:"progress"`
			}
			call(t, "GET", d.url+"/v1/turns/"+sec.TurnID, host.Token, "", &secStatus)
			for _, leak := range []string{fakemodel.SecretAnthropicKey, fakemodel.SecretAWSKey} {
				if fm, _ := secDone.Data["final_message"].(string); strings.Contains(fm, leak) || fm == "" || strings.Contains(secStatus.Progress.LatestText, leak) {
					t.Fatalf("a secret crossed the API: %q / %q", fm, secStatus.Progress.LatestText)
				}
			}
			findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend)

			// 1c. The pane's screen as the agent shows it: the reply, its
			// secrets redacted (also where a key wraps across rows).
			var scr struct {
				TerminalID string    `json:"terminal_id"`
				Text       string    `json:"text"`
				Columns    int       `json:"columns"`
				Lines      int       `json:"lines"`
				ReadAt     time.Time `json:"read_at"`
				Styles     [][]struct {
					From int    `json:"from"`
					To   int    `json:"to"`
					FG   string `json:"fg"`
				} `json:"styles"`
			}
			if code := call(t, "GET", d.url+"/v1/terminals/"+term+"/screen", host.Token, "", &scr); code != 200 || scr.TerminalID != term ||
				scr.Columns < 40 || scr.Lines < 10 || time.Since(scr.ReadAt) > time.Minute || len(strings.Split(scr.Text, "\n")) > scr.Lines {
				t.Fatalf("screen: %d %+v", code, scr)
			}
			if !strings.Contains(scr.Text, "Here are the credentials") || !strings.Contains(scr.Text, screen.Redacted) ||
				strings.Contains(scr.Text, "AKKFAKEKEY") || strings.Contains(scr.Text, "AKIAAKKFAKE") || strings.Contains(scr.Text, "\x1b") {
				t.Fatalf("the screen after a secret reply:\n%s", scr.Text)
			}
			// The agent's colours ride along, per row; a row redaction changed
			// carries none (no run outlines what it hid).
			rows, coloured := strings.Split(scr.Text, "\n"), 0
			if len(scr.Styles) != len(rows) {
				t.Fatalf("%d rows of styles for %d rows", len(scr.Styles), len(rows))
			}
			for i, row := range rows {
				n := len([]rune(row))
				for _, sp := range scr.Styles[i] {
					if sp.From < 0 || sp.To > n || sp.From >= sp.To {
						t.Fatalf("row %d (%d characters) has the run %+v", i, n, sp)
					}
					if sp.FG != "" {
						coloured++
					}
				}
				if strings.Contains(row, screen.Redacted) && len(scr.Styles[i]) > 0 {
					t.Fatalf("a redacted row keeps its colours: %q %+v", row, scr.Styles[i])
				}
			}
			if coloured == 0 {
				t.Fatalf("no coloured run on the screen:\n%s", scr.Text)
			}
			// A secret a person types into the composer never leaves the pane.
			const typed = "typed-by-hand "
			if _, err := e.Tmux("send-keys", "-t", e.Target(), "-l", typed+fakemodel.SecretAWSKey); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(agenttest.Patient(20 * time.Second)); ; time.Sleep(200 * time.Millisecond) {
				if code := call(t, "GET", d.url+"/v1/terminals/"+term+"/screen", host.Token, "", &scr); code != 200 {
					t.Fatalf("screen with a draft: %d", code)
				}
				if strings.Contains(scr.Text, "AKIAAKKFAKE") {
					t.Fatalf("a typed secret left the pane:\n%s", scr.Text)
				}
				if strings.Contains(scr.Text, typed+screen.Redacted) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the typed draft never showed, redacted:\n%s", scr.Text)
				}
			}
			// Erased key by key (no agent binds Backspace to anything else).
			if _, err := e.Tmux("send-keys", "-t", e.Target(), "-N", fmt.Sprint(len(typed+fakemodel.SecretAWSKey)+4), "BSpace"); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(agenttest.Patient(20 * time.Second)); ; time.Sleep(200 * time.Millisecond) {
				call(t, "GET", d.url+"/v1/terminals/"+term+"/screen", host.Token, "", &scr)
				if !strings.Contains(scr.Text, "typed-by-hand") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the draft was not erased:\n%s", scr.Text)
				}
			}
			findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend)
			var prob struct {
				Code string `json:"code"`
			}
			if code := call(t, "GET", d.url+"/v1/terminals/term_AKKnone0000/screen", host.Token, "", &prob); code != 404 || prob.Code != "terminal_not_found" {
				t.Fatalf("the screen of no pane: %d %+v", code, prob)
			}
			if code := call(t, "GET", d.url+"/v1/terminals/bad%20id/screen", host.Token, "", &prob); code != 400 {
				t.Fatalf("the screen of a malformed id: %d %+v", code, prob)
			}

			// 1d. What a Turn changed: two files, from the agent's record.
			checkTurnChanges(t, e, d.url, map[string]string{"terminal_id": term}, host, other)
			findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend)

			// 2. The same message_id returns the same Turn and sends nothing.
			var again sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, body, &again); code != 200 || again.TurnID != s.TurnID {
				t.Fatalf("resend: %d %+v", code, again)
			}
			if n := userRequests(model, text); n != 1 {
				t.Fatalf("the model saw the request %d times", n)
			}

			// 3. A slash command is refused with no input.
			before := len(model.Requests())
			var p sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"/compact"}`, &p); code != 422 || p.Code != "slash_command_rejected" {
				t.Fatalf("/compact: %d %+v", code, p)
			}
			findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend)
			if len(model.Requests()) != before || strings.Contains(e.Capture(), "/compact") {
				t.Fatal("a refused slash command reached the agent")
			}

			// 4. A slow task: busy pane is 409, another host sees nothing,
			// and a kill -9 of the daemon mid-Turn loses nothing and repeats nothing.
			// The screen, followed live: one event at once, then the task
			// as the pane shows it.
			follow := openSSE(t, d.url+"/v1/terminals/"+term+"/screen/events", host.Token, "")
			if ev := follow.next(t); ev.event != "terminal.screen" || !strings.Contains(ev.data, `"terminal_id":"`+term+`"`) {
				t.Fatalf("the screen stream opened with %+v", ev)
			}
			slow := "[[akk:slow secs=8]] a slow task for " + a.Name()
			var s2 sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+slow+`"}`, &s2); code != 202 {
				t.Fatalf("slow send: %d %+v", code, s2)
			}
			rec.waitTurn(t, s2.TurnID, "turn.accepted", 60*time.Second)
			follow.until(t, "a slow task for", "terminal.screen")
			follow.close()
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"another"}`, &p); code != 409 {
				t.Fatalf("send to a busy pane: %d %+v", code, p)
			}
			if code := call(t, "GET", d.url+"/v1/turns/"+s2.TurnID, other.Token, "", &p); code != 404 || p.Code != "turn_not_found" {
				t.Fatalf("another host read the turn: %d %+v", code, p)
			}
			if code := call(t, "GET", d.url+"/v1/terminals/"+term+"/screen", other.Token, "", &p); code != 409 || p.Code != "conflict_active_turn" {
				t.Fatalf("another host read the screen of a pane this host's Turn holds: %d %+v", code, p)
			}
			if code := call(t, "GET", d.url+"/v1/terminals/"+term+"/screen", host.Token, "", &scr); code != 200 || !strings.Contains(scr.Text, "a slow task for") {
				t.Fatalf("the screen of the host's own working Turn: %d\n%s", code, scr.Text)
			}
			d.kill()
			d.start()
			rec.waitTurn(t, s2.TurnID, "turn.completed", 90*time.Second)
			time.Sleep(time.Second) // a duplicate, if any, would arrive now
			types, _ := rec.forTurn(t, s2.TurnID)
			completed := 0
			for _, x := range types {
				if x == "turn.completed" {
					completed++
				}
			}
			if completed != 1 {
				t.Fatalf("turn.completed arrived under %d webhook-ids: %v", completed, types)
			}
			if n := userRequests(model, slow); n != 1 {
				t.Fatalf("the slow request reached the model %d times", n)
			}

			// 5. Cancel a slow task: cancelled, and the pane is idle and offered again.
			slow2 := "[[akk:slow secs=30]] to be cancelled for " + a.Name()
			var s3 sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+slow2+`"}`, &s3); code != 202 {
				t.Fatalf("send: %d %+v", code, s3)
			}
			rec.waitTurn(t, s3.TurnID, "turn.accepted", 60*time.Second)
			var c sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns/"+s3.TurnID+"/cancel", host.Token, "", &c); code != 200 || c.Outcome != "done" {
				t.Fatalf("cancel: %d %+v", code, c)
			}
			rec.waitTurn(t, s3.TurnID, "turn.cancelled", 60*time.Second)
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
		})
	}
}

func hasSend(c conversationRow) bool {
	for _, a := range c.AvailableActions {
		if a["action"] == "send" {
			return true
		}
	}
	return false
}

// findRow waits for this project's conversation row to satisfy ok.
func findRow(t testing.TB, url, token, project string, timeout time.Duration, ok func(conversationRow) bool) conversationRow {
	t.Helper()
	timeout = agenttest.Patient(timeout)
	deadline := time.Now().Add(timeout)
	var last conversationRow
	for {
		var list struct{ Conversations []conversationRow }
		call(t, "GET", url+"/v1/conversations", token, "", &list)
		for _, c := range list.Conversations {
			if c.Project == project && c.Transport == "terminal" { // a pane's row, not a backend thread's
				validActions(t, c.AvailableActions)
				last = c
				if ok(c) {
					return c
				}
			}
		}
		if time.Now().After(deadline) {
			screen := ""
			if e := agenttest.ByProject(project); e != nil {
				screen = "; screen:\n" + e.Screen()
			}
			t.Fatalf("row for %s never matched; last %+v%s", project, last, screen)
		}
		time.Sleep(listEvery)
	}
}

// testLogLevel is the log level of the daemons tests start: warn, or
// AKK_TEST_LOG_LEVEL (debug, to see what a failing test's daemon did).
func testLogLevel() string {
	if l := os.Getenv("AKK_TEST_LOG_LEVEL"); l != "" {
		return l
	}
	return "warn"
}
