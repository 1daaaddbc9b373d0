package main

import (
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

type threadList struct {
	TerminalID string `json:"terminal_id"`
	SnapshotID string `json:"snapshot_id"`
	ExpiresAt  string `json:"expires_at"`
	Threads    []struct {
		NativeThreadID string `json:"native_thread_id"`
		Title          string `json:"title"`
		UpdatedAt      string `json:"updated_at"`
		Current        bool   `json:"current"`
		Number         int    `json:"number"`
		ShortID        string `json:"short_id"`
	} `json:"threads"`
}

// TestE2EThreads lists a pane's native threads on every pinned version:
// a person's task in one run of the agent, then the agent started anew in
// the same project and a Turn sent through AKK; the listing (the row's
// `threads` action) shows both threads from the agent's own records,
// newest first with its first request, the one on screen current when the
// pane's identity is proven, and no keystroke reached the pane for it.
func TestE2EThreads(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	agents := agenttest.RequireAgents(t)
	daemonBinary(t)
	for _, a := range agents {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{})
			e.StartReady()
			first := "the first thread's request for " + a.Name()
			e.Submit(first)
			e.WaitTurnCompleted(fakemodel.DefaultReply(first), 90*time.Second)
			e.Respawn()

			rec := newReceiver(t, "")
			d := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+e.SocketPath())
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			row := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			second := "the second thread's request for " + a.Name()
			var s sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+row.Terminal.TerminalID+`","request":"`+second+`"}`, &s); code != 202 {
				t.Fatalf("send: %d %+v", code, s)
			}
			rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)

			row = findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			path := ""
			for _, act := range row.AvailableActions {
				if act["action"] == "threads" {
					path, _ = act["path"].(string)
				}
			}
			if path != "/v1/terminals/"+row.Terminal.TerminalID+"/threads" {
				t.Fatalf("the row offers threads at %q: %v", path, row.AvailableActions)
			}
			typed := func() int { // requests with a person's or AKK's text (not titles or probes)
				n := 0
				for _, r := range e.Model.Requests() {
					if !r.Aux {
						n++
					}
				}
				return n
			}
			before := typed()
			var l threadList
			if code := call(t, "GET", d.url+path, host.Token, "", &l); code != 200 {
				t.Fatalf("threads: %d %+v", code, l)
			}
			if len(l.Threads) != 2 {
				t.Fatalf("want 2 threads, got %+v", l.Threads)
			}
			newest, oldest := l.Threads[0], l.Threads[1]
			if newest.Title != second || oldest.Title != first || newest.Number != 1 || oldest.Number != 2 {
				t.Fatalf("threads %+v", l.Threads)
			}
			if newest.NativeThreadID == oldest.NativeThreadID || len(newest.ShortID) < 8 ||
				!strings.HasPrefix(strings.ReplaceAll(newest.NativeThreadID, "-", ""), newest.ShortID) || l.SnapshotID == "" {
				t.Fatalf("ids %+v", l)
			}
			if oldest.Current {
				t.Fatalf("the old thread is marked current: %+v", l.Threads)
			}
			if row.Terminal.NativeIdentityState == "resolved" && !newest.Current {
				t.Fatalf("the pane's proven thread is not current: %+v (row %+v)", l.Threads, row.Terminal)
			}
			// Listing read records only: the model heard nothing more, and
			// the pane is idle with an empty composer.
			if n := typed(); n != before {
				t.Fatalf("listing threads reached the model (%d → %d requests)", before, n)
			}
			findRow(t, d.url, host.Token, e.ProjectDir, 10*time.Second, func(c conversationRow) bool {
				return c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty
			})
			// Bad ids are refused with a problem.
			if code := call(t, "GET", d.url+"/v1/terminals/term_nope/threads", host.Token, "", nil); code != 404 {
				t.Fatalf("an unknown terminal: %d", code)
			}
			if code := call(t, "GET", d.url+"/v1/terminals/not-a-terminal/threads", host.Token, "", nil); code != 400 {
				t.Fatalf("a malformed terminal id: %d", code)
			}
		})
	}
}
