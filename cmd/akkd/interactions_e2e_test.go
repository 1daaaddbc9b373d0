package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

type projection struct {
	Schema         string `json:"schema"`
	Version        int    `json:"version"`
	InteractionID  string `json:"interaction_id"`
	Kind           string `json:"kind"`
	ManualRequired bool   `json:"manual_required"`
	Step           struct{ Index, Total int }
	Questions      []struct {
		QuestionID   string `json:"question_id"`
		Header       string `json:"header"`
		ResponseKind string `json:"response_kind"`
		Options      []struct {
			OptionID string `json:"option_id"`
			Label    string `json:"label"`
			FreeText bool   `json:"free_text"`
		} `json:"options"`
	} `json:"questions"`
}

func answerBody(p projection, option int, text string) string {
	q := p.Questions[0]
	a := map[string]any{"question_id": q.QuestionID, "response_kind": q.ResponseKind,
		"selected_option_ids": []string{q.Options[option].OptionID}}
	if text != "" {
		a["text"] = text
	}
	b, _ := json.Marshal(map[string]any{"interaction_id": p.InteractionID, "answers": []any{a}})
	return string(b)
}

func optionIndex(p projection, pred func(label string, freeText bool) bool) int {
	for i, o := range p.Questions[0].Options {
		if pred(o.Label, o.FreeText) {
			return i
		}
	}
	return -1
}

// waitSteps waits for the n-th interaction_required webhook of a Turn.
func waitSteps(t *testing.T, rec *receiver, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(agenttest.Patient(60 * time.Second))
	for {
		types, _ := rec.forTurn(t, id)
		k := 0
		for _, x := range types {
			if x == "turn.interaction_required" {
				k++
			}
		}
		if k >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("step %d never announced; webhooks %v", n, types)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestE2EInteractions answers real questionnaires through the REST API on
// every pinned version: a single choice by opaque id, two questions step by
// step with free text (and Claude's review), refusals with zero input, and a
// multi-select that stays with the person.
func TestE2EInteractions(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	for _, a := range agenttest.RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			l := useWorld(t, a, worldSpec{})
			e, rec, d, host := l.e, l.rec, l.daemon(), l.host
			if a.Kind == "codex" {
				// Codex asks questions in Plan mode only; a person switches to it.
				// The pane stays in Plan mode: its world is not reused.
				e.PlanMode()
				l.dirty()
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
			get := func(id string) projection {
				t.Helper()
				var p projection
				// A step announced a moment ago may still be redrawing on a
				// busy machine (409, nothing sent): read again, as a host would.
				deadline := time.Now().Add(20 * time.Second)
				for {
					p = projection{}
					code := callConv(t, "GET", d.url+"/v1/turns/"+id+"/interaction", host.Token, "", "c1", &p)
					if code == 200 {
						break
					}
					if code != 409 || time.Now().After(deadline) {
						t.Fatalf("get interaction: %d", code)
					}
					time.Sleep(100 * time.Millisecond)
				}
				if p.Schema != "agent-knock-knock/terminal-interaction" || p.Version != 1 || len(p.Questions) != 1 {
					t.Fatalf("projection %+v", p)
				}
				return p
			}
			respond := func(id, body, conv string, out any) int {
				return callConv(t, "POST", d.url+"/v1/turns/"+id+"/interaction", host.Token, body, conv, out)
			}
			waitStep := func(id string, n int) { t.Helper(); waitSteps(t, rec, id, n) }

			// One question: the second option by its opaque id.
			id := send("[[akk:ask questions=1]] pick a color")
			waitStep(id, 1)
			_, byID := rec.forTurn(t, id)
			for _, w := range byID {
				if w.Type == "turn.interaction_required" && w.Data["interaction"] == nil {
					t.Fatalf("the callback carries no projection: %+v", w.Data)
				}
			}
			p := get(id)
			if p.Questions[0].Options[1].Label != "Blue" || p.Questions[0].Options[1].OptionID == "1" {
				t.Fatalf("options %+v", p.Questions[0].Options)
			}
			before := e.Model.Played()
			var prob struct{ Code string }
			if code := respond(id, answerBody(p, 1, ""), "c2", &prob); code != 409 || prob.Code != "offer_expired" {
				t.Fatalf("another conversation answered: %d %+v", code, prob)
			}
			raw := strings.Replace(answerBody(p, 1, ""), p.Questions[0].Options[1].OptionID, "2", 1)
			if code := respond(id, raw, "c1", &prob); code != 422 {
				t.Fatalf("a menu number as id: %d %+v", code, prob)
			}
			if e.Model.Played() != before {
				rs := e.Model.Requests()
				t.Fatalf("a refused answer reached the agent: %+v", rs[max(0, len(rs)-3):])
			}
			var res sendAnswer
			if code := respond(id, answerBody(p, 1, ""), "c1", &res); code != 200 || res.Outcome != "done" {
				t.Fatalf("answer: %d %+v", code, res)
			}
			if code := respond(id, answerBody(p, 1, ""), "c1", &prob); code != 409 {
				t.Fatalf("a replay was accepted: %d %+v", code, prob)
			}
			done := rec.waitTurn(t, id, "turn.completed", 60*time.Second)
			if fm, _ := done.Data["final_message"].(string); !strings.Contains(fm, "Blue") {
				t.Fatalf("final message %q does not carry the choice", fm)
			}

			// Two questions step by step; the second answered with free text
			// in its own editor step.
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			id = send("[[akk:ask questions=2]] pick color and size")
			waitStep(id, 1)
			p1 := get(id)
			if code := respond(id, answerBody(p1, 0, ""), "c1", &res); code != 200 {
				t.Fatalf("step 1: %d %+v", code, res)
			}
			waitStep(id, 2)
			p2 := get(id)
			if p2.InteractionID == p1.InteractionID || optionIndex(p2, func(l string, _ bool) bool { return l == "Small" }) < 0 {
				t.Fatalf("step 2 %+v", p2)
			}
			free := optionIndex(p2, func(_ string, ft bool) bool { return ft })
			if free < 0 {
				t.Fatalf("no free-text option in %+v", p2.Questions[0].Options)
			}
			// The free-text choice alone opens its editor: a step of its own.
			if code := respond(id, answerBody(p2, free, ""), "c1", &res); code != 200 || res.Outcome != "done" {
				t.Fatalf("open the editor: %d %+v", code, res)
			}
			waitStep(id, 3)
			pe := get(id)
			if pe.InteractionID == p2.InteractionID || pe.Questions[0].ResponseKind != "free_text" || len(pe.Questions[0].Options) != 0 {
				t.Fatalf("the editor step %+v", pe)
			}
			textBody := func(text string) string {
				b, _ := json.Marshal(map[string]any{"interaction_id": pe.InteractionID, "answers": []any{map[string]any{
					"question_id": pe.Questions[0].QuestionID, "response_kind": "free_text", "text": text}}})
				return string(b)
			}
			// One text rule, before the offer is used: a no-break space is
			// refused with nothing typed, and the same step stays answerable.
			before = e.Model.Played()
			screen := e.Capture()
			if code := respond(id, textBody("Medium\u00a0size"), "c1", &prob); code != 422 || prob.Code != "validation_failed" {
				t.Fatalf("a U+00A0 answer: %d %+v", code, prob)
			}
			if e.Capture() != screen || e.Model.Played() != before {
				t.Fatal("a refused text reached the pane")
			}
			text := "Medium, with a 3-inch handle"
			if code := respond(id, textBody(text), "c1", &res); code != 200 {
				t.Fatalf("step 2's text: %d %+v", code, res)
			}
			if a.Kind == "claude" { // Claude Code ends with a review step
				waitStep(id, 4)
				p3 := get(id)
				submit := optionIndex(p3, func(l string, _ bool) bool { return strings.Contains(l, "Submit") })
				if p3.Questions[0].ResponseKind != "confirmation" || submit < 0 {
					t.Fatalf("review %+v", p3)
				}
				if code := respond(id, answerBody(p3, submit, ""), "c1", &res); code != 200 {
					t.Fatalf("review: %d %+v", code, res)
				}
			}
			done = rec.waitTurn(t, id, "turn.completed", 60*time.Second)
			if fm, _ := done.Data["final_message"].(string); !strings.Contains(fm, "Red") || !strings.Contains(fm, text) {
				t.Fatalf("final message %q does not carry both answers", fm)
			}

			// Multi-select (Claude Code): two of four options by their ids,
			// then the review; the model gets exactly those two.
			if a.Kind == "claude" {
				findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
				id = send("[[akk:ask questions=1 multi=true options=4]] pick colors")
				waitStep(id, 1)
				pm := get(id)
				q := pm.Questions[0]
				if pm.ManualRequired || q.ResponseKind != "multi_select" || len(q.Options) != 4 || q.Options[3].Label != "Yellow" {
					t.Fatalf("multi-select projection %+v", pm)
				}
				body, _ := json.Marshal(map[string]any{"interaction_id": pm.InteractionID, "answers": []any{map[string]any{
					"question_id": q.QuestionID, "response_kind": "multi_select",
					"selected_option_ids": []string{q.Options[1].OptionID, q.Options[3].OptionID}}}})
				if code := respond(id, string(body), "c1", &res); code != 200 || res.Outcome != "done" {
					t.Fatalf("multi-select: %d %+v", code, res)
				}
				waitStep(id, 2)
				pr := get(id)
				submit := optionIndex(pr, func(l string, _ bool) bool { return strings.Contains(l, "Submit") })
				if code := respond(id, answerBody(pr, submit, ""), "c1", &res); code != 200 {
					t.Fatalf("review: %d %+v", code, res)
				}
				done = rec.waitTurn(t, id, "turn.completed", 60*time.Second)
				if fm, _ := done.Data["final_message"].(string); !strings.Contains(fm, `="Blue, Yellow"`) {
					t.Fatalf("final message %q does not carry exactly the two choices", fm)
				}
			}
		})
	}
}
