package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

// wholeCommand says whether the version's permission prompt shows a
// command whole, apart from anything else: Claude Code 2.1.263 to 2.1.267
// draw the tool's description under the command in the same indent, so no
// command is proven exact there and nothing is auto-approved.
func wholeCommand(a agenttest.Agent) bool {
	return a.Kind != "claude" || (a.Version != "2.1.263" && a.Version != "2.1.266" && a.Version != "2.1.267")
}

// TestE2EAutoApproval drives the exact-command auto-approval on every
// pinned version: a host's rule for `touch notes.txt` approves that prompt
// once (and the same prompt again in a later Turn: a new occurrence), with
// a turn.approval_auto_approved callback and no approval_required; commands
// with shell composition, expansion or redirection are the host's to
// answer, and get no key. A policy with such a word is refused.
func TestE2EAutoApproval(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	for _, a := range agenttest.RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			l := useWorld(t, a, worldSpec{})
			e, rec, d, host := l.e, l.rec, l.daemon(), l.host
			policy := d.url + "/v1/hosts/" + host.HostID + "/approval-policy"
			var prob struct{ Code string }
			if code := call(t, "PUT", policy, host.Token, `{"rules":[{"argv":["touch","$HOME/x"]}]}`, &prob); code != 422 || prob.Code != "validation_failed" {
				t.Fatalf("an unsafe rule: %d %+v", code, prob)
			}
			var got struct{ Rules []struct{ Argv []string } }
			if code := call(t, "PUT", policy, host.Token, `{"rules":[{"argv":["touch","notes.txt"],"project":"`+e.ProjectDir+`"}]}`, &got); code != 200 || len(got.Rules) != 1 {
				t.Fatalf("set the policy: %d %+v", code, got)
			}
			term := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend).Terminal.TerminalID
			send := func(req string) string {
				t.Helper()
				var s sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+req+`"}`, "c1", &s); code != 202 {
					t.Fatalf("send %q: %d %+v", req, code, s)
				}
				return s.TurnID
			}
			count := func(id, typ string) int { return rec.count(t, id, typ) }

			for round := 1; round <= 2; round++ {
				id := send(`[[akk:bash cmd=\"touch notes.txt\"]] make the notes file`)
				if !wholeCommand(a) {
					// The prompt is the host's: approve it by hand.
					rec.waitTurn(t, id, "turn.approval_required", 60*time.Second)
					var st approvalStatus
					callConv(t, "GET", d.url+"/v1/turns/"+id, host.Token, "", "c1", &st)
					var res sendAnswer
					if code := callConv(t, "POST", d.url+"/v1/turns/"+id+"/approval", host.Token, `{"decision":"approve_once"}`, "c1", &res); code != 200 {
						t.Fatalf("approve: %d %+v", code, res)
					}
					rec.waitTurn(t, id, "turn.completed", 60*time.Second)
					if count(id, "turn.approval_auto_approved") != 0 {
						t.Fatal("auto-approved a command not proven whole")
					}
					findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
					break
				}
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
				findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			}

			// Not exactly the rule: the host's to answer, with no key from AKK.
			for _, cmd := range []string{"touch notes.txt; rm x", "touch $HOME/x", "touch notes.txt > f"} {
				id := send(`[[akk:bash cmd=\"` + cmd + `\"]] try it`)
				rec.waitTurn(t, id, "turn.approval_required", 60*time.Second)
				var st approvalStatus
				if callConv(t, "GET", d.url+"/v1/turns/"+id, host.Token, "", "c1", &st); st.State != "awaiting_approval" || count(id, "turn.approval_auto_approved") != 0 {
					t.Fatalf("%q: %+v", cmd, st)
				}
				var res sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns/"+id+"/approval", host.Token, `{"decision":"reject"}`, "c1", &res); code != 200 {
					t.Fatalf("reject %q: %d %+v", cmd, code, res)
				}
				rec.waitTurn(t, id, "turn.waiting_for_host", 60*time.Second)
				if code := callConv(t, "POST", d.url+"/v1/turns/"+id+"/close", host.Token, `{}`, "c1", &res); code != 200 {
					t.Fatalf("close: %d %+v", code, res)
				}
				findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			}
			if _, err := os.Stat(filepath.Join(e.ProjectDir, "f")); err == nil {
				t.Fatal("a refused command ran")
			}
		})
	}
}
