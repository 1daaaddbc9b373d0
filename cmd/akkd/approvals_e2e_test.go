package main

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

type approvalStatus struct {
	State    string `json:"state"`
	Screen   string `json:"screen"`
	Approval *struct {
		PromptKind     string   `json:"prompt_kind"`
		CommandExcerpt string   `json:"command_excerpt"`
		Decisions      []string `json:"decisions"`
		ManualRequired bool     `json:"manual_required"`
	} `json:"approval"`
}

// toolResultsWith counts the tool results the model received that contain s.
func toolResultsWith(e *agenttest.Env, s string) int {
	n := 0
	for _, r := range e.Model.Requests() {
		for _, tr := range r.ToolResults {
			if strings.Contains(tr, s) {
				n++
			}
		}
	}
	return n
}

// TestE2EApprovals answers real permission prompts through the REST API on
// every pinned version: approve_once runs the command once and the Turn
// completes; reject never runs it and the Turn waits for the host; a prompt
// that changed after the status is refused with no key.
func TestE2EApprovals(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	for _, a := range agenttest.RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			l := useWorld(t, a, worldSpec{})
			e, rec, d, host := l.e, l.rec, l.daemon(), l.host
			term := findRow(t, d.url, host.Token, e.ProjectDir, 20*time.Second, hasSend).Terminal.TerminalID
			send := func(req string) string {
				t.Helper()
				var s sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+req+`"}`, "c1", &s); code != 202 {
					t.Fatalf("send %q: %d %+v", req, code, s)
				}
				return s.TurnID
			}
			status := func(id string) approvalStatus {
				t.Helper()
				var st approvalStatus
				if code := callConv(t, "GET", d.url+"/v1/turns/"+id, host.Token, "", "c1", &st); code != 200 {
					t.Fatalf("status: %d", code)
				}
				return st
			}
			decide := func(id, decision string, out any) int {
				return callConv(t, "POST", d.url+"/v1/turns/"+id+"/approval", host.Token, `{"decision":"`+decision+`"}`, "c1", out)
			}

			// approve_once: the command runs once and the Turn completes.
			id := send(`[[akk:bash cmd=\"touch akk-ok && echo akk-ok-$((40+2))\"]] run the check`)
			rec.waitTurn(t, id, "turn.approval_required", 60*time.Second)
			st := status(id)
			if st.State != "awaiting_approval" || st.Approval == nil || st.Approval.ManualRequired ||
				strings.Join(st.Approval.Decisions, ",") != "approve_once,reject" || !strings.Contains(st.Approval.CommandExcerpt, "akk-ok-") ||
				!strings.Contains(st.Screen, "akk-ok-") {
				t.Fatalf("status %+v %+v", st, st.Approval)
			}
			// /metrics says what waits on a person, and for how long.
			m := scrapeMetrics(t, d.url)
			if m[`akk_waiting{kind="approval"}`] != 1 || m["akk_oldest_wait_seconds"] <= 0 || m["akk_monitors"] < 1 ||
				m[`akk_panes{agent="`+a.Kind+`",screen_state="awaiting_approval"}`] != 1 || m[`akk_turns{state="awaiting_approval"}`] != 1 ||
				m["akk_state_read_ok"] != 1 {
				t.Fatalf("metrics while a prompt waits: %v", m)
			}
			var res sendAnswer
			if code := decide(id, "approve_once", &res); code != 200 || res.Outcome != "done" {
				t.Fatalf("approve: %d %+v", code, res)
			}
			done := rec.waitTurn(t, id, "turn.completed", 60*time.Second)
			if n := toolResultsWith(e, "akk-ok-42"); n != 1 {
				t.Fatalf("the approved command's output reached the model %d times", n)
			}
			if fm, _ := done.Data["final_message"].(string); !strings.Contains(fm, "akk-ok-42") {
				t.Fatalf("final message %q", fm)
			}
			// The same approval again: the prompt is gone, nothing is sent.
			if code := decide(id, "approve_once", &res); code != 409 {
				t.Fatalf("replayed approval: %d %+v", code, res)
			}

			// reject: the command never runs; the Turn waits for the host at an idle pane.
			// (The completion record may come before the pane has redrawn idle.)
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			id = send(`[[akk:bash cmd=\"touch akk-no && echo akk-no-$((40+3))\"]] run the other check`)
			rec.waitTurn(t, id, "turn.approval_required", 60*time.Second)
			status(id)
			if code := decide(id, "reject", &res); code != 200 || res.Outcome != "done" {
				t.Fatalf("reject: %d %+v\n%s", code, res, e.Capture())
			}
			rec.waitTurn(t, id, "turn.waiting_for_host", 60*time.Second)
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool { return c.Terminal.ScreenState == "idle" })
			if n := toolResultsWith(e, "akk-no-43"); n != 0 {
				t.Fatalf("the rejected command ran (%d results)", n)
			}
			// respond continues inside the same Turn, to its end.
			var again sendAnswer
			if code := callConv(t, "POST", d.url+"/v1/turns/"+id+"/respond", host.Token, `{"request":"Skip that check and say done"}`, "c1", &again); code != 202 || again.TurnID != id {
				t.Fatalf("respond: %d %+v", code, again)
			}
			rec.waitTurn(t, id, "turn.completed", 60*time.Second)
			// The Turn's own event stream replays its story from the start.
			evs := readSSE(t, d.url+"/v1/turns/"+id+"/events", host.Token, "", 7) // at least: dispatched, accepted, approval_required, waiting_for_host, dispatched, accepted, completed
			var kinds []string
			for _, ev := range evs {
				if ev.event != "turn.progress" { // progress interleaves as the agent writes
					kinds = append(kinds, ev.event)
				}
			}
			if got := strings.Join(kinds, ","); !strings.HasPrefix(got, "turn.dispatched,turn.accepted,turn.approval_required") ||
				strings.Count(got, "turn.waiting_for_host") != 1 {
				t.Fatalf("turn events %s", got)
			}

			// A prompt in a pane no Turn holds: the row offers approve, answered
			// terminal-scoped by the same conversation that listed it (none here).
			e.Submit(`[[akk:bash cmd="touch akk-t && echo akk-term-$((50+1))"]] my own check`)
			row := findRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, hasAction("approve"))
			var tr struct {
				Outcome string `json:"outcome"`
			}
			if code := call(t, "POST", d.url+"/v1/terminals/"+row.Terminal.TerminalID+"/approval", host.Token, `{"decision":"approve_once"}`, &tr); code != 200 || tr.Outcome != "done" {
				t.Fatalf("terminal approval: %d %+v\n%s", code, tr, e.Capture())
			}
			e.WaitFor("the command's result", 60*time.Second, func(string) bool { return toolResultsWith(e, "akk-term-51") == 1 })
			findRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, hasSend)

			// A prompt changed after the status: 409, and no key reaches the pane.
			id = send(`[[akk:steps n=2 escalate=true]] two steps`)
			rec.waitTurn(t, id, "turn.approval_required", 60*time.Second)
			first := status(id).Approval
			e.Choose("Yes") // a person answers the first prompt in the pane
			e.WaitFor("the second prompt", 60*time.Second, func(s string) bool { return strings.Contains(s, "akk-step-2") })
			// The Turn announces the second prompt too; the host's offer is still the first one's.
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				types, _ := rec.forTurn(t, id)
				if strings.Count(strings.Join(types, ","), "turn.approval_required") >= 2 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the second prompt was not announced: %v", types)
				}
			}
			before := e.Model.Played()
			var p struct{ Code string }
			if code := decide(id, "approve_once", &p); code != 409 || p.Code != "prompt_changed" {
				t.Fatalf("approve a changed prompt: %d %+v (first prompt %+v)", code, p, first)
			}
			time.Sleep(500 * time.Millisecond)
			if e.Model.Played() != before || toolResultsWith(e, "akk-step-2") != 0 {
				t.Fatal("a key reached the changed prompt")
			}
			// The host gives up on the Turn: cancelled, and the pane is idle again.
			var c sendAnswer
			if code := callConv(t, "POST", d.url+"/v1/turns/"+id+"/cancel", host.Token, "", "c1", &c); code != 200 || c.Outcome != "done" {
				t.Fatalf("cancel at the second prompt: %d %+v", code, c)
			}
			rec.waitTurn(t, id, "turn.cancelled", 60*time.Second)
			findRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, hasSend)
		})
	}
}

// scrapeMetrics reads akkd's /metrics: each sample's value by its name
// and labels as printed (akk_ ones only).
func scrapeMetrics(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for _, l := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(l, "akk_") {
			continue
		}
		i := strings.LastIndexByte(l, ' ')
		if v, err := strconv.ParseFloat(l[i+1:], 64); err == nil {
			out[l[:i]] = v
		}
	}
	return out
}
