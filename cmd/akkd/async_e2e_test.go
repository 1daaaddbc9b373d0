package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// asyncAgents are the pinned Codex versions that ask async questions.
func asyncAgents(t *testing.T) []agenttest.Agent {
	first, _ := agent.ParseVersion("0.154.0")
	var out []agenttest.Agent
	for _, a := range agenttest.RequireAgents(t, "codex") {
		if v, ok := agent.ParseVersion(a.Version); ok && !v.Less(first) {
			out = append(out, a)
		}
	}
	return out
}

// TestE2EAsyncQuestions answers Codex's request_user_input_async questions
// through the REST API on every pinned version that asks them, while the
// Turn keeps working: the collapsed questions are opened by their one
// choice, one answer is steered into the running turn, another (typed in
// the free-text step of the native Other row) is queued for the next turn;
// both reach the model. A queued choice is refused with zero input.
func TestE2EAsyncQuestions(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	for _, a := range asyncAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{AsyncQuestions: true})
			e.StartReady()
			rec := newReceiver(t, "")
			d := startDaemon(t, t.TempDir(), map[string]string{"AKK_TMUX_SOCKETS": e.SocketPath()})
			defer d.stop()
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			term := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend).Terminal.TerminalID
			var sent []string
			defer func() {
				// On a failure, what AKK says of each Turn and its step.
				if !t.Failed() {
					return
				}
				for _, id := range sent {
					var tr, in json.RawMessage
					c1 := callConv(t, "GET", d.url+"/v1/turns/"+id, host.Token, "", "c1", &tr)
					c2 := callConv(t, "GET", d.url+"/v1/turns/"+id+"/interaction", host.Token, "", "c1", &in)
					t.Logf("turn %s: %d %s\ninteraction: %d %s", id, c1, tr, c2, in)
				}
			}()
			send := func(req string) string {
				t.Helper()
				var s sendAnswer
				if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, `{"terminal_id":"`+term+`","request":"`+req+`"}`, "c1", &s); code != 202 {
					t.Fatalf("send %q: %d %+v", req, code, s)
				}
				sent = append(sent, s.TurnID)
				return s.TurnID
			}
			type asyncProjection struct {
				projection
				DeliveryModes []string `json:"delivery_modes"`
				Questions     []struct {
					Prompt string `json:"prompt"`
				} `json:"questions"`
			}
			get := func(id string) (projection, asyncProjection) {
				t.Helper()
				var raw json.RawMessage
				deadline := time.Now().Add(20 * time.Second)
				for {
					code := callConv(t, "GET", d.url+"/v1/turns/"+id+"/interaction", host.Token, "", "c1", &raw)
					if code == 200 {
						break
					}
					if code != 409 || time.Now().After(deadline) {
						t.Fatalf("get interaction: %d %s", code, raw)
					}
					time.Sleep(100 * time.Millisecond)
				}
				var p projection
				var ap asyncProjection
				json.Unmarshal(raw, &p)
				json.Unmarshal(raw, &ap)
				if p.Kind != "async_question" || p.ManualRequired || len(p.Questions) != 1 {
					t.Fatalf("projection %s", raw)
				}
				return p, ap
			}
			respond := func(id, body string, out any) int {
				return callConv(t, "POST", d.url+"/v1/turns/"+id+"/interaction", host.Token, body, "c1", out)
			}
			waitStep := func(id string, n int) { t.Helper(); waitSteps(t, rec, id, n) }
			state := func(id string) string {
				var tr struct{ State string }
				callConv(t, "GET", d.url+"/v1/turns/"+id, host.Token, "", "c1", &tr)
				return tr.State
			}
			// open answers the collapsed questions' one choice, then reads
			// the opened question.
			open := func(id string) (projection, asyncProjection) {
				t.Helper()
				waitStep(id, 1)
				// The list offers the answer beside the working Turn.
				findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(r conversationRow) bool {
					for _, a := range r.AvailableActions {
						if a["action"] == "respond_interaction" {
							return true
						}
					}
					return false
				})
				p, ap := get(id)
				q := p.Questions[0]
				if q.ResponseKind != "confirmation" || len(q.Options) != 1 || len(ap.DeliveryModes) != 0 {
					t.Fatalf("collapsed questions %+v", ap)
				}
				if s := state(id); s != "working" {
					t.Fatalf("turn %s while its async question waits", s)
				}
				var res sendAnswer
				if code := respond(id, answerBody(p, 0, ""), &res); code != 200 || res.Outcome != "done" {
					t.Fatalf("open: %d %+v", code, res)
				}
				waitStep(id, 2)
				p, ap = get(id)
				if ap.Questions[0].Prompt != fakemodel.Questions[0].Question || !slices.Equal(ap.DeliveryModes, []string{"steer_current_turn", "queue_next_turn"}) {
					t.Fatalf("opened question %+v", ap)
				}
				if n := len(p.Questions[0].Options); n != 3 || p.Questions[0].Options[1].Label != "Blue" || !p.Questions[0].Options[2].FreeText {
					t.Fatalf("options %+v", p.Questions[0].Options)
				}
				return p, ap
			}
			withMode := func(body, mode string) string {
				var m map[string]any
				json.Unmarshal([]byte(body), &m)
				m["delivery_mode"] = mode
				b, _ := json.Marshal(m)
				return string(b)
			}

			// Steered: a choice, into the running turn.
			id := send("[[akk:ask_async questions=1 secs=2 hold=steer]] ask while working")
			p, _ := open(id)
			before := e.Model.Played()
			var prob struct{ Code string }
			if code := respond(id, withMode(answerBody(p, 1, ""), "queue_next_turn"), &prob); code != 422 {
				t.Fatalf("a queued choice: %d %+v", code, prob)
			}
			// The same step, still offered (0.154/0.155 redraw their timer).
			if again, _ := get(id); again.InteractionID != p.InteractionID || e.Model.Played() != before {
				t.Fatal("a refused answer reached the pane")
			}
			var res sendAnswer
			if code := respond(id, answerBody(p, 1, ""), &res); code != 200 || res.Outcome != "done" {
				t.Fatalf("steer: %d %+v", code, res)
			}
			e.Model.Release("steer") // the turn works on until the answer is in
			e.WaitModelRequest("the steered answer", 60*time.Second, func(r fakemodel.Request) bool {
				return !r.Aux && strings.Contains(r.UserText, "Blue") && !strings.Contains(r.UserText, "[[akk:")
			})
			rec.waitTurn(t, id, "turn.completed", 90*time.Second)

			// Queued: the native Other opens its free-text step; the text
			// is queued and becomes the agent's next turn.
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			id = send("[[akk:ask_async questions=1 secs=2 hold=queue]] ask again")
			p, _ = open(id)
			other := optionIndex(p, func(_ string, free bool) bool { return free })
			if code := respond(id, answerBody(p, other, ""), &res); code != 200 || res.Outcome != "done" {
				t.Fatalf("open the free-text row: %d %+v", code, res)
			}
			waitStep(id, 3)
			pt, apt := get(id)
			if pt.Questions[0].ResponseKind != "free_text" || len(apt.DeliveryModes) != 2 {
				t.Fatalf("free-text step %+v", apt)
			}
			text := "Teal, queued for later"
			body, _ := json.Marshal(map[string]any{"interaction_id": pt.InteractionID, "delivery_mode": "queue_next_turn",
				"answers": []any{map[string]any{"question_id": pt.Questions[0].QuestionID, "response_kind": "free_text", "text": text}}})
			if code := respond(id, string(body), &res); code != 200 || res.Outcome != "done" {
				t.Fatalf("queue: %d %+v", code, res)
			}
			e.Model.Release("queue")
			done := rec.waitTurn(t, id, "turn.completed", 90*time.Second)
			if fm, _ := done.Data["final_message"].(string); strings.Contains(fm, text) {
				t.Fatalf("the queued answer reached the running turn: %q", fm)
			}
			e.WaitModelRequest("the queued answer as the next turn", 60*time.Second, func(r fakemodel.Request) bool {
				return !r.Aux && strings.Contains(r.UserText, text)
			})
		})
	}
}
