package main

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// draftIntact reports whether a prompt row holds exactly draft: nothing
// typed before or after it.
func draftIntact(rows, draft string) bool {
	for _, l := range strings.Split(rows, "\n") {
		l = strings.TrimSpace(strings.ReplaceAll(l, "\u00a0", " ")) // Claude Code's prompt mark is followed by a no-break space
		if l == "› "+draft || l == "❯ "+draft {
			return true
		}
	}
	return false
}

// typedCommand finds a status, clear or new command typed on a screen: on
// a prompt row (the composer, or a request in the history), not in the
// agent's own tips ("Use /status to see…").
var typedCommand = regexp.MustCompile(`(?m)^\s*[›❯>][\s\x{00a0}]*/(status|clear|new)\b`)

type nativeInspection struct {
	Outcome    string `json:"outcome"`
	DoNotRetry bool   `json:"do_not_retry"`
	Code       string `json:"code"`
	Detail     string `json:"detail"`
	Status     *struct {
		NativeThreadID string `json:"native_thread_id"`
		AgentVersion   string `json:"agent_version"`
		Model          string `json:"model"`
		Directory      string `json:"directory"`
	} `json:"status"`
	IdentityMatchesRecord bool `json:"identity_matches_record"`
}

type foregroundProof struct {
	Outcome        string  `json:"outcome"`
	Code           string  `json:"code"`
	Detail         string  `json:"detail"`
	NativeThreadID *string `json:"native_thread_id"`
	RecordPresent  bool    `json:"record_present"`
	ProvenAt       string  `json:"proven_at"`
	ExpiresAt      string  `json:"expires_at"`
	Authorizes     string  `json:"authorizes"`
}

type newThreadResult struct {
	Outcome                string  `json:"outcome"`
	Code                   string  `json:"code"`
	Detail                 string  `json:"detail"`
	DoNotRetry             bool    `json:"do_not_retry"`
	SessionID              *string `json:"session_id"`
	NativeThreadID         *string `json:"native_thread_id"`
	PreviousNativeThreadID *string `json:"previous_native_thread_id"`
	Binding                string  `json:"binding"`
}

// runCLI runs the akk CLI (built once) against url with token.
func runCLI(t *testing.T, url, token string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(cliBinary(t), append([]string{"--url", url, "--token", token}, args...)...).Output()
	if err != nil {
		t.Fatalf("akk %v: %v\n%s", args, err, out)
	}
	return out
}

// advertised returns the path of the row's action name, "" when absent.
func advertised(c conversationRow, name string) string {
	for _, a := range c.AvailableActions {
		if a["action"] == name {
			p, _ := a["path"].(string)
			return p
		}
	}
	return ""
}

// TestE2ENativeControls drives the native controls through the API on
// every pinned version: after a Turn, the row advertises native_inspect
// (identity proven) or identify_foreground (Codex on a shared daemon); the
// status view names the Turn's thread and the pane is back on its idle
// empty composer; a new thread is proven from the agent's side and its
// Session takes the next Turn, which lands in that new thread; bad input
// and a draft in the composer send no key.
func TestE2ENativeControls(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	agents := agenttest.RequireAgents(t)
	daemonBinary(t)
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			// Its own world: it reads the pane's thread list, which holds every
			// earlier test's threads in a shared one.
			wl := useWorld(t, a, worldSpec{need: ownWorld})
			e, rec, d, host := wl.e, wl.rec, wl.d, wl.host
			row := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			term := row.Terminal.TerminalID
			first := "the native test's first task for " + a.Name()
			var s sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+first+`"}`, &s); code != 202 {
				t.Fatalf("send: %d %+v", code, s)
			}
			rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
			row = findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			var l threadList
			if code := call(t, "GET", d.url+"/v1/terminals/"+term+"/threads", host.Token, "", &l); code != 200 || len(l.Threads) != 1 {
				t.Fatalf("threads: %d %+v", code, l)
			}
			firstThread := l.Threads[0].NativeThreadID

			// Bad input: no key.
			var p struct {
				Code string `json:"code"`
			}
			if code := call(t, "POST", d.url+"/v1/terminals/"+term+"/inspect", host.Token, `{"inspection":"config"}`, &p); code != 400 && code != 422 {
				t.Fatalf("an unknown inspection: %d %+v", code, p)
			}
			if code := call(t, "POST", d.url+"/v1/terminals/"+term+"/inspect", host.Token, `{"inspection":"status","command":"/status"}`, &p); code != 400 && code != 422 {
				t.Fatalf("an extra field: %d %+v", code, p)
			}
			if code := call(t, "POST", d.url+"/v1/terminals/term_nope/threads", host.Token, "", &p); code != 404 {
				t.Fatalf("an unknown terminal: %d %+v", code, p)
			}
			// A draft a person typed: nothing is typed over it.
			draft := "a draft the person is writing"
			e.Type(draft)
			e.WaitForText(10*time.Second, draft)
			for _, path := range []string{"/threads", "/inspect", "/identify-foreground"} {
				body := ""
				if path == "/inspect" {
					body = `{"inspection":"status"}`
				}
				code := call(t, "POST", d.url+"/v1/terminals/"+term+path, host.Token, body, &p)
				if path == "/identify-foreground" && a.Kind == agenttest.KindClaude {
					if code != 409 {
						t.Fatalf("identify-foreground on Claude Code: %d %+v", code, p)
					}
					continue
				}
				if code != 409 || p.Code != "terminal_not_idle" {
					t.Fatalf("POST %s over a draft: %d %+v", path, code, p)
				}
			}
			// No command typed: none shows on a prompt row.
			if rows := e.Capture(); !draftIntact(rows, draft) || typedCommand.MatchString(rows) {
				t.Fatalf("the draft was touched:\n%s", rows)
			}
			e.Press("C-u") // the person clears it
			e.WaitFor("the cleared composer", 10*time.Second, func(s string) bool { return !strings.Contains(s, draft) })
			row = findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool {
				return hasSend(c) && c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty
			})

			// The status view: native_inspect where the records prove the
			// thread, identify_foreground where they cannot.
			if row.Terminal.NativeIdentityState == "resolved" {
				path := advertised(row, "native_inspect")
				if path == "" {
					t.Fatalf("a resolved row does not advertise native_inspect: %v", row.AvailableActions)
				}
				// Through the CLI, as an operator would.
				var in nativeInspection
				if out := runCLI(t, d.url, host.Token, "--json", "inspect", term); json.Unmarshal(out, &in) != nil || in.Outcome != "done" || in.Status == nil {
					t.Fatalf("akk inspect: %s", out)
				}
				if in.Status.NativeThreadID != firstThread || !in.IdentityMatchesRecord || in.Status.AgentVersion != a.Version || in.Status.Directory != e.ProjectDir {
					t.Fatalf("inspect %+v, want thread %s version %s directory %s", *in.Status, firstThread, a.Version, e.ProjectDir)
				}
				t.Logf("native inspect: %+v", *in.Status)
				if a.Kind == agenttest.KindClaude {
					if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"never typed","identify":true}`, &p); code != 409 || p.Code != "manual_required" {
						t.Fatalf("identify on Claude Code: %d %+v", code, p)
					}
				}
			} else {
				if a.Kind != agenttest.KindCodex {
					t.Fatalf("%s identity %s", a.Name(), row.Terminal.NativeIdentityState)
				}
				path := advertised(row, "identify_foreground")
				if path == "" || advertised(row, "native_inspect") != "" {
					t.Fatalf("an unresolved Codex row advertises %v", row.AvailableActions)
				}
				var fp foregroundProof
				if out := runCLI(t, d.url, host.Token, "--json", "identify", term); json.Unmarshal(out, &fp) != nil || fp.Outcome != "done" || fp.NativeThreadID == nil {
					t.Fatalf("akk identify: %s", out)
				}
				if *fp.NativeThreadID != firstThread || !fp.RecordPresent || fp.Authorizes != "nothing" {
					t.Fatalf("identify-foreground %+v, want thread %s", fp, firstThread)
				}
				t.Logf("foreground: %s", *fp.NativeThreadID)
				// The first Turn's session is bound to its thread; a Send to it
				// is exact through the probe, advertised as session_exact.
				row = findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
				exact := false
				for _, act := range row.AvailableActions {
					if act["action"] == "send" && act["target"] == "session_exact" {
						exact = true
					}
				}
				if !exact || s.SessionID == "" {
					t.Fatalf("no session_exact send on the row: %v (session %q)", row.AvailableActions, s.SessionID)
				}
				var se sendAnswer
				again := "the native test's exact send for " + a.Name()
				if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"session_id":"`+s.SessionID+`","request":"`+again+`"}`, &se); code != 202 {
					t.Fatalf("session_exact send: %d %+v", code, se)
				}
				rec.waitTurn(t, se.TurnID, "turn.completed", 90*time.Second)
				// identify_and_send: the probe and the dispatch under one lock.
				findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
				var ia struct {
					sendAnswer
					ForegroundThreadID *string `json:"foreground_thread_id"`
				}
				also := "the native test's identified send for " + a.Name()
				if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+also+`","identify":true}`, &ia); code != 202 ||
					ia.ForegroundThreadID == nil || *ia.ForegroundThreadID != firstThread {
					t.Fatalf("identify_and_send: %d %+v (foreground %v)", code, ia.sendAnswer, ia.ForegroundThreadID)
				}
				rec.waitTurn(t, ia.TurnID, "turn.completed", 90*time.Second)
			}
			row = findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool {
				return hasSend(c) && c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty
			})

			// A new thread.
			path := advertised(row, "new_thread")
			if path != "/v1/terminals/"+term+"/threads" {
				t.Fatalf("new_thread at %q: %v", path, row.AvailableActions)
			}
			var nt newThreadResult
			if code := call(t, "POST", d.url+path, host.Token, "", &nt); code != 200 || nt.Outcome != "done" || nt.SessionID == nil || nt.NativeThreadID == nil {
				t.Fatalf("new thread: %d %+v", code, nt)
			}
			if *nt.NativeThreadID == firstThread {
				t.Fatalf("the new thread is the old one: %+v", nt)
			}
			wantBinding := "bound"
			if a.Kind == agenttest.KindCodex {
				wantBinding = "pending_first_turn"
			}
			if nt.Binding != wantBinding {
				t.Fatalf("binding %q, want %q", nt.Binding, wantBinding)
			}
			second := "the native test's second task for " + a.Name()
			row = findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			var s2 sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"session_id":"`+*nt.SessionID+`","request":"`+second+`"}`, &s2); code != 202 {
				t.Fatalf("send to the new session: %d %+v", code, s2)
			}
			rec.waitTurn(t, s2.TurnID, "turn.completed", 90*time.Second)
			// The second task's thread is the new one: its first request.
			if code := call(t, "GET", d.url+"/v1/terminals/"+term+"/threads", host.Token, "", &l); code != 200 {
				t.Fatalf("threads: %d", code)
			}
			found := false
			for _, th := range l.Threads {
				if th.NativeThreadID == *nt.NativeThreadID {
					found = true
					if th.Title != second {
						t.Fatalf("the new thread's first request is %q, want %q", th.Title, second)
					}
				}
			}
			if !found {
				t.Fatalf("the new thread %s is not among %+v", *nt.NativeThreadID, l.Threads)
			}

			// Resume the first thread (through the CLI), by its complete id.
			row = findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool {
				return hasSend(c) && c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty && advertised(c, "resume_thread") != ""
			})
			for body, want := range map[string]int{
				`{"native_thread_id":"` + strings.ReplaceAll(firstThread, "-", "")[:8] + `"}`: 400, // a short id
				`{"native_thread_id":"01234567-89ab-cdef-0123-456789abcdef"}`:                 404, // not this project's
				`{"native_thread_id":"` + firstThread + `","previous":true}`:                  400,
			} {
				if code := call(t, "POST", d.url+"/v1/terminals/"+term+"/threads/resume", host.Token, body, &p); code != want && !(want == 400 && code == 422) {
					t.Fatalf("resume %s: %d %+v, want %d", body, code, p, want)
				}
			}
			// "previous" means one thing only where the pane is proven to
			// show the new thread (its records name it): there, it is the
			// first thread; elsewhere it is refused with no key.
			resumeArg := firstThread
			if row.Terminal.NativeIdentityState == "resolved" {
				resumeArg = "--previous"
			} else if code := call(t, "POST", d.url+"/v1/terminals/"+term+"/threads/resume", host.Token, `{"previous":true}`, &p); code != 409 || p.Code != "native_identity_unproven" {
				t.Fatalf("resume previous on an unproven pane: %d %+v", code, p)
			}
			var rt newThreadResult
			if out := runCLI(t, d.url, host.Token, "--json", "resume-thread", term, resumeArg); json.Unmarshal(out, &rt) != nil || rt.Outcome != "done" || rt.SessionID == nil {
				t.Fatalf("akk resume-thread %s: %s", resumeArg, out)
			}
			if rt.NativeThreadID == nil || *rt.NativeThreadID != firstThread {
				t.Fatalf("resumed %+v, want %s", rt, firstThread)
			}
			t.Logf("resumed %s (%s)", firstThread, rt.Binding)
			third := "the native test's third task, in the first thread, for " + a.Name()
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			var s3 sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"session_id":"`+*rt.SessionID+`","request":"`+third+`"}`, &s3); code != 202 {
				t.Fatalf("send to the resumed session: %d %+v", code, s3)
			}
			rec.waitTurn(t, s3.TurnID, "turn.completed", 90*time.Second)
			// The first thread's record took the third task: it is the
			// newest thread now.
			if code := call(t, "GET", d.url+"/v1/terminals/"+term+"/threads", host.Token, "", &l); code != 200 || len(l.Threads) < 2 || l.Threads[0].NativeThreadID != firstThread {
				t.Fatalf("after the resumed thread's task: %d %+v", code, l.Threads)
			}
		})
	}
}

// TestE2EWatchIdentified watches a task a person typed on every pinned
// Codex version whose threads live in the shared app-server daemon, with
// AKK not asking that daemon: with identify, the closed status probe names
// the pane's thread and the Watch is exact (its completion carries the
// final message); the probe reached no model and left the composer empty.
func TestE2EWatchIdentified(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	var agents []agenttest.Agent
	for _, a := range agenttest.RequireAgents(t, agenttest.KindCodex) {
		if sharedDaemon(a) {
			agents = append(agents, a)
		}
	}
	if len(agents) == 0 {
		t.Skip("no pinned Codex version on a shared daemon")
	}
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{})
			e.StartReady()
			rec := newReceiver(t, "")
			// The daemon is not asked (--codex-backend off): the probe is.
			d := startDaemon(t, t.TempDir(), map[string]string{"AKK_TMUX_SOCKETS": e.SocketPath(), "AKK_CODEX_BACKEND": "off"})
			defer d.stop()
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			term := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend).Terminal.TerminalID
			// A thread the person started earlier, so the daemon holds two.
			e.Submit("an earlier task of mine")
			e.WaitTurnCompleted("", 90*time.Second)
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			e.Type("/new")
			e.WaitForText(10*time.Second, "start a new chat")
			e.Press("Enter")
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)

			e.Submit("[[akk:slow secs=8]] a task I typed myself")
			e.WaitModelRequest("the person's slow task", 30*time.Second, func(r fakemodel.Request) bool {
				return strings.Contains(r.UserText, "a task I typed myself")
			})
			// The row's watch action asks for the probe; post its body as is.
			row := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasAction("watch"))
			var body []byte
			for _, act := range row.AvailableActions {
				if act["action"] == "watch" {
					body, _ = json.Marshal(act["body"])
				}
			}
			if !strings.Contains(string(body), `"identify":true`) || !strings.Contains(string(body), term) {
				t.Fatalf("the watch action's body %s", body)
			}
			before := userPrompts(e)
			var w watchAnswer
			if code := call(t, "POST", d.url+"/v1/watches", host.Token, string(body), &w); code != 201 {
				t.Fatalf("watch: %d %+v", code, w)
			}
			if w.WatchMode != "exact_task" || w.Confidence != "exact" {
				t.Fatalf("identified watch %+v, want exact_task", w)
			}
			done := rec.waitTurn(t, w.WatchID, "watch.completed", 90*time.Second)
			if fm, _ := done.Data["final_message"].(string); !strings.Contains(fm, "slow") {
				t.Fatalf("final message %q", fm)
			}
			if n := userPrompts(e); n != before {
				t.Fatalf("the probe reached the model (%d → %d prompts)", before, n)
			}
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool {
				return c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty
			})
		})
	}
}

type permissionsResult struct {
	Outcome          string  `json:"outcome"`
	Code             string  `json:"code"`
	Detail           string  `json:"detail"`
	Current          *string `json:"current"`
	Previous         *string `json:"previous"`
	AlreadyEffective bool    `json:"already_effective"`
	Modes            []struct {
		Mode, Label string
	} `json:"modes"`
}

// TestE2EPermissions reads and changes the native permission mode on every
// pinned version: the row's permission_options and set_permissions
// actions; a change read back; a repeat already effective; Codex's Full
// Access through its native confirmation; back to the default; a mode the
// pane does not offer refused; a Send still works after.
func TestE2EPermissions(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	agents := agenttest.RequireAgents(t)
	daemonBinary(t)
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			// Codex on a world of its own: its full-access confirmation is
			// driven on the agent as it starts (on a shared world Codex 0.169.0
			// and 0.171.0 once answered it uncertain, cause not yet known;
			// docs/TESTING.md). Claude Code shares its version's world.
			spec := worldSpec{}
			if a.Kind == agenttest.KindCodex {
				spec.need = ownWorld
			}
			wl := useWorld(t, a, spec)
			e, rec, d, host := wl.e, wl.rec, wl.d, wl.host
			row := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool {
				return hasSend(c) && c.Terminal.ComposerEmpty && advertised(c, "permission_options") != ""
			})
			term := row.Terminal.TerminalID
			path := advertised(row, "permission_options")
			if advertised(row, "set_permissions") != path {
				t.Fatalf("set_permissions at %q, options at %q", advertised(row, "set_permissions"), path)
			}
			set := func(mode string) permissionsResult {
				t.Helper()
				var r permissionsResult
				code := call(t, "PUT", d.url+path, host.Token, `{"mode":"`+mode+`"}`, &r)
				if code != 200 || r.Outcome != "done" || r.Current == nil || *r.Current != mode {
					t.Fatalf("set %s: %d %+v", mode, code, r)
				}
				findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool {
					return hasSend(c) && c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty
				})
				return r
			}
			var r permissionsResult
			if code := call(t, "GET", d.url+path, host.Token, "", &r); code != 200 || r.Outcome != "done" || r.Current == nil {
				t.Fatalf("permissions: %d %+v", code, r)
			}
			start := *r.Current
			offered := map[string]bool{}
			for _, m := range r.Modes {
				offered[m.Mode] = true
			}
			target := "plan"
			if a.Kind == agenttest.KindCodex {
				target = "approve_for_me"
			}
			if !offered[target] || start == target {
				t.Fatalf("modes %+v, current %s", r.Modes, start)
			}
			t.Logf("modes %+v, current %s", r.Modes, start)
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			if got := set(target); got.Previous == nil || *got.Previous != start {
				t.Fatalf("previous %+v", got)
			}
			var back permissionsResult
			if code := call(t, "GET", d.url+path, host.Token, "", &back); code != 200 || back.Current == nil || *back.Current != target {
				t.Fatalf("read back: %d %+v", code, back)
			}
			if again := set(target); !again.AlreadyEffective {
				t.Fatalf("a repeat: %+v", again)
			}
			if a.Kind == agenttest.KindCodex {
				set("full_access") // through its native confirmation
			}
			set(start)
			var p struct {
				Code string `json:"code"`
			}
			if code := call(t, "PUT", d.url+path, host.Token, `{"mode":"Full Access"}`, &p); code != 400 && code != 422 {
				t.Fatalf("a label for a mode: %d %+v", code, p)
			}
			if code := call(t, "PUT", d.url+path, host.Token, `{"mode":"bypass_everything"}`, &p); code != 422 {
				t.Fatalf("a mode the pane does not offer: %d %+v", code, p)
			}
			task := "a task after the permission changes for " + a.Name()
			var s sendAnswer
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+task+`"}`, &s); code != 202 {
				t.Fatalf("send: %d %+v", code, s)
			}
			rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
		})
	}
}

type modelsResult struct {
	Outcome   string `json:"outcome"`
	Code      string `json:"code"`
	Detail    string `json:"detail"`
	Effective *struct {
		Model           string `json:"model"`
		ReasoningEffort string `json:"reasoning_effort"`
	} `json:"effective"`
	Models []struct {
		Model            string   `json:"model"`
		Label            string   `json:"label"`
		ReasoningEfforts []string `json:"reasoning_efforts"`
	} `json:"models"`
	Scope string `json:"scope"`
}

// TestE2EModels reads the model catalogue and changes the reasoning effort
// on every pinned version: the row's model_options and set_model actions;
// a change read back (changed), a repeat from a fresh catalogue
// (already_effective, no key), a set-model without a catalogue, with an
// effort not advertised, and from another conversation refused; the pane
// back on its idle empty composer and a Send completing after.
func TestE2EModels(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	agents := agenttest.RequireAgents(t)
	daemonBinary(t)
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			wl := useWorld(t, a, worldSpec{})
			e, rec, d, host := wl.e, wl.rec, wl.d, wl.host
			wl.dirty() // the pane's model changes: its world is not reused
			ready := func(c conversationRow) bool {
				return hasSend(c) && c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty && advertised(c, "model_options") != ""
			}
			row := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, ready)
			term := row.Terminal.TerminalID
			path, setPath := advertised(row, "model_options"), advertised(row, "set_model")
			catalogue := func() modelsResult {
				t.Helper()
				var m modelsResult
				if code := callConv(t, "GET", d.url+path, host.Token, "", "c1", &m); code != 200 || m.Outcome != "done" || m.Effective == nil {
					t.Fatalf("models: %d %+v", code, m)
				}
				findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, ready)
				return m
			}
			var p struct {
				Code string `json:"code"`
			}
			if code := callConv(t, "PUT", d.url+setPath, host.Token, `{"model":"x","reasoning_effort":"high"}`, "c1", &p); code != 409 || p.Code != "offer_expired" {
				t.Fatalf("set-model without a catalogue: %d %+v", code, p)
			}
			m := catalogue()
			cur := m.Effective
			var efforts []string
			for _, o := range m.Models {
				if o.Model == cur.Model {
					efforts = o.ReasoningEfforts
				}
			}
			target := ""
			for _, ef := range efforts {
				if ef == "high" && cur.ReasoningEffort != "high" {
					target = ef
				}
			}
			if target == "" {
				for _, ef := range efforts {
					if ef != cur.ReasoningEffort && target == "" {
						target = ef
					}
				}
			}
			if len(m.Models) < 2 || target == "" {
				t.Fatalf("catalogue %+v", m)
			}
			t.Logf("%s with %s effort; efforts %v; %d models; scope %s", cur.Model, cur.ReasoningEffort, efforts, len(m.Models), m.Scope)
			// Another conversation does not hold this catalogue.
			if code := callConv(t, "PUT", d.url+setPath, host.Token, `{"model":"`+cur.Model+`","reasoning_effort":"`+target+`"}`, "c2", &p); code != 409 || p.Code != "offer_expired" {
				t.Fatalf("set-model from another conversation: %d %+v", code, p)
			}
			if code := callConv(t, "PUT", d.url+setPath, host.Token, `{"model":"`+cur.Model+`","reasoning_effort":"ultra_imaginary"}`, "c1", &p); code != 422 {
				t.Fatalf("an effort not advertised: %d %+v", code, p)
			}
			// A screen that changed after the catalogue (a person's draft)
			// sends no key; the draft stays.
			m = catalogue()
			draft := "a draft typed after the catalogue"
			e.Type(draft)
			e.WaitForText(10*time.Second, draft)
			if code := callConv(t, "PUT", d.url+setPath, host.Token, `{"model":"`+cur.Model+`","reasoning_effort":"`+target+`"}`, "c1", &p); code != 409 || p.Code != "terminal_not_idle" {
				t.Fatalf("set-model over a draft: %d %+v", code, p)
			}
			if s := e.Capture(); !strings.Contains(s, draft) || strings.Contains(s, "Select model") || strings.Contains(s, "Select Model") {
				t.Fatalf("the draft was touched:\n%s", s)
			}
			e.Press("C-u")
			e.WaitFor("the cleared composer", 10*time.Second, func(s string) bool { return !strings.Contains(s, draft) })
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, ready)
			// That attempt consumed the catalogue: read it again.
			m = catalogue()
			var r modelsResult
			if code := callConv(t, "PUT", d.url+setPath, host.Token, `{"model":"`+cur.Model+`","reasoning_effort":"`+target+`"}`, "c1", &r); code != 200 || r.Outcome != "changed" ||
				r.Effective == nil || r.Effective.ReasoningEffort != target {
				t.Fatalf("set-model %s: %d %+v", target, code, r)
			}
			wantScope := "current_session"
			if a.Kind == agenttest.KindCodex {
				wantScope = "current_and_new_sessions"
			}
			if r.Scope != wantScope {
				t.Fatalf("scope %q, want %q", r.Scope, wantScope)
			}
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, ready)
			m = catalogue()
			if m.Effective.ReasoningEffort != target {
				t.Fatalf("read back %+v, want %s", m.Effective, target)
			}
			if code := callConv(t, "PUT", d.url+setPath, host.Token, `{"model":"`+cur.Model+`","reasoning_effort":"`+target+`"}`, "c1", &r); code != 200 || r.Outcome != "already_effective" {
				t.Fatalf("a repeat: %d %+v", code, r)
			}
			// What a model control can leave behind, cleared by the repair:
			// the bare command in the composer, then the picker left open.
			repair := func(what string) {
				t.Helper()
				r := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool { return advertised(c, "repair_model_control") != "" })
				var res struct {
					Outcome string `json:"outcome"`
					Detail  string `json:"detail"`
				}
				if code := call(t, "POST", d.url+advertised(r, "repair_model_control"), host.Token, "", &res); code != 200 || res.Outcome != "done" {
					t.Fatalf("repair %s: %d %+v", what, code, res)
				}
				findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, ready)
			}
			if code := call(t, "POST", d.url+"/v1/terminals/"+term+"/model/repair", host.Token, "", &p); code != 409 {
				t.Fatalf("repair of a clean pane: %d %+v", code, p)
			}
			e.Type("/model")
			e.WaitForText(10*time.Second, "/model")
			repair("a bare /model")
			e.Type("/model")
			// The menu's own row ("/model  choose what model…"), not the
			// header's or a tip's mention of /model: Enter before the menu
			// is drawn leaves the bare command in the composer.
			e.WaitFor("the command menu under the typed /model", 10*time.Second, func(s string) bool { return modelMenuRow.MatchString(s) })
			e.Press("Enter")
			e.WaitFor("the model picker", 10*time.Second, func(s string) bool {
				return strings.Contains(s, "Select model") || strings.Contains(s, "Select Model and Effort")
			})
			repair("an open picker")
			if m := catalogue(); m.Effective.ReasoningEffort != target {
				t.Fatalf("the repair changed the effort: %+v", m.Effective)
			}
			// A busy pane: a catalogue read while a task runs sends no key.
			task := "[[akk:slow secs=4]] a task after the model change for " + a.Name()
			var s sendAnswer
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+task+`"}`, &s); code != 202 {
				t.Fatalf("send: %d %+v", code, s)
			}
			rec.waitTurn(t, s.TurnID, "turn.accepted", 30*time.Second)
			if code := callConv(t, "GET", d.url+path, host.Token, "", "c1", &p); code != 409 {
				t.Fatalf("models on a busy pane: %d %+v", code, p)
			}
			rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
		})
	}
}

// modelMenuRow is the command menu's row for /model: an optional selection
// glyph, the command, two or more spaces, its description.
var modelMenuRow = regexp.MustCompile(`(?m)^\s*[❯›>]?\s*/model\s{2,}\S`)
