package main

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"akk/api"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// validActions proves every advertised action callable as given: its
// method, path and prefilled body, with only the user content its input
// names added, pass the contract's request validation.
func validActions(t testing.TB, actions []map[string]any) {
	t.Helper()
	for _, a := range actions {
		method, _ := a["method"].(string)
		path, _ := a["path"].(string)
		var body map[string]any
		if b, ok := a["body"].(map[string]any); ok {
			body = map[string]any{}
			for k, v := range b {
				body[k] = v
			}
		}
		if in, ok := a["input"].([]any); ok {
			if body == nil {
				t.Errorf("action %v names input but has no body", a)
				continue
			}
			for _, f := range in {
				switch f {
				case "request":
					body["request"] = "a task"
				case "model":
					body["model"] = "default"
				case "reasoning_effort":
					body["reasoning_effort"] = "high"
				case "mode":
					body["mode"] = "plan"
				case "native_thread_id":
					body["native_thread_id"] = "01234567-89ab-cdef-0123-456789abcdef"
				case "answers":
					body["answers"] = []map[string]any{{"question_id": "q", "response_kind": "single_select", "selected_option_ids": []string{"o"}}}
				}
			}
		}
		var arg any
		if body != nil {
			arg = body
		}
		if err := api.ValidateCall(method, path, arg); err != nil {
			t.Errorf("advertised action %v fails the contract: %v", a, err)
		}
	}
}

type turnStatus struct {
	State        string `json:"state"`
	DeliveryPath string `json:"delivery_path"`
	WatchID      string `json:"watch_id"`
	Progress     struct {
		State        string  `json:"state"`
		LatestText   string  `json:"latest_text"`
		Truncated    bool    `json:"truncated"`
		NativeTurnID string  `json:"native_turn_id"`
		ReadAt       string  `json:"read_at"`
		LatestItemAt *string `json:"latest_item_at"`
		Actions      []struct {
			Type, Status string
		} `json:"actions"`
	} `json:"progress"`
}

// TestE2ESendPaths drives every pinned agent version through the
// user-explicit send (a draft a person left is stashed or cleared once),
// cancel then send, the Watch every Send returns, the progress object, and
// a Send whose Watch could not be stored.
func TestE2ESendPaths(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	agents := agenttest.RequireAgents(t)
	bin := failpointBinary(t)
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			// A world's pane, driven by an akkd of the test's own (a failpoint
			// build): the world's akkd only lists it meanwhile.
			e := useWorld(t, a, worldSpec{}).e
			rec := newReceiver(t, "")
			d := &proc{t: t, bin: bin, dir: t.TempDir(), env: []string{"AKK_TMUX_SOCKETS=" + e.SocketPath()}}
			d.start()
			t.Cleanup(d.kill)
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			row := findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend)
			term := row.Terminal.TerminalID

			// 1. A draft a person left: the managed path refuses it, the
			// user-explicit send clears it once and the Turn completes.
			draft := "a draft the person typed"
			e.Type(draft)
			e.WaitForText(10*time.Second, draft)
			findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, func(c conversationRow) bool {
				return !c.Terminal.ComposerEmpty && hasSend(c)
			})
			text := "Say hello over a draft for " + a.Name()
			var s sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+text+`"}`, &s); code != 202 ||
				s.Outcome != "done" || s.DeliveryPath != "terminal_user_explicit" || s.WatchID == "" {
				t.Fatalf("send over a draft: %d %+v", code, s)
			}
			done := rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
			if got := done.Data["final_message"]; got != fakemodel.DefaultReply(text) {
				t.Fatalf("final message %q", got)
			}
			var w struct {
				State, FinalMessage, WatchMode, TurnID string
			}
			var wj map[string]any
			call(t, "GET", d.url+"/v1/watches/"+s.WatchID, host.Token, "", &wj)
			w.State, _ = wj["state"].(string)
			w.FinalMessage, _ = wj["final_message"].(string)
			w.WatchMode, _ = wj["watch_mode"].(string)
			w.TurnID, _ = wj["turn_id"].(string)
			if w.State != "completed" || w.FinalMessage != fakemodel.DefaultReply(text) || w.WatchMode != "managed_turn" || w.TurnID != s.TurnID {
				t.Fatalf("the Send's watch: %+v", wj)
			}
			// The person's draft is not lost: Claude Code puts its stash
			// back after the submit; Codex's Ctrl+Y yanks back what Ctrl+U
			// killed.
			if a.Kind == agenttest.KindCodex {
				e.Press("C-y")
			}
			e.WaitForText(20*time.Second, draft)
			e.Press("C-u")
			e.WaitFor("the draft cleared again", 10*time.Second, func(sc string) bool { return !strings.Contains(sc, draft) })
			findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, func(c conversationRow) bool { return c.Terminal.ComposerEmpty && hasSend(c) })

			// 2. A long answer: the progress body is cut to 800 code points.
			long := strings.Repeat("abcdefghij", 80) + "k"
			var l sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"Answer long [[akk:reply text=`+long+`]]"}`, &l); code != 202 ||
				l.DeliveryPath != "managed" || l.WatchID == "" {
				t.Fatalf("long send: %d %+v", code, l)
			}
			rec.waitTurn(t, l.TurnID, "turn.completed", 90*time.Second)
			var ls turnStatus
			call(t, "GET", d.url+"/v1/turns/"+l.TurnID, host.Token, "", &ls)
			if n := utf8.RuneCountInString(ls.Progress.LatestText); n != 800 || !ls.Progress.Truncated || ls.Progress.State != "ok" ||
				!strings.HasPrefix(long, ls.Progress.LatestText) || ls.WatchID != l.WatchID || ls.DeliveryPath != "managed" {
				t.Fatalf("long progress: %d code points, %+v", n, ls)
			}
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)

			// 3. A working Turn shows its progress (a step's commentary and
			// its shell action).
			steps := "[[akk:steps n=1 secs=8]] a step then a slow answer for " + a.Name()
			var st sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+steps+`"}`, &st); code != 202 {
				t.Fatalf("steps send: %d %+v", code, st)
			}
			rec.waitTurn(t, st.TurnID, "turn.accepted", 60*time.Second)
			var ws turnStatus
			deadline := time.Now().Add(60 * time.Second)
			for {
				call(t, "GET", d.url+"/v1/turns/"+st.TurnID, host.Token, "", &ws)
				if ws.Progress.State == "ok" && ws.Progress.LatestText != "" && len(ws.Progress.Actions) > 0 && ws.Progress.Actions[0].Status == "completed" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no progress while working: %+v", ws)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if ws.State != "working" || ws.Progress.ReadAt == "" || ws.Progress.LatestItemAt == nil || *ws.Progress.LatestItemAt == ws.Progress.ReadAt ||
				ws.Progress.NativeTurnID == "" || ws.Progress.Actions[0].Type == "" || strings.Contains(ws.Progress.LatestText, "akk-step-1") {
				latest := "<nil>"
				if ws.Progress.LatestItemAt != nil {
					latest = *ws.Progress.LatestItemAt
				}
				t.Fatalf("working progress: state %s, latest item at %s, read at %s: %+v", ws.State, latest, ws.Progress.ReadAt, ws)
			}
			t.Logf("working progress: %+v", ws.Progress)
			rec.waitTurn(t, st.TurnID, "turn.completed", 90*time.Second)

			// 3a. Cancel a slow task, send again: the second Turn completes.
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			slow := "[[akk:slow secs=30]] to be cancelled for " + a.Name()
			var s2 sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+slow+`"}`, &s2); code != 202 {
				t.Fatalf("slow send: %d %+v", code, s2)
			}
			rec.waitTurn(t, s2.TurnID, "turn.accepted", 60*time.Second)
			findRow(t, d.url, host.Token, e.ProjectDir, 10*time.Second, hasAction("cancel"))
			var c sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns/"+s2.TurnID+"/cancel", host.Token, "", &c); code != 200 || c.Outcome != "done" {
				t.Fatalf("cancel: %d %+v", code, c)
			}
			rec.waitTurn(t, s2.TurnID, "turn.cancelled", 60*time.Second)
			after := "Say hello after a cancel for " + a.Name()
			var s3 sendAnswer
			var code int
			// The pane may take a moment to draw its composer again.
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			if code = call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+after+`"}`, &s3); code != 202 || s3.Outcome != "done" {
				t.Fatalf("send after cancel: %d %+v", code, s3)
			}
			rec.waitTurn(t, s3.TurnID, "turn.completed", 90*time.Second)
			t.Logf("send after cancel took the %s path", s3.DeliveryPath)

			// 3b. Cancelled before any answer: Claude Code puts the request
			// back in its composer; the next Send stashes it and completes.
			quiet := "[[akk:slow secs=30 lead=false]] cancelled early for " + a.Name()
			var s5 sendAnswer
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+quiet+`"}`, &s5); code != 202 {
				t.Fatalf("quiet send: %d %+v", code, s5)
			}
			rec.waitTurn(t, s5.TurnID, "turn.accepted", 60*time.Second)
			findRow(t, d.url, host.Token, e.ProjectDir, 10*time.Second, hasAction("cancel"))
			if code := call(t, "POST", d.url+"/v1/turns/"+s5.TurnID+"/cancel", host.Token, "", &c); code != 200 || c.Outcome != "done" {
				t.Fatalf("cancel: %d %+v", code, c)
			}
			rec.waitTurn(t, s5.TurnID, "turn.cancelled", 60*time.Second)
			before := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			again := "Say hello after an early cancel for " + a.Name()
			var s6 sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+again+`"}`, &s6); code != 202 || s6.Outcome != "done" {
				t.Fatalf("send after an early cancel: %d %+v", code, s6)
			}
			if !before.Terminal.ComposerEmpty && s6.DeliveryPath != "terminal_user_explicit" {
				t.Fatalf("the composer held text but the send took the %s path", s6.DeliveryPath)
			}
			rec.waitTurn(t, s6.TurnID, "turn.completed", 90*time.Second)
			t.Logf("send after an early cancel took the %s path (composer empty before: %v)", s6.DeliveryPath, before.Terminal.ComposerEmpty)
			if s6.DeliveryPath == "terminal_user_explicit" && a.Kind == agenttest.KindClaude {
				// The interrupted request is the person's to restore: it is back.
				e.WaitForText(20*time.Second, "cancelled early for")
				// The person clears it, as in 1., so the pane ends idle and
				// its world is used again (it was made anew 5 times of 13).
				e.Press("C-u")
				e.WaitFor("the restored request cleared", 10*time.Second, func(sc string) bool { return !strings.Contains(sc, "cancelled early for") })
				findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, func(c conversationRow) bool { return c.Terminal.ComposerEmpty && hasSend(c) })
			}

			// No Send's Watch called back on its own: each completion came once, from its Turn.
			for _, dl := range rec.deliveries() {
				if strings.Contains(string(dl.body), `"type":"watch.`) {
					t.Fatalf("a Send's Watch called back: %s", dl.body)
				}
			}

			// 4. Storing the Watch fails (injected): the Send stands.
			d.kill()
			d.env = append(d.env, "AKK_FAILERR=send.watch")
			d.start()
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			last := "Say hello without a watch for " + a.Name()
			var s4 sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+last+`"}`, &s4); code != 202 ||
				s4.Outcome != "done" || s4.WatchID != "" || len(s4.Warnings) == 0 {
				var st map[string]any
				call(t, "GET", d.url+"/v1/turns/"+s4.TurnID, host.Token, "", &st)
				t.Logf("screen now:\n%s", e.Capture())
				e.Press("C-l")
				time.Sleep(2 * time.Second)
				t.Logf("screen after a redraw:\n%s", e.Capture())
				t.Fatalf("send with a failing watch: %d %+v\nthe Turn: %v", code, s4, st)
			}
			rec.waitTurn(t, s4.TurnID, "turn.completed", 90*time.Second)
		})
	}
}
