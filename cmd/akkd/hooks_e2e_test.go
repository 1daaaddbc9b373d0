package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

var (
	akkOnce  sync.Once
	akkBin   string
	akkBuild error
)

// cliBinary builds the real akk CLI once.
func cliBinary(t testing.TB) string {
	t.Helper()
	akkOnce.Do(func() {
		akkBin = filepath.Join(filepath.Dir(daemonBinary(t)), "akk")
		if out, err := exec.Command("go", "build", "-o", akkBin, "../akk").CombinedOutput(); err != nil {
			akkBuild = err
			t.Logf("%s", out)
		}
	})
	if akkBuild != nil {
		t.Fatalf("build akk: %v", akkBuild)
	}
	return akkBin
}

// akkCLI runs the real CLI against d.
func akkCLI(t testing.TB, d *daemon, args ...string) string {
	t.Helper()
	cmd := exec.Command(cliBinary(t), append([]string{"--url", d.url, "--state-dir", d.stateDir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("akk %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestE2EClaudeHook proves Claude Code's PermissionRequest hook as AKK's
// exact permission channel, on every pinned Claude Code and on releases
// AKK has no profile for: `akk hooks install` writes the hook, a prompt
// is offered through it, approve_once runs the command once and reject
// never runs it (the decision is the hook's answer, no key is typed); the
// person answering in the pane ends AKK's offer (409, nothing sent); and
// `akk hooks remove` leaves the settings file as it was, byte for byte.
func TestE2EClaudeHook(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	agents := append(agenttest.RequireAgents(t, agenttest.KindClaude), agenttest.RequireUnprofiled(t, agenttest.KindClaude)...)
	unprofiled := map[string]bool{}
	for _, a := range agenttest.RequireUnprofiled(t, agenttest.KindClaude) {
		unprofiled[a.Name()] = true
	}
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{})
			rec := newReceiver(t, "")
			d := startDaemon(t, t.TempDir(), map[string]string{"AKK_TMUX_SOCKETS": e.SocketPath()})
			stop := sync.OnceFunc(d.stop)
			defer stop()
			settings := filepath.Join(e.Home, ".claude", "settings.json")
			before, err := os.ReadFile(settings)
			if err != nil {
				t.Fatal(err)
			}
			akkCLI(t, d, "hooks", "install", "claude-code", "--settings", settings)
			if out := akkCLI(t, d, "hooks", "status", "claude-code", "--settings", settings); !strings.Contains(out, "installed: true") || !strings.Contains(out, "credential: current") {
				t.Fatalf("hooks status:\n%s", out)
			}
			e.StartReady()

			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			row := findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend)
			term := row.Terminal.TerminalID
			if unprofiled[a.Name()] && row.Terminal.Channels.Permission != "none" {
				t.Fatalf("an unprofiled release before its first hook event: channels %+v", row.Terminal.Channels)
			}
			send := func(req string) string {
				t.Helper()
				var s sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+req+`"}`, "c1", &s); code != 202 {
					t.Fatalf("send %q: %d %+v", req, code, s)
				}
				return s.TurnID
			}
			status := func(id string) approvalStatus {
				t.Helper()
				var st approvalStatus
				if code := callConv(t, "GET", d.url+"/v1/turns/"+id, host.Token, "", "c1", &st); code != 200 {
					t.Fatalf("status: %d", code)
				}
				return st
			}
			decide := func(id, decision string, out any) int {
				return callConv(t, "POST", d.url+"/v1/turns/"+id+"/approval", host.Token, `{"decision":"`+decision+`"}`, "c1", out)
			}
			offered := func(id, what string) {
				t.Helper()
				rec.waitTurn(t, id, "turn.approval_required", 60*time.Second)
				st := status(id)
				if st.State != "awaiting_approval" || st.Approval == nil || st.Approval.ManualRequired ||
					strings.Join(st.Approval.Decisions, ",") != "approve_once,reject" || !strings.Contains(st.Approval.CommandExcerpt, what) {
					t.Fatalf("status %+v %+v\n%s", st, st.Approval, e.Capture())
				}
			}

			// approve_once through the hook: the command runs once, the
			// pane says the hook allowed it, and the row names the hook.
			id := send(`[[akk:bash cmd=\"touch akk-ok && echo akk-ok-$((40+2))\"]] run the check`)
			offered(id, "akk-ok-")
			if r := findRow(t, d.url, host.Token, e.ProjectDir, 10*time.Second, func(c conversationRow) bool { return c.Terminal.Channels.Permission == "hook" }); r.Terminal.Channels.Question == "hook" {
				t.Fatalf("channels %+v", r.Terminal.Channels)
			}
			var res sendAnswer
			if code := decide(id, "approve_once", &res); code != 200 || res.Outcome != "done" {
				t.Fatalf("approve: %d %+v\n%s", code, res, e.Capture())
			}
			e.WaitForText(20*time.Second, "PermissionRequest hook")
			rec.waitTurn(t, id, "turn.completed", 60*time.Second)
			if types, _ := rec.forTurn(t, id); strings.Join(types, ",") != "turn.accepted,turn.approval_required,turn.completed" {
				t.Fatalf("webhooks %v", types)
			}
			if n := toolResultsWith(e, "akk-ok-42"); n != 1 {
				t.Fatalf("the approved command's output reached the model %d times", n)
			}
			if code := decide(id, "approve_once", &res); code != 409 {
				t.Fatalf("replayed approval: %d %+v", code, res)
			}

			// reject through the hook: the command never runs; the agent
			// gets the refusal as the tool's result and ends its turn.
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			id = send(`[[akk:bash cmd=\"touch akk-no && echo akk-no-$((40+3))\"]] run the other check`)
			offered(id, "akk-no-")
			if code := decide(id, "reject", &res); code != 200 || res.Outcome != "done" {
				t.Fatalf("reject: %d %+v\n%s", code, res, e.Capture())
			}
			rec.waitTurn(t, id, "turn.completed", 60*time.Second)
			if types, _ := rec.forTurn(t, id); strings.Join(types, ",") != "turn.accepted,turn.approval_required,turn.completed" {
				t.Fatalf("webhooks %v", types)
			}
			if n := toolResultsWith(e, "akk-no-43"); n != 0 {
				t.Fatalf("the rejected command ran (%d results)", n)
			}
			if _, err := os.Stat(filepath.Join(e.ProjectDir, "akk-no")); !os.IsNotExist(err) {
				t.Fatalf("the rejected command ran: %v", err)
			}
			if n := toolResultsWith(e, "Rejected through AKK"); n != 1 {
				t.Fatalf("the model heard the refusal %d times", n)
			}

			// What a Turn changed, here also on a release AKK has no profile
			// for. The hook offers only a shell command's prompt (its exact
			// command is what a host approves): a file edit's two dialogs
			// stay the person's, answered in the pane.
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			var other hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"other","webhook_url":"http://`+rec.addr+`/other"}`, &other)
			if viaAKK, inPane := checkTurnChanges(t, e, d.url, map[string]string{"terminal_id": term}, host, other); viaAKK != 0 || inPane != 2 {
				t.Fatalf("the edit's prompts: %d answered through AKK, %d in the pane; want 2 in the pane", viaAKK, inPane)
			}
			// The pane's screen as the agent shows it (tmux alone, no profile
			// involved): the edit's task, the secret it wrote redacted.
			var scr struct {
				Text    string `json:"text"`
				Columns int    `json:"columns"`
			}
			if code := call(t, "GET", d.url+"/v1/terminals/"+term+"/screen", host.Token, "", &scr); code != 200 || scr.Columns == 0 ||
				!strings.Contains(scr.Text, "Edit two files") || strings.Contains(scr.Text, fakemodel.SecretAWSKey) {
				t.Fatalf("the screen: %d %d columns\n%s", code, scr.Columns, scr.Text)
			}

			// The person answers in the pane while the hook waits: AKK's
			// offer ends (409, nothing sent) and the Turn goes on.
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			id = send(`[[akk:bash cmd=\"touch akk-mine && sleep 3 && echo akk-mine-$((40+4))\"]] run my check`)
			offered(id, "akk-mine-")
			e.WaitFor("the dialog", 30*time.Second, func(s string) bool { return agenttest.ApprovalPrompt(agenttest.KindClaude, s) })
			personApproves(t, e)
			var p struct{ Code string }
			if code := decide(id, "reject", &p); code != 409 {
				t.Fatalf("a decision after the person's: %d %+v", code, p)
			}
			rec.waitTurn(t, id, "turn.completed", 60*time.Second)
			if n := toolResultsWith(e, "akk-mine-44"); n != 1 {
				t.Fatalf("the person's approved command ran %d times", n)
			}

			// akkd stopped: the hook fails at once and the dialog shows as
			// before. What the person waits: from the model's tool call
			// written whole to the dialog on screen.
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			stop()
			e.Submit(`[[akk:bash cmd="touch akk-down && echo akk-down-$((40+5))"]] with akkd stopped`)
			call := e.WaitModelRequest("the tool call", 60*time.Second, func(r fakemodel.Request) bool {
				return strings.Contains(r.UserText, "with akkd stopped") && r.Done() && len(r.ToolResults) == 0 && !r.Aux
			})
			e.WaitFor("the dialog", 30*time.Second, func(s string) bool { return agenttest.ApprovalPrompt(agenttest.KindClaude, s) })
			waited := time.Since(call.Finished)
			t.Logf("HOOK-DOWN %s: the dialog %d ms after the tool call with akkd stopped", a.Name(), waited.Milliseconds())
			if waited > agenttest.Patient(time.Second) {
				t.Fatalf("with akkd stopped the person waited %s for the dialog", waited)
			}
			e.Press("Escape")

			// remove: the settings file is what it was, byte for byte.
			akkCLI(t, d, "hooks", "remove", "claude-code", "--settings", settings)
			after, err := os.ReadFile(settings)
			if err != nil || string(after) != string(before) {
				t.Fatalf("settings after remove:\n%s\nwant\n%s", after, before)
			}
		})
	}
}

// TestE2EClaudeHookCrash kills akkd while a hook request is open: after
// the restart nothing was approved, nothing is approved twice, and the
// prompt is still answerable: by AKK through the screen on a profiled
// version, in the pane on one AKK has no profile for.
func TestE2EClaudeHookCrash(t *testing.T) {
	agents := []agenttest.Agent{agenttest.RequireAgent(t, agenttest.KindClaude, "2.1.332")}
	agents = append(agents, agenttest.RequireUnprofiled(t, agenttest.KindClaude)[0])
	for i, a := range agents {
		profiled := i == 0
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{})
			rec := newReceiver(t, "")
			d := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+e.SocketPath())
			dd := &daemon{url: d.url, stateDir: d.dir}
			settings := filepath.Join(e.Home, ".claude", "settings.json")
			akkCLI(t, dd, "hooks", "install", "claude-code", "--settings", settings)
			e.StartReady()
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			term := findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend).Terminal.TerminalID
			var s sendAnswer
			if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"[[akk:bash cmd=\"touch akk-crash && echo akk-crash-$((40+6))\"]] through a crash"}`, "c1", &s); code != 202 {
				t.Fatalf("send: %d %+v", code, s)
			}
			rec.waitTurn(t, s.TurnID, "turn.approval_required", 60*time.Second)
			var st approvalStatus
			callConv(t, "GET", d.url+"/v1/turns/"+s.TurnID, host.Token, "", "c1", &st)
			d.kill() // the hook's request is open
			d.start()
			var res sendAnswer
			decide := func(out any) int {
				return callConv(t, "POST", d.url+"/v1/turns/"+s.TurnID+"/approval", host.Token, `{"decision":"approve_once"}`, "c1", out)
			}
			e.WaitFor("the dialog", 30*time.Second, func(s string) bool { return agenttest.ApprovalPrompt(agenttest.KindClaude, s) })
			if n := toolResultsWith(e, "akk-crash-46"); n != 0 {
				t.Fatalf("the command ran through the crash (%d)", n)
			}
			if profiled {
				// By AKK, through the screen (the hook's request ended with
				// the daemon).
				deadline := time.Now().Add(agenttest.Patient(30 * time.Second))
				for {
					callConv(t, "GET", d.url+"/v1/turns/"+s.TurnID, host.Token, "", "c1", &st)
					if st.Approval != nil && !st.Approval.ManualRequired && len(st.Approval.Decisions) == 2 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("no offer after the restart: %+v %+v", st, st.Approval)
					}
					time.Sleep(100 * time.Millisecond)
				}
				var raw json.RawMessage
				if code := decide(&raw); code != 200 || !strings.Contains(string(raw), `"outcome":"done"`) {
					// What the Turn went through (a state it left between the
					// status and the answer shows here).
					var now json.RawMessage
					callConv(t, "GET", d.url+"/v1/turns/"+s.TurnID, host.Token, "", "c1", &now)
					types, _ := rec.forTurn(t, s.TurnID)
					t.Fatalf("approve after the restart: %d %s\nits webhooks: %v\nits status now: %s\n%s", code, raw, types, now, e.Capture())
				}
				json.Unmarshal(raw, &res)
			} else {
				var p struct{ Code string }
				if code := decide(&p); code != 409 || p.Code != "manual_required" {
					// What the Turn went through since the restart (a state it
					// left and came back to shows here).
					var now json.RawMessage
					callConv(t, "GET", d.url+"/v1/turns/"+s.TurnID, host.Token, "", "c1", &now)
					types, _ := rec.forTurn(t, s.TurnID)
					t.Fatalf("approve on an unprofiled release without the hook: %d %+v\nits webhooks: %v\nits status now: %s", code, p, types, now)
				}
				personApproves(t, e)
			}
			rec.waitTurn(t, s.TurnID, "turn.completed", 60*time.Second)
			if n := toolResultsWith(e, "akk-crash-46"); n != 1 {
				t.Fatalf("the command ran %d times", n)
			}
		})
	}
}

// personApproves chooses the highlighted "Yes" of Claude Code's dialog as
// the person does. Claude Code drops a key that comes right after it draws
// a prompt, so the person presses again until the dialog goes (an Enter on
// the empty composer after it does nothing).
func personApproves(t *testing.T, e *agenttest.Env) {
	t.Helper()
	for i := 0; ; i++ {
		e.Press("Enter")
		if _, gone := e.Poll(3*time.Second, func(s string) bool { return !agenttest.ApprovalPrompt(agenttest.KindClaude, s) }); gone {
			return
		}
		if i == 10 {
			t.Fatalf("the dialog stayed:\n%s", e.Capture())
		}
	}
}
