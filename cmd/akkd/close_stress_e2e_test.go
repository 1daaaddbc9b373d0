package main

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

// closeStressRounds is how many rejected prompts TestE2ECloseAfterReject
// closes per version (AKK_CLOSE_STRESS_ROUNDS overrides it).
func closeStressRounds() int {
	if n, err := strconv.Atoi(os.Getenv("AKK_CLOSE_STRESS_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return 3
}

// TestE2ECloseAfterReject repeats the path on which a card once offered
// Close again and again and never Send: a prompt rejected, its Turn closed
// at once from whatever state the rejection left (awaiting the approval's
// settling, working, waiting for the host), while a controller lists. After
// each Close the Turn is closed, the row offers Close no more, and it offers
// Send once the pane is idle.
func TestE2ECloseAfterReject(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	rounds := closeStressRounds()
	for _, a := range agenttest.RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			l := useWorld(t, a, worldSpec{})
			e, rec, d, host := l.e, l.rec, l.daemon(), l.host
			term := findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend).Terminal.TerminalID
			for i := 1; i <= rounds; i++ {
				findRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, hasSend)
				var s sendAnswer
				req := fmt.Sprintf(`[[akk:bash cmd=\"touch akk-close-%d\"]] a check to reject, round %d`, i, i)
				if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+req+`"}`, "c1", &s); code != 202 {
					t.Fatalf("round %d: send: %d %+v", i, code, s)
				}
				rec.waitTurn(t, s.TurnID, "turn.approval_required", 60*time.Second)
				var st approvalStatus
				callConv(t, "GET", d.url+"/v1/turns/"+s.TurnID, host.Token, "", "c1", &st)
				var res sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns/"+s.TurnID+"/approval", host.Token, `{"decision":"reject"}`, "c1", &res); code != 200 {
					t.Fatalf("round %d: reject: %d %+v", i, code, res)
				}
				var closed struct {
					State string `json:"state"`
				}
				if code := callConv(t, "POST", d.url+"/v1/turns/"+s.TurnID+"/close", host.Token, `{}`, "c1", &closed); code != 200 || closed.State != "closed" {
					t.Fatalf("round %d: close: %d %+v", i, code, closed)
				}
				row := findRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, hasSend)
				for _, act := range row.AvailableActions {
					if act["action"] == "close" {
						t.Fatalf("round %d: the row still offers close: %+v", i, row.AvailableActions)
					}
				}
				var after struct {
					State string `json:"state"`
				}
				callConv(t, "GET", d.url+"/v1/turns/"+s.TurnID, host.Token, "", "c1", &after)
				if after.State != "closed" {
					t.Fatalf("round %d: the closed Turn is %s", i, after.State)
				}
			}
		})
	}
}
