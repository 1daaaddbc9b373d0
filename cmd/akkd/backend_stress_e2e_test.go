package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
	"akk/terminaldrivers/codexappserver"
)

// backendStressSends is how many Sends TestE2ECodexBackendStress makes per
// daemon version (AKK_BACKEND_STRESS_SENDS overrides it).
func backendStressSends() int {
	if n, err := strconv.Atoi(os.Getenv("AKK_BACKEND_STRESS_SENDS")); err == nil && n > 0 {
		return n
	}
	return 20
}

// TestE2ECodexBackendStress repeats the path on which a backend Turn was
// once reported cancelled that nobody cancelled: Sends one after another
// through a thread's daemon while a controller lists every 300 ms and
// another client of the daemon follows the thread. Every Send must
// complete, with its own final message and one model call; none may end
// cancelled, failed or stalled.
func TestE2ECodexBackendStress(t *testing.T) {
	daemonBinary(t)
	sends := backendStressSends()
	for _, a := range daemonAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{})
			model := e.Model
			e.StartReady()
			rec := newReceiver(t, "")
			d := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+e.SocketPath(), "AKK_WEBHOOK_RETRY_SCHEDULE=200ms,500ms,1s")
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)

			first := "Say hello to the person before the stress"
			e.Submit(first)
			e.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken(first))
			e.WaitIdle(agenttest.TurnTimeout)
			row := findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)

			// Another client of the daemon follows the thread throughout
			// (an editor, a second controller).
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			defer func() { cancel(); wg.Wait() }()
			other, err := codexappserver.Dial(ctx, codexappserver.SocketPath(e.CodexHome), "stress-test")
			if err != nil {
				t.Fatalf("another client: %v", err)
			}
			defer other.Close()
			if _, err := other.Follow(ctx, row.Backend.NativeThreadID); err != nil {
				t.Fatalf("another client follows the thread: %v", err)
			}
			// A controller lists every 300 ms.
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					call(t, "GET", d.url+"/v1/conversations", host.Token, "", nil)
					select {
					case <-ctx.Done():
					case <-time.After(300 * time.Millisecond):
					}
				}
			}()

			for i := 1; i <= sends; i++ {
				findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
				text := fmt.Sprintf("Stress send %d of %d for %s", i, sends, a.Name())
				var s sendAnswer
				body := `{"conversation_id":"` + row.ConversationID + `","request":"` + text + `"}`
				if code := call(t, "POST", d.url+"/v1/turns", host.Token, body, &s); code != 202 || s.Outcome != "done" {
					t.Fatalf("send %d: %d %+v", i, code, s)
				}
				end := rec.waitTurnEnd(t, s.TurnID, 90*time.Second)
				if end.Type != "turn.completed" {
					types, _ := rec.forTurn(t, s.TurnID)
					t.Fatalf("send %d of %d ended %s (%v), nobody asked for it; webhooks %v", i, sends, end.Type, end.Data, types)
				}
				if got, want := end.Data["final_message"], fakemodel.DefaultReply(text); got != want {
					t.Fatalf("send %d: final message %q, want %q", i, got, want)
				}
				if n := userRequests(model, text); n != 1 {
					t.Fatalf("send %d: the model saw it %d times", i, n)
				}
			}
			select {
			case <-other.Done():
				t.Fatalf("the other client's connection ended: %v", other.Err())
			default:
			}
		})
	}
}

// waitTurnEnd waits for the webhook that ends a Turn, whichever it is.
func (r *receiver) waitTurnEnd(t testing.TB, turnID string, timeout time.Duration) webhook {
	t.Helper()
	timeout = agenttest.Patient(timeout)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		_, byID := r.forTurn(t, turnID)
		for _, w := range byID {
			switch w.Type {
			case "turn.completed", "turn.cancelled", "turn.failed", "turn.stalled", "turn.uncertain":
				return w
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	types, _ := r.forTurn(t, turnID)
	t.Fatalf("turn %s did not end within %s; webhooks %v", turnID, timeout, types)
	return webhook{}
}
