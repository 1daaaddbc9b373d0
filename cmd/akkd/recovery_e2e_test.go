package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

// actionsNamed returns the advertised actions of one name.
func actionsNamed(c conversationRow, name string) []map[string]any {
	var out []map[string]any
	for _, a := range c.AvailableActions {
		if a["action"] == name {
			out = append(out, a)
		}
	}
	return out
}

// TestE2ERecovery drives the recovery routes over HTTP on every pinned
// version: a Turn left delivery_uncertain by a crash between the paste and
// Enter is recovered (nothing proven, so nothing changes) and then taken
// back by a user-explicit send that clears the unsent text once; failed
// callbacks are retried by notification_id (Turn and Watch routes; with
// several failed, AKK asks which); a Turn is closed without input while
// its task runs on, and that task is watched, renewed (refused: active),
// recovered and unwatched.
func TestE2ERecovery(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	agents := agenttest.RequireAgents(t)
	bin := failpointBinary(t)
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			// A world's pane, driven by an akkd of the test's own (a failpoint
			// build). The task left running at the end is held by the fake
			// model and released last, so the pane ends idle.
			e := useWorld(t, a, worldSpec{}).e
			rec := newReceiver(t, "")
			// A 3 s accept window only until the crashed Turn's outcome is
			// seen (it must end delivery_uncertain); the later Sends must be
			// accepted, and a loaded agent may write its record later than 3 s.
			env := []string{"AKK_TMUX_SOCKETS=" + e.SocketPath(), "AKK_WEBHOOK_RETRY_SCHEDULE=100ms"}
			c := &crashRun{t: t, e: e, rec: rec, d: &proc{t: t, bin: bin, dir: t.TempDir(), env: append(env, "AKK_FAILPOINT=input.verified", "AKK_ACCEPT_WINDOW=3s")}}
			c.d.start()
			t.Cleanup(func() { c.d.kill() })
			call(t, "POST", c.d.url+"/v1/hosts", c.d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &c.host)
			c.term = findRow(t, c.d.url, c.host.Token, e.ProjectDir, 30*time.Second, hasSend).Terminal.TerminalID
			tok, url := c.host.Token, func() string { return c.d.url }

			// 1. The daemon dies with the request verified in the composer,
			// before Enter: the Turn is delivery_uncertain and holds the pane.
			unsent := "unsent before a crash for " + a.Name()
			c.post("/v1/turns", `{"terminal_id":"`+c.term+`","request":"`+unsent+`"}`)
			select {
			case <-c.d.done:
			case <-time.After(60 * time.Second):
				t.Fatal("the daemon did not stop at input.verified")
			}
			c.d.cmd, c.d.env = nil, append(env, "AKK_ACCEPT_WINDOW=3s")
			c.d.start()
			broken := c.onlyTurn()
			rec.waitTurn(t, broken, "turn.delivery_uncertain", 60*time.Second)
			c.d.kill()
			c.d.env = env
			c.d.start()
			findRow(t, url(), tok, e.ProjectDir, 20*time.Second, func(r conversationRow) bool {
				return r.Managed.CurrentTurn != nil && r.Managed.CurrentTurn.TurnID == broken && hasAction("recover")(r) && hasSend(r)
			})
			var res sendAnswer
			if code := call(t, "POST", url()+"/v1/turns/"+broken+"/recover", tok, "", &res); code != 200 || res.Outcome != "done" || res.State != "delivery_uncertain" {
				t.Fatalf("recover: %d %+v", code, res)
			}

			// 2. The user's explicit send takes the pane back: the unsent
			// text is cleared once, the broken Turn closed.
			hello := "Say hello after a crash for " + a.Name()
			var s sendAnswer
			if code := call(t, "POST", url()+"/v1/turns", tok, `{"terminal_id":"`+c.term+`","request":"`+hello+`"}`, &s); code != 202 ||
				s.DeliveryPath != "terminal_user_explicit" || s.Outcome != "done" {
				t.Fatalf("send over the broken turn: %d %+v", code, s)
			}
			rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
			var old turnStatus
			call(t, "GET", url()+"/v1/turns/"+broken, tok, "", &old)
			if old.State != "closed" {
				t.Fatalf("the broken turn is %s", old.State)
			}
			if n := userRequests(e.Model, unsent); n != 0 {
				t.Fatalf("the unsent request reached the model %d times", n)
			}
			if a.Kind == agenttest.KindClaude {
				e.WaitForText(20*time.Second, unsent) // Claude Code's stash put it back
				e.Press("C-u")
				e.WaitFor("the restored text cleared", 10*time.Second, func(sc string) bool { return !strings.Contains(sc, unsent) })
			}
			findRow(t, url(), tok, e.ProjectDir, 20*time.Second, func(r conversationRow) bool { return r.Terminal.ComposerEmpty && hasSend(r) })

			// 3. Callbacks that failed are retried by notification_id.
			rec.mu.Lock()
			rec.failNext = 1 << 20
			rec.mu.Unlock()
			unheard := "Say hello unheard for " + a.Name()
			var u sendAnswer
			if code := call(t, "POST", url()+"/v1/turns", tok, `{"terminal_id":"`+c.term+`","request":"`+unheard+`"}`, &u); code != 202 {
				t.Fatalf("send: %d %+v", code, u)
			}
			var retries []map[string]any
			findRow(t, url(), tok, e.ProjectDir, 90*time.Second, func(r conversationRow) bool {
				retries = nil
				for _, x := range actionsNamed(r, "retry_callback") {
					if strings.Contains(x["path"].(string), u.TurnID) {
						retries = append(retries, x)
					}
				}
				return len(retries) >= 2 // accepted and completed, both failed
			})
			var p sendAnswer
			if code := call(t, "POST", url()+"/v1/turns/"+u.TurnID+"/retry-callback", tok, "{}", &p); code != 409 || p.Code != "notification_id_required" {
				t.Fatalf("retry without a notification_id: %d %+v", code, p)
			}
			rec.mu.Lock()
			rec.failNext = 0
			rec.mu.Unlock()
			first := retries[0]["body"].(map[string]any)["notification_id"].(string)
			second := retries[1]["body"].(map[string]any)["notification_id"].(string)
			if code := call(t, "POST", url()+"/v1/turns/"+u.TurnID+"/retry-callback", tok, `{"notification_id":"`+first+`"}`, nil); code != 202 {
				t.Fatalf("retry-callback: %d", code)
			}
			if code := call(t, "POST", url()+"/v1/watches/"+u.WatchID+"/retry-callback", tok, `{"notification_id":"`+second+`"}`, nil); code != 202 {
				t.Fatalf("watch retry-callback: %d", code)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				ok := 0
				for _, dl := range rec.deliveries() {
					if dl.status == 204 && strings.Contains(string(dl.body), u.TurnID) {
						ok++
					}
				}
				if ok >= 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the retried callbacks were not delivered (%d of 2)", ok)
				}
				time.Sleep(50 * time.Millisecond)
			}

			// 4. Close releases a running Turn with no input; its task is
			// then watched, and the Watch routes answer.
			hold := fmt.Sprintf("recovery-%d", time.Now().UnixNano())
			slow := "[[akk:slow secs=4 hold=" + hold + "]] released for " + a.Name()
			var sl sendAnswer
			if code := call(t, "POST", url()+"/v1/turns", tok, `{"terminal_id":"`+c.term+`","request":"`+slow+`"}`, &sl); code != 202 {
				t.Fatalf("slow send: %d %+v", code, sl)
			}
			rec.waitTurn(t, sl.TurnID, "turn.accepted", 60*time.Second)
			asked := len(e.Model.Requests())
			if code := call(t, "POST", url()+"/v1/turns/"+sl.TurnID+"/close", tok, `{"reason":"handing over"}`, &res); code != 200 || res.State != "closed" {
				t.Fatalf("close: %d %+v", code, res)
			}
			row := findRow(t, url(), tok, e.ProjectDir, 20*time.Second, hasAction("watch"))
			if strings.Contains(e.Capture(), "Interrupted") || len(e.Model.Requests()) < asked {
				t.Fatal("close touched the pane")
			}
			var w watchAnswer
			if code := call(t, "POST", url()+"/v1/watches", tok, `{"terminal_id":"`+row.Terminal.TerminalID+`"}`, &w); code != 201 {
				t.Fatalf("watch: %d %+v", code, w)
			}
			if code := call(t, "POST", url()+"/v1/watches/"+w.WatchID+"/renew", tok, "", &w); code != 409 || w.Code != "watch_state_conflict" {
				t.Fatalf("renew an active watch: %d %+v", code, w)
			}
			if code := call(t, "POST", url()+"/v1/watches/"+w.WatchID+"/recover", tok, "", &w); code != 200 {
				t.Fatalf("recover a watch: %d %+v", code, w)
			}
			var gone watchAnswer
			if code := call(t, "DELETE", url()+"/v1/watches/"+w.WatchID, tok, "", &gone); code != 200 || gone.State != "unwatched" {
				t.Fatalf("unwatch: %d %+v", code, gone)
			}
			// The task the person was handed ends, and the pane with it is
			// idle again (the lease waits for that before the world is reused).
			e.Model.Release(hold)
		})
	}
}
