package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// TestE2ECodexUnprofiled runs the Codex releases AKK has no profile for
// (scripts/agents-unprofiled.txt): the pane's row says AKK answers nothing
// from its screen; a Send over a draft in its composer is refused with
// nothing typed; its daemon's thread is a backend row with the warning of
// a protocol AKK has not checked, and through that exact channel a host
// approves and rejects permission prompts and answers a question.
func TestE2ECodexUnprofiled(t *testing.T) {
	daemonBinary(t)
	for _, a := range agenttest.RequireUnprofiled(t, agenttest.KindCodex) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{})
			e.StartReady()
			rec := newReceiver(t, "")
			d := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+e.SocketPath())
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)

			// The pane: read with a borrowed profile, so no screen channel.
			pane := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			if pane.Terminal.Channels.Permission != "none" || pane.Terminal.Channels.Question != "none" || len(pane.Warnings) == 0 {
				t.Fatalf("pane row: channels %+v warnings %v", pane.Terminal.Channels, pane.Warnings)
			}
			// A draft the person typed: the Send is refused, nothing typed.
			e.Type("my own draft")
			e.WaitForText(10*time.Second, "my own draft")
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool { return !c.Terminal.ComposerEmpty })
			before := len(e.Model.Requests())
			var p struct{ Code string }
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+pane.Terminal.TerminalID+`","request":"over the draft"}`, &p); code != 409 || p.Code != "terminal_not_idle" {
				t.Fatalf("send over a draft: %d %+v", code, p)
			}
			if s := e.Capture(); !strings.Contains(s, "my own draft") || strings.Contains(s, "over the draft") {
				t.Fatalf("the pane after the refused send:\n%s", s)
			}
			e.Press("C-u") // the person clears their own draft
			e.WaitFor("the empty composer", 10*time.Second, func(s string) bool { return !strings.Contains(s, "my own draft") })

			// The daemon's thread (its first turn writes the rollout).
			first := "Say hello to the person first"
			e.Submit(first)
			e.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken(first))
			e.WaitIdle(agenttest.TurnTimeout)
			if len(e.Model.Requests()) <= before {
				t.Fatal("the person's turn never reached the model")
			}
			row := findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
			if len(row.Warnings) == 0 || !strings.Contains(strings.Join(row.Warnings, " "), "not one AKK checked") {
				t.Fatalf("backend row of an unchecked daemon: warnings %v", row.Warnings)
			}

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
				var ap approvalStatus
				if code := callConv(t, "GET", d.url+"/v1/turns/"+sb.TurnID, host.Token, "", "chat-b", &ap); code != 200 || ap.Approval == nil ||
					ap.Approval.ManualRequired || strings.Join(ap.Approval.Decisions, ",") != "approve_once,reject" {
					t.Fatalf("status of the approval: %d %+v", code, ap.Approval)
				}
				var res sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns/"+sb.TurnID+"/approval", host.Token, `{"decision":"`+decision+`"}`, "chat-b", &res); code != 200 || res.Outcome != "done" {
					t.Fatalf("%s: %d %+v", decision, code, res)
				}
				rec.waitTurn(t, sb.TurnID, "turn.completed", 60*time.Second)
				if _, err := os.Stat(probe); (decision == "approve_once") != (err == nil) {
					t.Fatalf("%s: the probe ran: %v", decision, err == nil)
				}
			}

			// A question through the daemon.
			e.WaitIdle(agenttest.TurnTimeout)
			e.PlanMode()
			findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
			ask := "Ask me first through the backend " + fakemodel.Marker(fakemodel.ScenarioAsk)
			var sq sendAnswer
			if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"conversation_id":"`+row.ConversationID+`","request":"`+ask+`"}`, "chat-b", &sq); code != 202 {
				t.Fatalf("ask send: %d %+v", code, sq)
			}
			rec.waitTurn(t, sq.TurnID, "turn.interaction_required", 60*time.Second)
			var in struct {
				InteractionID string `json:"interaction_id"`
				Questions     []struct {
					QuestionID string `json:"question_id"`
					Options    []struct {
						OptionID string `json:"option_id"`
						Label    string `json:"label"`
					} `json:"options"`
				} `json:"questions"`
			}
			if code := callConv(t, "GET", d.url+"/v1/turns/"+sq.TurnID+"/interaction", host.Token, "", "chat-b", &in); code != 200 || len(in.Questions) != 1 {
				t.Fatalf("interaction: %d %+v", code, in)
			}
			blue := ""
			for _, o := range in.Questions[0].Options {
				if o.Label == "Blue" {
					blue = o.OptionID
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
		})
	}
}
