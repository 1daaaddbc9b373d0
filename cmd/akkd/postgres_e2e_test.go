package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"akk/persistence/storetest"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// TestE2EPostgresStore runs akkd on PostgreSQL (--store postgres://…)
// against the newest Claude Code and Codex panes: a second akkd on the
// same database is refused and types nothing; a task completes with its
// webhooks; a kill -9 of the daemon mid-Turn loses nothing and repeats
// nothing, the restarted daemon (same database) completing the Turn with
// one turn.completed.
func TestE2EPostgresStore(t *testing.T) {
	claude, codex := newestClaudeAndCodex(t)
	daemonBinary(t)
	for _, a := range []agenttest.Agent{claude, codex} {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			url := storetest.NewDatabase(t)
			e := agenttest.New(t, a, agenttest.Options{})
			model := e.Model
			e.StartReady()
			rec := newReceiver(t, "")
			env := []string{"AKK_STORE=" + url, "AKK_NODE=solo", "AKK_TMUX_SOCKETS=" + e.SocketPath(), "AKK_WEBHOOK_RETRY_SCHEDULE=200ms,500ms,1s"}
			d := startProc(t, t.TempDir(), env...)

			// One daemon per database: a second one exits at once, naming why.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			second := exec.CommandContext(ctx, d.bin, "--listen", freeAddr(t), "--state-dir", t.TempDir(), "--log-level", "warn")
			second.Env = append(os.Environ(), ownServerOnly(env)...)
			if out, err := second.CombinedOutput(); err == nil || !strings.Contains(string(out), "another akkd runs on this database") {
				t.Fatalf("a second akkd on the database: %v\n%s", err, out)
			}

			op := d.token()
			var host hostCreds
			if code := call(t, "POST", d.url+"/v1/hosts", op, `{"name":"h","webhook_url":"http://`+rec.addr+`/h","delivery_node":"solo"}`, &host); code != 201 {
				t.Fatalf("register host: %d", code)
			}
			row := findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend)
			term := row.Terminal.TerminalID

			text := "Say hello on PostgreSQL for " + a.Name()
			var s sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+text+`","message_id":"m-1"}`, &s); code != 202 {
				t.Fatalf("send: %d %+v", code, s)
			}
			done := rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
			if got, want := done.Data["final_message"], fakemodel.DefaultReply(text); got != want {
				t.Fatalf("final message %q, want %q", got, want)
			}
			for _, dl := range rec.deliveries() {
				verify(t, host.WebhookSecret, dl)
			}
			if types, _ := rec.forTurn(t, s.TurnID); strings.Join(types, ",") != "turn.accepted,turn.completed" {
				t.Fatalf("webhooks %v", types)
			}

			// kill -9 mid-Turn; the daemon started again on the same
			// database completes it, once, and the agent saw it once.
			findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend)
			slow := "[[akk:slow secs=6]] a slow task on PostgreSQL for " + a.Name()
			s2 := sendAccepted(t, d.url, host.Token, term, slow, rec)
			d.kill()
			d.start()
			rec.waitTurn(t, s2.TurnID, "turn.completed", 90*time.Second)
			if n := rec.count(t, s2.TurnID, "turn.completed"); n != 1 {
				t.Fatalf("turn.completed arrived %d times", n)
			}
			if n := userRequests(model, slow); n != 1 {
				t.Fatalf("the slow request reached the model %d times", n)
			}
			var status struct {
				State string `json:"state"`
			}
			if code := call(t, "GET", d.url+"/v1/turns/"+s.TurnID, host.Token, "", &status); code != 200 || status.State != "completed" {
				t.Fatalf("the first Turn after the restart: %d %+v", code, status)
			}
		})
	}
}

// TestE2EPostgresOutage: PostgreSQL stopped under a running akkd (its own
// server): a Send answers 503 store_unavailable and types nothing; back, the
// daemon recovers by itself and the next Send completes with its webhooks.
// Stopped again mid-Turn while the agent finishes: the Turn completes once
// the store is back, with one turn.completed.
func TestE2EPostgresOutage(t *testing.T) {
	claude, _ := newestClaudeAndCodex(t)
	daemonBinary(t)
	srv := storetest.StartServer(t)
	url := srv.NewDatabase(t)
	e := agenttest.New(t, claude, agenttest.Options{})
	model := e.Model
	e.StartReady()
	rec := newReceiver(t, "")
	d := startProc(t, t.TempDir(), "AKK_STORE="+url, "AKK_NODE=solo", "AKK_TMUX_SOCKETS="+e.SocketPath(), "AKK_WEBHOOK_RETRY_SCHEDULE=200ms,500ms,1s")
	op := d.token()
	var host hostCreds
	if code := call(t, "POST", d.url+"/v1/hosts", op, `{"name":"h","webhook_url":"http://`+rec.addr+`/h","delivery_node":"solo"}`, &host); code != 201 {
		t.Fatalf("register host: %d", code)
	}
	term := findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend).Terminal.TerminalID

	srv.Stop()
	lost := "A task while the store is down"
	var p sendAnswer
	if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+lost+`"}`, &p); code != 503 || p.Code != "store_unavailable" {
		t.Fatalf("send while PostgreSQL is stopped: %d %+v", code, p)
	}
	if strings.Contains(e.Capture(), lost) || userRequests(model, lost) != 0 {
		t.Fatalf("a Send the store refused typed into the pane:\n%s", e.Capture())
	}
	if code := call(t, "GET", d.url+"/v1/health", "", "", nil); code != 200 {
		t.Fatalf("health while the store is down: %d", code)
	}

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	text := "Say hello after the store came back"
	deadline := time.Now().Add(agenttest.Patient(30 * time.Second))
	var s sendAnswer
	for {
		code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+text+`"}`, &s)
		if code == 202 {
			break
		}
		if code != 503 || s.Code != "store_unavailable" || time.Now().After(deadline) {
			t.Fatalf("send after the restart: %d %+v", code, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	done := rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
	if got, want := done.Data["final_message"], fakemodel.DefaultReply(text); got != want {
		t.Fatalf("final message %q, want %q", got, want)
	}
	if n := userRequests(model, lost); n != 0 {
		t.Fatalf("the refused task reached the model %d times", n)
	}

	// PostgreSQL stopped mid-Turn, the agent finishing meanwhile: back, the
	// Turn completes, with one turn.completed, and the task ran once.
	findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend)
	slow := "[[akk:slow secs=4]] a slow task across a store restart"
	s2 := sendAccepted(t, d.url, host.Token, term, slow, rec)
	srv.Stop()
	e.WaitForText(agenttest.Patient(60*time.Second), "slow-1")
	e.WaitIdle(agenttest.Patient(60 * time.Second))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	end := rec.waitTurn(t, s2.TurnID, "turn.completed", 90*time.Second)
	if fm, _ := end.Data["final_message"].(string); !strings.HasSuffix(fm, "done.") {
		t.Fatalf("final message %q", fm)
	}
	if n := rec.count(t, s2.TurnID, "turn.completed"); n != 1 {
		t.Fatalf("turn.completed arrived %d times", n)
	}
	if n := userRequests(model, slow); n != 1 {
		t.Fatalf("the slow task reached the model %d times", n)
	}
}

// sendAccepted sends request to terminal term and waits for its
// turn.accepted webhook.
func sendAccepted(t *testing.T, url, token, term, request string, rec *receiver) sendAnswer {
	t.Helper()
	var s sendAnswer
	if code := call(t, "POST", url+"/v1/turns", token, `{"terminal_id":"`+term+`","request":"`+request+`"}`, &s); code != 202 {
		t.Fatalf("send %q: %d %+v", request, code, s)
	}
	rec.waitTurn(t, s.TurnID, "turn.accepted", 60*time.Second)
	return s
}
