package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
	"akk/terminaldrivers/codex"
	"akk/terminaldrivers/codexappserver"
)

// backendRow is a backend conversation as the list shows it.
type backendRow struct {
	ConversationID string `json:"conversation_id"`
	Title          string `json:"title"`
	Project        string `json:"project"`
	Transport      string `json:"transport"`
	Agent          struct {
		Kind, Version string
	} `json:"agent"`
	Terminal *struct{} `json:"terminal"`
	Warnings []string  `json:"warnings"`
	Backend  *struct {
		Provider       string `json:"provider"`
		NativeThreadID string `json:"native_thread_id"`
		ThreadStatus   string `json:"thread_status"`
	} `json:"backend"`
	AvailableActions []map[string]any `json:"available_actions"`
}

// findBackendRow waits for the backend row of project that ok accepts.
func findBackendRow(t testing.TB, url, token, project string, timeout time.Duration, ok func(backendRow) bool) backendRow {
	t.Helper()
	real, _ := filepath.EvalSymlinks(project)
	deadline := time.Now().Add(agenttest.Patient(timeout))
	var last []backendRow
	for {
		var list struct{ Conversations []backendRow }
		call(t, "GET", url+"/v1/conversations", token, "", &list)
		last = list.Conversations
		for _, c := range list.Conversations {
			if c.Transport == "codex_backend" && (c.Project == project || c.Project == real) && ok(c) {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no backend row for %s within %s; rows %+v", project, timeout, last)
		}
		time.Sleep(listEvery)
	}
}

func backendSend(c backendRow) bool {
	for _, a := range c.AvailableActions {
		if a["action"] == "send" {
			return c.Backend != nil && c.Backend.ThreadStatus == "idle"
		}
	}
	return false
}

// daemonAgents are the pinned Codex versions whose TUI hands its threads to
// a managed app-server daemon (0.158.0 and later).
func daemonAgents(t *testing.T) []agenttest.Agent {
	var agents []agenttest.Agent
	for _, a := range agenttest.RequireAgents(t, "codex") {
		if slices.Contains(codex.DaemonVersions(), a.Version) {
			agents = append(agents, a)
		}
	}
	if len(agents) == 0 {
		t.Fatal("no pinned Codex runs a managed app-server daemon")
	}
	return agents
}

// TestE2ECodexBackend drives a thread of each pinned Codex that hands its
// threads to a managed app-server daemon (0.158.0 and later) through that
// daemon, with the real TUI showing the thread in tmux and the fake model:
// the list shows the thread as its own backend row with its exact id (the
// pane's rollout names it); a Send completes with the final message, one
// model call, no key typed, and the pane shows the turn as if typed there;
// the same message_id is the same Turn; bad input is refused before
// anything; a busy thread refuses a second Send; a cancel interrupts; the
// daemon killed mid-turn stalls the Turn with a reason and never completes
// it.
func TestE2ECodexBackend(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	daemonBinary(t)
	for _, a := range daemonAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{})
			model := e.Model
			e.StartReady()
			rec := newReceiver(t, "")
			d := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+e.SocketPath(), "AKK_WEBHOOK_RETRY_SCHEDULE=200ms,500ms,1s")
			op := d.token()
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", op, `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)

			// A person's first turn writes the thread's rollout: from then
			// on the daemon's thread is listed, beside the pane's row.
			first := "Say hello to the person first"
			e.Submit(first)
			e.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken(first))
			e.WaitIdle(agenttest.TurnTimeout)
			row := findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
			thread := row.Backend.NativeThreadID
			if row.Terminal != nil || row.Backend.Provider != "codex_app_server" || row.Agent.Kind != "codex" || row.Agent.Version != a.Version ||
				row.ConversationID != "conv_cx_"+thread {
				t.Fatalf("backend row %+v", row)
			}
			rollouts := e.TranscriptPaths()
			if len(rollouts) != 1 || !strings.Contains(filepath.Base(rollouts[0]), thread) {
				t.Fatalf("the row names thread %s; the pane's rollouts are %v", thread, rollouts)
			}
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend) // the pane keeps its own row

			// Refused before anything: no Turn, no model call.
			before := len(model.Requests())
			for _, bad := range []struct {
				body string
				code int
				want string
			}{
				{`{"conversation_id":"` + row.ConversationID + `","terminal_id":"term_x","request":"hi"}`, 422, "validation_failed"},
				{`{"conversation_id":"conv_cx_00000000-0000-0000-0000-000000000000","request":"hi"}`, 404, "conversation_not_found"},
				{`{"conversation_id":"conv_term_1","request":"hi"}`, 404, "conversation_not_found"},
				{`{"conversation_id":"` + row.ConversationID + `","request":"/clear"}`, 422, "slash_command_rejected"},
			} {
				var p sendAnswer
				if code := call(t, "POST", d.url+"/v1/turns", host.Token, bad.body, &p); code != bad.code || p.Code != bad.want {
					t.Fatalf("%s: %d %+v, want %d %s", bad.body, code, p, bad.code, bad.want)
				}
			}
			if len(model.Requests()) != before {
				t.Fatal("a refused Send reached the model")
			}

			// A Send through the daemon completes; the pane shows it.
			screenBefore := e.Capture()
			text := "Say hello through the backend for " + a.Name()
			body := `{"conversation_id":"` + row.ConversationID + `","request":"` + text + `","message_id":"b-1"}`
			var s sendAnswer
			if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, body, "chat-b", &s); code != 202 || s.Outcome != "done" ||
				s.DeliveryPath != "codex_backend" || s.WatchID == "" {
				t.Fatalf("send: %d %+v", code, s)
			}
			done := rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
			if got, want := done.Data["final_message"], fakemodel.DefaultReply(text); got != want {
				t.Fatalf("final message %q, want %q", got, want)
			}
			if done.Data["conversation"] != "chat-b" || done.Data["terminal_id"] != "cx_"+thread {
				t.Fatalf("completed data %+v", done.Data)
			}
			if types, _ := rec.forTurn(t, s.TurnID); strings.Join(types, ",") != "turn.accepted,turn.completed" {
				t.Fatalf("webhooks %v", types)
			}
			for _, dl := range rec.deliveries() {
				verify(t, host.WebhookSecret, dl)
			}
			if n := userRequests(model, text); n != 1 {
				t.Fatalf("the model saw the request %d times", n)
			}
			e.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken(text))
			if strings.Contains(screenBefore, text) {
				t.Fatal("the request was on screen before the Send")
			}
			var st struct {
				State        string `json:"state"`
				DeliveryPath string `json:"delivery_path"`
				WatchID      string `json:"watch_id"`
				Result       struct {
					FinalMessage string `json:"final_message"`
				} `json:"result"`
			}
			if code := callConv(t, "GET", d.url+"/v1/turns/"+s.TurnID, host.Token, "", "chat-b", &st); code != 200 || st.State != "completed" ||
				st.DeliveryPath != "codex_backend" || st.WatchID != s.WatchID {
				t.Fatalf("status: %d %+v", code, st)
			}
			var again sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, body, &again); code != 200 || again.TurnID != s.TurnID {
				t.Fatalf("resend: %d %+v", code, again)
			}
			if n := userRequests(model, text); n != 1 {
				t.Fatalf("a resend reached the model: %d calls", n)
			}

			// What a Turn on the thread changed: the daemon's own record of
			// the patch (its fileChange item).
			findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
			var other hostCreds
			call(t, "POST", d.url+"/v1/hosts", op, `{"name":"other","webhook_url":"http://`+rec.addr+`/other"}`, &other)
			checkTurnChanges(t, e, d.url, map[string]string{"conversation_id": row.ConversationID}, host, other)
			findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)

			// The daemon asks to approve a command: a fresh status offers
			// one-time decisions, an approval goes through the daemon, the
			// pane's own prompt closes and the command runs once; a
			// declined one never runs.
			probe := filepath.Join(e.ProjectDir, "akk-approval-probe")
			for _, decision := range []string{"approve_once", "reject"} {
				os.Remove(probe)
				e.WaitIdle(agenttest.TurnTimeout)
				findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
				ask := "Run the probe (" + decision + ") " + fakemodel.Marker(fakemodel.ScenarioBash)
				var sb sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"`+ask+`"}`, "chat-b", &sb); code != 202 {
					t.Fatalf("bash send: %d %+v", code, sb)
				}
				rec.waitTurn(t, sb.TurnID, "turn.approval_required", 60*time.Second)
				e.WaitFor("the pane's own approval prompt", agenttest.TurnTimeout, func(s string) bool { return agenttest.ApprovalPrompt(a.Kind, s) })
				var p sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns/"+sb.TurnID+"/approval", host.Token, `{"decision":"`+decision+`"}`, "chat-b", &p); code != 409 || p.Code != "offer_expired" {
					t.Fatalf("an approval nobody was shown: %d %+v", code, p)
				}
				var ap struct {
					State    string `json:"state"`
					Approval *struct {
						CommandExcerpt string   `json:"command_excerpt"`
						Decisions      []string `json:"decisions"`
						ManualRequired bool     `json:"manual_required"`
					} `json:"approval"`
				}
				if code := callConv(t, "GET", d.url+"/v1/turns/"+sb.TurnID, host.Token, "", "chat-b", &ap); code != 200 || ap.State != "awaiting_approval" || ap.Approval == nil ||
					ap.Approval.ManualRequired || !strings.Contains(ap.Approval.CommandExcerpt, "akk-approval-probe") || strings.Join(ap.Approval.Decisions, ",") != "approve_once,reject" {
					t.Fatalf("status of the approval: %d %+v", code, ap.Approval)
				}
				var res sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns/"+sb.TurnID+"/approval", host.Token, `{"decision":"`+decision+`"}`, "chat-b", &res); code != 200 || res.Outcome != "done" {
					t.Fatalf("%s: %d %+v", decision, code, res)
				}
				e.WaitFor("the pane's prompt closed", agenttest.TurnTimeout, func(s string) bool { return !agenttest.ApprovalPrompt(a.Kind, s) })
				done := rec.waitTurn(t, sb.TurnID, "turn.completed", 60*time.Second)
				_, ran := os.Stat(probe)
				if final, _ := done.Data["final_message"].(string); (decision == "approve_once") != (ran == nil) || (decision == "approve_once") != strings.Contains(final, "akk-bash-ran") {
					t.Fatalf("%s: the probe ran: %v; final %q", decision, ran == nil, final)
				}
				if code := callConv(t, "POST", d.url+"/v1/turns/"+sb.TurnID+"/approval", host.Token, `{"decision":"`+decision+`"}`, "chat-b", &p); code != 409 {
					t.Fatalf("a second answer: %d %+v", code, p)
				}
			}

			// akkd killed while the daemon waits on an approval: after the
			// restart the request is offered again (the daemon hands it to
			// the new follower), answered once, announced once.
			{
				os.Remove(probe)
				e.WaitIdle(agenttest.TurnTimeout)
				findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
				ask := "Run the probe across a restart " + fakemodel.Marker(fakemodel.ScenarioBash)
				var sb sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"`+ask+`"}`, "chat-b", &sb); code != 202 {
					t.Fatalf("bash send: %d %+v", code, sb)
				}
				rec.waitTurn(t, sb.TurnID, "turn.approval_required", 60*time.Second)
				d.kill()
				d.start()
				var ap struct {
					Approval *struct {
						Decisions []string `json:"decisions"`
					} `json:"approval"`
				}
				deadline := time.Now().Add(30 * time.Second)
				for {
					if code := callConv(t, "GET", d.url+"/v1/turns/"+sb.TurnID, host.Token, "", "chat-b", &ap); code == 200 && ap.Approval != nil && len(ap.Approval.Decisions) == 2 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the approval is not offered again after the restart: %+v", ap.Approval)
					}
					time.Sleep(100 * time.Millisecond)
				}
				var res sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns/"+sb.TurnID+"/approval", host.Token, `{"decision":"approve_once"}`, "chat-b", &res); code != 200 || res.Outcome != "done" {
					t.Fatalf("approve after the restart: %d %+v", code, res)
				}
				rec.waitTurn(t, sb.TurnID, "turn.completed", 60*time.Second)
				if types, _ := rec.forTurn(t, sb.TurnID); strings.Join(types, ",") != "turn.accepted,turn.approval_required,turn.completed" {
					t.Fatalf("webhooks across the restart: %v", types)
				}
				if _, err := os.Stat(probe); err != nil {
					t.Fatalf("the command approved after the restart did not run: %v", err)
				}
			}

			// A question the agent asks (in Plan mode, as the person set the
			// pane): projected with opaque ids, answered through the daemon;
			// the model gets exactly the chosen option.
			e.WaitIdle(agenttest.TurnTimeout)
			e.PlanMode()
			findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
			ask := "Ask me first through the backend " + fakemodel.Marker(fakemodel.ScenarioAsk)
			var sq sendAnswer
			if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"`+ask+`"}`, "chat-b", &sq); code != 202 {
				t.Fatalf("ask send: %d %+v", code, sq)
			}
			asked := rec.waitTurn(t, sq.TurnID, "turn.interaction_required", 60*time.Second)
			if _, ok := asked.Data["interaction"]; !ok {
				t.Fatalf("interaction_required without its projection: %+v", asked.Data)
			}
			var in struct {
				InteractionID string `json:"interaction_id"`
				Kind          string `json:"kind"`
				Questions     []struct {
					QuestionID   string `json:"question_id"`
					Prompt       string `json:"prompt"`
					ResponseKind string `json:"response_kind"`
					Options      []struct {
						OptionID string `json:"option_id"`
						Label    string `json:"label"`
					} `json:"options"`
				} `json:"questions"`
			}
			if code := callConv(t, "GET", d.url+"/v1/turns/"+sq.TurnID+"/interaction", host.Token, "", "chat-b", &in); code != 200 || len(in.Questions) != 1 ||
				in.Questions[0].Prompt != fakemodel.Questions[0].Question || in.Questions[0].ResponseKind != "single_select" {
				t.Fatalf("interaction: %d %+v", code, in)
			}
			blue := ""
			for _, o := range in.Questions[0].Options {
				if o.Label == "Blue" {
					blue = o.OptionID
				}
				if o.OptionID == o.Label {
					t.Fatalf("an option id is its label: %+v", o)
				}
			}
			answer := `{"interaction_id":"` + in.InteractionID + `","answers":[{"question_id":"` + in.Questions[0].QuestionID + `","response_kind":"single_select","selected_option_ids":["` + blue + `"]}]}`
			var ia sendAnswer
			if code := callConv(t, "POST", d.url+"/v1/turns/"+sq.TurnID+"/interaction", host.Token, answer, "chat-b", &ia); code != 200 || ia.Outcome != "done" {
				t.Fatalf("answer: %d %+v", code, ia)
			}
			got := e.WaitModelRequest("the answer reaches the model", agenttest.TurnTimeout, func(r fakemodel.Request) bool {
				return len(r.ToolResults) > 0 && r.UserText == ask
			})
			if joined := strings.Join(got.ToolResults, "\n"); !strings.Contains(joined, "Blue") || strings.Contains(joined, "Red") {
				t.Fatalf("the model got %q, want Blue alone", got.ToolResults)
			}
			rec.waitTurn(t, sq.TurnID, "turn.completed", 60*time.Second)
			if code := callConv(t, "POST", d.url+"/v1/turns/"+sq.TurnID+"/interaction", host.Token, answer, "chat-b", &ia); code != 409 {
				t.Fatalf("a second answer: %d %+v", code, ia)
			}
			e.WaitIdle(agenttest.TurnTimeout)
			e.DefaultMode()

			// The host's exact-command auto-approval holds for backend
			// Turns: the daemon names the command whole; once per request;
			// anything but exactly the rule is the host's to answer.
			policy := d.url + "/v1/hosts/" + host.HostID + "/approval-policy"
			if code := call(t, "PUT", policy, host.Token, `{"rules":[{"argv":["touch","notes.txt"]}]}`, nil); code != 200 {
				t.Fatalf("set the policy: %d", code)
			}
			count := func(id, typ string) int { return rec.count(t, id, typ) }
			sendBackend := func(req string) string {
				t.Helper()
				e.WaitIdle(agenttest.TurnTimeout)
				findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
				var s sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"`+req+`"}`, "chat-b", &s); code != 202 {
					t.Fatalf("send %q: %d %+v", req, code, s)
				}
				return s.TurnID
			}
			for round := 1; round <= 2; round++ {
				os.Remove(filepath.Join(e.ProjectDir, "notes.txt"))
				id := sendBackend(`[[akk:bash cmd=\"touch notes.txt\"]] make the notes file, round ` + fmt.Sprint(round))
				auto := rec.waitTurn(t, id, "turn.approval_auto_approved", 60*time.Second)
				if ex, _ := auto.Data["command_excerpt"].(string); ex != "touch notes.txt" {
					t.Fatalf("auto-approval data %+v", auto.Data)
				}
				rec.waitTurn(t, id, "turn.completed", 60*time.Second)
				if count(id, "turn.approval_auto_approved") != 1 || count(id, "turn.approval_required") != 0 {
					types, _ := rec.forTurn(t, id)
					t.Fatalf("round %d webhooks %v", round, types)
				}
				if _, err := os.Stat(filepath.Join(e.ProjectDir, "notes.txt")); err != nil {
					t.Fatalf("the approved command did not run: %v", err)
				}
			}
			for _, cmd := range []string{"touch notes.txt; rm x", "touch notes.txt > f"} {
				id := sendBackend(`[[akk:bash cmd=\"` + cmd + `\"]] try it`)
				rec.waitTurn(t, id, "turn.approval_required", 60*time.Second)
				var st struct {
					State string `json:"state"`
				}
				if callConv(t, "GET", d.url+"/v1/turns/"+id, host.Token, "", "chat-b", &st); st.State != "awaiting_approval" || count(id, "turn.approval_auto_approved") != 0 {
					t.Fatalf("%q: %+v", cmd, st)
				}
				var res sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns/"+id+"/approval", host.Token, `{"decision":"reject"}`, "chat-b", &res); code != 200 {
					t.Fatalf("reject %q: %d %+v", cmd, code, res)
				}
				rec.waitTurn(t, id, "turn.completed", 60*time.Second)
			}
			if _, err := os.Stat(filepath.Join(e.ProjectDir, "f")); err == nil {
				t.Fatal("a command outside the rule ran")
			}
			if code := call(t, "PUT", policy, host.Token, `{"rules":[]}`, nil); code != 200 {
				t.Fatalf("clear the policy: %d", code)
			}

			// A slow turn: a second Send is refused; a cancel interrupts it.
			// sendSlow sends a slow task once the thread is idle again and
			// waits until the model works on it.
			sendSlow := func(what string, secs int) sendAnswer {
				t.Helper()
				e.WaitIdle(agenttest.TurnTimeout)
				findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
				slow := fmt.Sprintf("[[akk:slow secs=%d]] %s for %s", secs, what, a.Name())
				var s sendAnswer
				if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"`+slow+`"}`, &s); code != 202 {
					t.Fatalf("slow send: %d %+v", code, s)
				}
				rec.waitTurn(t, s.TurnID, "turn.accepted", 60*time.Second)
				e.WaitModelRequest(what, agenttest.TurnTimeout, func(r fakemodel.Request) bool { return r.UserText == slow })
				return s
			}
			s2 := sendSlow("to be cancelled through the backend", 30)
			var p sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"another"}`, &p); code != 409 {
				t.Fatalf("send to a busy thread: %d %+v", code, p)
			}
			var c sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns/"+s2.TurnID+"/cancel", host.Token, "", &c); code != 200 || c.Outcome != "done" {
				t.Fatalf("cancel: %d %+v", code, c)
			}
			rec.waitTurn(t, s2.TurnID, "turn.cancelled", 60*time.Second)

			// The daemon killed mid-turn: stalled with a reason, never completed.
			// akkd killed mid-turn: restarted, it follows the turn on to
			// one completion; nothing is sent twice.
			s4 := sendSlow("outliving a restart of akkd", 6)
			d.kill()
			d.start()
			rec.waitTurn(t, s4.TurnID, "turn.completed", 90*time.Second)
			if types, _ := rec.forTurn(t, s4.TurnID); strings.Join(types, ",") != "turn.accepted,turn.completed" {
				t.Fatalf("webhooks across the restart: %v", types)
			}
			if n := userRequests(model, fmt.Sprintf("[[akk:slow secs=6]] outliving a restart of akkd for %s", a.Name())); n != 1 {
				t.Fatalf("the model saw the request %d times", n)
			}

			s3 := sendSlow("cut short by the daemon", 30)
			e.KillCodexDaemon()
			stalled := rec.waitTurn(t, s3.TurnID, "turn.stalled", 60*time.Second)
			if why, _ := stalled.Data["reason"].(string); !strings.Contains(why, "daemon") {
				t.Fatalf("stalled without the daemon as its reason: %+v", stalled.Data)
			}
			if types, _ := rec.forTurn(t, s3.TurnID); slices.Contains(types, "turn.completed") {
				t.Fatalf("a killed daemon's turn completed: %v", types)
			}
		})
	}
}

// TestE2ECodexBackendWithoutTerminal drives a thread whose TUI has quit
// while its daemon runs on ("Any running work continues"), on every pinned
// Codex that hands its threads to a managed daemon: with no pane left, an
// akkd that only knows the panes lists nothing of it; one told the Codex
// home (--codex-homes) lists the thread, exactly, and a Send to it
// completes with the final message and one model call, with no terminal.
func TestE2ECodexBackendWithoutTerminal(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	daemonBinary(t)
	for _, a := range daemonAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{})
			e.StartReady()
			first := "Start the thread, then quit"
			e.Submit(first)
			e.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken(first))
			e.WaitIdle(agenttest.TurnTimeout)
			rollouts := e.TranscriptPaths()
			// The person quits the TUI (Ctrl-C, again if it asks; where
			// Codex asks what becomes of a task it still counts as running,
			// "Run in background"); the pane's process ends, the daemon
			// keeps the thread.
			dead := func(string) bool {
				out, err := e.Tmux("display-message", "-p", "-t", e.Target(), "#{pane_dead}")
				return err == nil && strings.TrimSpace(out) == "1"
			}
			for i := 0; !dead(""); i++ {
				if i == 4 {
					t.Fatalf("the TUI did not quit:\n%s", e.Screen())
				}
				e.Press("C-c")
				s := e.WaitFor("the TUI gone or asking", 5*time.Second, func(s string) bool {
					return dead(s) || strings.Contains(strings.ToLower(s), "ctrl") || strings.Contains(s, "Run in background")
				})
				if !dead(s) && strings.Contains(s, "Run in background") {
					e.Choose("Run in background")
					e.WaitFor("the TUI gone", 5*time.Second, dead)
				}
			}
			rec := newReceiver(t, "")
			register := func(p *proc) hostCreds {
				var h hostCreds
				call(t, "POST", p.url+"/v1/hosts", p.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &h)
				return h
			}
			real, _ := filepath.EvalSymlinks(e.ProjectDir)
			mine := func(c backendRow) bool {
				return c.Transport == "codex_backend" && (c.Project == e.ProjectDir || c.Project == real)
			}

			// Only the panes: no pane runs this Codex any more.
			plain := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+e.SocketPath())
			h0 := register(plain)
			var list struct{ Conversations []backendRow }
			call(t, "GET", plain.url+"/v1/conversations", h0.Token, "", &list)
			for _, c := range list.Conversations {
				if mine(c) {
					t.Fatalf("a thread listed with no pane and no configured home: %+v", c)
				}
			}
			plain.kill()

			// The home configured: the thread, exactly, with no terminal.
			d := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+e.SocketPath(), "AKK_CODEX_HOMES="+e.CodexHome)
			host := register(d)
			row := findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
			thread := row.Backend.NativeThreadID
			if row.Terminal != nil || row.Agent.Version != a.Version || len(rollouts) != 1 || !strings.Contains(filepath.Base(rollouts[0]), thread) {
				t.Fatalf("row %+v for the thread of %v", row, rollouts)
			}
			text := "Work on without a terminal for " + a.Name()
			var s sendAnswer
			if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"`+text+`"}`, "chat-n", &s); code != 202 ||
				s.DeliveryPath != "codex_backend" {
				t.Fatalf("send: %d %+v", code, s)
			}
			done := rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
			if got, want := done.Data["final_message"], fakemodel.DefaultReply(text); got != want {
				t.Fatalf("final message %q, want %q", got, want)
			}
			if n := userRequests(e.Model, text); n != 1 {
				t.Fatalf("the model saw the request %d times", n)
			}
		})
	}
}

// TestE2ECodexBackendProject drives the backend conversation of a project
// the operator named (--codex-projects), with no TUI ever started, on every
// pinned Codex with a managed app-server daemon: akkd starts the home's
// daemon with the pinned codex and a thread in the project; the list shows
// it, exactly, with no terminal; a Send completes with the final message
// and one model call; a turn another client of the daemon starts is
// watched exactly to its final message, across an akkd restart; an akkd restart lists the same thread and starts no
// second one; the daemon killed and started again by akkd loads that same
// thread again, and a second, longer Send to it completes while akkd
// checks the project and the test lists.
func TestE2ECodexBackendProject(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	daemonBinary(t)
	for _, a := range daemonAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			// The daemon unloads a thread nobody listens to after 1 s.
			e := agenttest.New(t, a, agenttest.Options{ThreadUnloadDelay: 1})
			rec := newReceiver(t, "")
			state := t.TempDir()
			env := []string{"AKK_TMUX_SOCKETS=" + e.SocketPath(), "AKK_CODEX_HOMES=" + e.CodexHome, "AKK_CODEX_PROJECTS=" + e.ProjectDir,
				"AKK_CODEX_BIN=" + filepath.Join(a.Dir, "node_modules", ".bin", "codex"),
				// The daemon akkd starts inherits its environment: the
				// model's key, and a temp folder outside the Codex home.
				agenttest.FakeOpenAIKeyEnv + "=" + e.APIKey(), "TMPDIR=" + filepath.Join(e.Home, "tmp")}
			d := startProc(t, state, env...)
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			row := findBackendRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, backendSend)
			thread := row.Backend.NativeThreadID
			if row.Terminal != nil || row.Agent.Version != a.Version || thread == "" || row.Title != "New thread in "+filepath.Base(e.ProjectDir) {
				t.Fatalf("project row %+v", row)
			}
			if _, err := e.Tmux("list-sessions"); err == nil {
				t.Fatal("a tmux server runs: the project needs no terminal")
			}
			// A new project's thread (no turn yet, so not recorded: the
			// daemon could not load it again) stays loaded past the
			// daemon's unload delay: AKK listens to it. (It was unloaded,
			// and another thread started in its place.)
			{
				// Proof the delay passed: a thread the test starts on a
				// connection it then closes is unloaded.
				ctx := context.Background()
				sock := codexappserver.SocketPath(e.CodexHome)
				c1, err := codexappserver.Dial(ctx, sock, "test")
				if err != nil {
					t.Fatal(err)
				}
				probe, err := c1.StartThread(ctx, t.TempDir())
				c1.Close()
				if err != nil {
					t.Fatal(err)
				}
				c, err := codexappserver.Dial(ctx, sock, "test")
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				var ids []string
				for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
					if ids, err = c.LoadedThreads(ctx); err != nil {
						t.Fatal(err)
					}
					if !slices.Contains(ids, probe.ID) {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("the daemon never unloaded a thread nobody listens to")
					}
				}
				if !slices.Contains(ids, thread) {
					t.Fatalf("the project's thread %s was unloaded: loaded %v", thread, ids)
				}
				if again := findBackendRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, backendSend); again.ConversationID != row.ConversationID {
					t.Fatalf("the project's conversation changed from %s to %s", row.ConversationID, again.ConversationID)
				}
			}
			// send sends text and waits for its completion with want as the
			// final message (any, when empty) after one model call.
			send := func(row backendRow, text, want, conv string) {
				t.Helper()
				var s sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"`+text+`"}`, conv, &s); code != 202 ||
					s.DeliveryPath != "codex_backend" {
					t.Fatalf("send: %d %+v", code, s)
				}
				// A controller lists while the turn runs.
				stop, listed := make(chan struct{}), make(chan int, 1)
				var once sync.Once
				end := func() { once.Do(func() { close(stop) }) }
				defer end()
				go func() {
					n := 0
					defer func() { listed <- n }()
					for {
						select {
						case <-stop:
							return
						case <-time.After(300 * time.Millisecond):
						}
						req, _ := http.NewRequest("GET", d.url+"/v1/conversations", nil)
						req.Header.Set("Authorization", "Bearer "+host.Token)
						if resp, err := http.DefaultClient.Do(req); err == nil {
							resp.Body.Close()
							n++
						}
					}
				}()
				done := rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
				end()
				t.Logf("%d listings while the turn ran", <-listed)
				if got, _ := done.Data["final_message"].(string); got == "" || (want != "" && got != want) {
					t.Fatalf("final message %q, want %q", got, want)
				}
				if n := userRequests(e.Model, text); n != 1 {
					t.Fatalf("the model saw the request %d times", n)
				}
			}
			text := "Work in the project for " + a.Name()
			send(row, text, fakemodel.DefaultReply(text), "chat-p1")

			// The thread's models, from its daemon with no input: the
			// configured model in effect, its efforts, and no authority
			// for a set-model.
			endpoint := "cx_" + thread
			models := backendModels(t, d.url, host.Token, endpoint)
			if models.Effective.Model != agenttest.CodexModel || models.Scope != "" {
				t.Fatalf("models %+v", models)
			}
			var other string // an effort the thread is not on
			for _, m := range models.Models {
				if m.Model != agenttest.CodexModel {
					continue
				}
				if !slices.Contains(m.ReasoningEfforts, models.Effective.ReasoningEffort) {
					t.Fatalf("the effort in effect %q is not among %v", models.Effective.ReasoningEffort, m.ReasoningEfforts)
				}
				for _, e := range m.ReasoningEfforts {
					if e != models.Effective.ReasoningEffort && e != "none" && e != "minimal" {
						other = e
					}
				}
			}
			if other == "" {
				t.Fatalf("no other effort in the catalogue %+v", models)
			}
			t.Logf("models: %d, in effect %s/%s; another client will choose %s", len(models.Models), models.Effective.Model, models.Effective.ReasoningEffort, other)
			for _, r := range e.Model.Requests() {
				if strings.TrimSpace(r.UserText) == text && r.Effort != models.Effective.ReasoningEffort {
					t.Fatalf("the first turn's model call asked for effort %q, the thread says %q", r.Effort, models.Effective.ReasoningEffort)
				}
			}
			if !slices.ContainsFunc(row.AvailableActions, func(a map[string]any) bool { return a["action"] == "model_options" }) {
				t.Fatalf("the row offers no model_options: %v", row.AvailableActions)
			}
			var bad watchAnswer
			if code := call(t, "GET", d.url+"/v1/terminals/cx_00000000-0000-0000-0000-000000000000/models", host.Token, "", &bad); code != 404 || bad.Code != "terminal_not_found" {
				t.Fatalf("models of an unknown thread: %d %+v", code, bad)
			}
			if code := call(t, "PUT", d.url+"/v1/terminals/"+endpoint+"/model", host.Token, `{"model":"`+agenttest.CodexModel+`","reasoning_effort":"`+other+`"}`, &bad); code != 400 || bad.Code != "invalid_request" {
				t.Fatalf("set a backend thread's model: %d %+v", code, bad)
			}
			// A Send chooses the effort for its turn and the thread's later
			// ones; one the catalogue does not list, or given for a pane,
			// is refused with nothing sent.
			refused := "Not sent for " + a.Name()
			for _, body := range []string{
				`{"conversation_id":"` + row.ConversationID + `","request":"` + refused + `","reasoning_effort":"bogus"}`,
				`{"conversation_id":"` + row.ConversationID + `","request":"` + refused + `","model":"no-such-model"}`,
				`{"terminal_id":"term_x","request":"` + refused + `","reasoning_effort":"` + other + `"}`,
			} {
				if code := call(t, "POST", d.url+"/v1/turns", host.Token, body, &bad); code != 422 || bad.Code != "validation_failed" {
					t.Fatalf("send %s: %d %+v", body, code, bad)
				}
			}
			chosen := "" // the effort this Send chooses: neither in effect nor the other client's
			for _, m := range models.Models {
				for _, e := range m.ReasoningEfforts {
					if m.Model == agenttest.CodexModel && chosen == "" && e != models.Effective.ReasoningEffort && e != other && e != "none" && e != "minimal" {
						chosen = e
					}
				}
			}
			effortText := "Work with more thought for " + a.Name()
			var es sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"`+effortText+`","reasoning_effort":"`+chosen+`"}`, &es); code != 202 {
				t.Fatalf("send with effort %s: %d %+v", chosen, code, es)
			}
			rec.waitTurn(t, es.TurnID, "turn.completed", 90*time.Second)
			var efforts []string
			for _, r := range e.Model.Requests() {
				if strings.TrimSpace(r.UserText) == effortText && !r.Aux {
					efforts = append(efforts, r.Effort)
				}
				if strings.Contains(r.UserText, refused) {
					t.Fatalf("a refused send reached the model: %+v", r)
				}
			}
			if len(efforts) != 1 || efforts[0] != chosen {
				t.Fatalf("the model call's efforts %v, want [%s]", efforts, chosen)
			}
			if m := backendModels(t, d.url, host.Token, endpoint); m.Effective.ReasoningEffort != chosen {
				t.Fatalf("after a send with %s the thread's effort is %+v", chosen, m.Effective)
			}

			// Another client of the daemon (an editor, say) starts a turn:
			// the row offers a Watch, exact through the daemon, that ends
			// with the turn's final message. An idle thread has none.
			var nw watchAnswer
			if code := call(t, "POST", d.url+"/v1/watches", host.Token, `{"terminal_id":"`+endpoint+`"}`, &nw); code != 409 || nw.Code != "nothing_to_watch" {
				t.Fatalf("watch an idle thread: %d %+v", code, nw)
			}
			otherText := "Started by another client for " + a.Name() + " " + fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "6")
			func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				c, err := codexappserver.Dial(ctx, codexappserver.SocketPath(e.CodexHome), "test")
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				// Its turn changes the thread's effort for this and later turns.
				if _, err := c.StartTurn(ctx, thread, otherText, "", "", other); err != nil {
					t.Fatal(err)
				}
			}()
			findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c backendRow) bool {
				return c.Backend.ThreadStatus == "active" && slices.ContainsFunc(c.AvailableActions, func(a map[string]any) bool { return a["action"] == "watch" })
			})
			var w watchAnswer
			if code := callConv(t, "POST", d.url+"/v1/watches", host.Token, `{"terminal_id":"`+endpoint+`"}`, "chat-w", &w); code != 201 ||
				w.WatchMode != "exact_task" || w.Confidence != "exact" || w.State != "active" {
				t.Fatalf("watch: %d %+v", code, w)
			}
			// akkd killed while it watches: after its restart the Watch
			// follows the same turn on (or finds it ended) and completes.
			d.kill()
			d.start()
			watched := rec.waitTurn(t, w.WatchID, "watch.completed", 90*time.Second)
			// The whole reply: a completion announced while the answer still
			// streamed would carry only its first words ("slow-1").
			if fm, _ := watched.Data["final_message"].(string); !strings.Contains(fm, "slow-6") || !strings.HasSuffix(strings.TrimSpace(fm), "done.") || watched.Data["confidence"] != "exact" {
				t.Fatalf("watch completion %+v", watched.Data)
			}
			if n := userRequests(e.Model, otherText); n != 1 {
				t.Fatalf("the model saw the other client's request %d times", n)
			}
			// The models read again: the daemon's effort, changed by the
			// other client, not one AKK remembers.
			if m := backendModels(t, d.url, host.Token, endpoint); m.Effective.Model != agenttest.CodexModel || m.Effective.ReasoningEffort != other {
				t.Fatalf("models after the other client chose %s: %+v", other, m.Effective)
			}
			// A Send chooses another model of the catalogue, with one of
			// its efforts: the model call uses both, and the thread keeps them.
			var model2, effort2 string
			for _, m := range models.Models {
				if m.Model != agenttest.CodexModel && model2 == "" && len(m.ReasoningEfforts) > 0 {
					model2, effort2 = m.Model, m.ReasoningEfforts[0]
				}
			}
			if model2 == "" {
				t.Fatalf("no other model in the catalogue %+v", models)
			}
			modelText := "Work on another model for " + a.Name()
			var ms sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"`+modelText+`","model":"`+model2+`","reasoning_effort":"`+effort2+`"}`, &ms); code != 202 {
				var list struct{ Conversations []backendRow }
				call(t, "GET", d.url+"/v1/conversations", host.Token, "", &list)
				t.Fatalf("send with model %s: %d %+v (rows: %+v)", model2, code, ms, list.Conversations)
			}
			rec.waitTurn(t, ms.TurnID, "turn.completed", 90*time.Second)
			for _, r := range e.Model.Requests() {
				if strings.TrimSpace(r.UserText) == modelText && !r.Aux && (r.Model != model2 || r.Effort != effort2) {
					t.Fatalf("the model call ran %s/%s, want %s/%s", r.Model, r.Effort, model2, effort2)
				}
			}
			if m := backendModels(t, d.url, host.Token, endpoint); m.Effective.Model != model2 || m.Effective.ReasoningEffort != effort2 {
				t.Fatalf("after a send with %s/%s the thread is on %+v", model2, effort2, m.Effective)
			}
			t.Logf("sent with effort %s, then with %s/%s", chosen, model2, effort2)

			// akkd restarts: the same thread, and still only one of AKK's.
			d.kill()
			d.start()
			again := findBackendRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, backendSend)
			if again.Backend.NativeThreadID != thread {
				t.Fatalf("after a restart the project's thread is %s, was %s", again.Backend.NativeThreadID, thread)
			}
			// The new akkd listens to the thread again (under the daemon's
			// 1 s unload delay a slow restart may see it unloaded first and
			// load it again): AKK's loaded threads come to be just it.
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
				ids := akkThreads(t, e.CodexHome)
				if len(ids) == 1 && ids[0] == thread {
					break
				}
				if len(ids) > 1 || (len(ids) == 1 && ids[0] != thread) || time.Now().After(deadline) {
					t.Fatalf("AKK's loaded threads after a restart: %v, want only %s", ids, thread)
				}
			}

			// The daemon dies: akkd starts it again and loads the thread again.
			e.KillCodexDaemon()
			back := findBackendRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, func(c backendRow) bool {
				return backendSend(c) && c.Backend.NativeThreadID == thread
			})
			if ids := akkThreads(t, e.CodexHome); len(ids) != 1 || ids[0] != thread {
				t.Fatalf("AKK's loaded threads after the daemon's restart: %v, want only %s", ids, thread)
			}
			// A longer turn, with akkd's checks and this test's listings
			// beside it: it completes, never interrupted.
			send(back, "Go on after the daemon restarted for "+a.Name()+" "+fakemodel.Marker(fakemodel.ScenarioSlow, "secs", "12"), "", "chat-p2")
		})
	}
}

// akkThreads are the loaded threads AKK started in a Codex home's daemon.
func akkThreads(t *testing.T, home string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := codexappserver.Dial(ctx, codexappserver.SocketPath(home), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ids, err := c.LoadedThreads(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, id := range ids {
		if th, err := c.ReadThread(ctx, id, false); err == nil && th.Originator == codexappserver.ClientName && !th.Ephemeral {
			out = append(out, id)
		}
	}
	return out
}

// backendModels reads a backend row's model catalogue.
func backendModels(t testing.TB, url, token, endpoint string) modelsResult {
	t.Helper()
	var m modelsResult
	if code := call(t, "GET", url+"/v1/terminals/"+endpoint+"/models", token, "", &m); code != 200 || m.Outcome != "done" || m.Effective == nil {
		t.Fatalf("models of %s: %d %+v", endpoint, code, m)
	}
	return m
}
