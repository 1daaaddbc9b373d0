package main

import (
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// TestE2EBareEnvironment starts akkd as `env -i` would, with AKK's
// settings and nothing else (no locale, no PATH, no HOME), beside the
// newest Claude Code and Codex: it lists their panes and carries a task
// with non-ASCII text to its end. Before, tmux turned the pane list's
// separator into "_" for a client without a UTF-8 locale and akkd listed
// no pane at all. (A locale concerns the tmux client, not an agent's
// release, so the newest of each kind stands for its kind.)
func TestE2EBareEnvironment(t *testing.T) {
	claude, codex := newestClaudeAndCodex(t)
	daemonBinary(t)
	for _, a := range []agenttest.Agent{claude, codex} {
		t.Run(a.Name(), func(t *testing.T) {
			e := agenttest.New(t, a, agenttest.Options{})
			e.StartReady()
			rec := newReceiver(t, "")
			d := &proc{t: t, bin: daemonBinary(t), dir: t.TempDir(), bare: true,
				env: []string{"AKK_TMUX_SOCKETS=" + e.SocketPath(), agenttest.TestNameEnv + "=/" + t.Name()}}
			d.start()
			t.Cleanup(d.kill)
			var host hostCreds
			if code := call(t, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host); code != 201 {
				t.Fatalf("register host: %d", code)
			}
			row := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			text := "Say héllo ✓ for " + a.Name()
			var s sendAnswer
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+row.Terminal.TerminalID+`","request":"`+text+`"}`, &s); code != 202 || s.Outcome != "done" {
				t.Fatalf("send: %d %+v", code, s)
			}
			done := rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
			if got, want := done.Data["final_message"], fakemodel.DefaultReply(text); got != want {
				t.Fatalf("final message %q, want %q", got, want)
			}
		})
	}
}
