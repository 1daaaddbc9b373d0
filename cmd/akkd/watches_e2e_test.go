package main

import (
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/codex"
)

type watchAnswer struct {
	WatchID      string `json:"watch_id"`
	State        string `json:"state"`
	WatchMode    string `json:"watch_mode"`
	Confidence   string `json:"confidence"`
	FinalMessage string `json:"final_message"`
	Code         string `json:"code"`
	Detail       string `json:"detail"`
}

func hasAction(name string) func(conversationRow) bool {
	return func(c conversationRow) bool {
		for _, a := range c.AvailableActions {
			if a["action"] == name {
				return true
			}
		}
		return false
	}
}

// userPrompts counts the model calls that carried a person's prompt (not
// side requests, not tool results).
func userPrompts(e *agenttest.Env) int {
	n := 0
	for _, r := range e.Model.Requests() {
		if !r.Aux && len(r.ToolResults) == 0 {
			n++
		}
	}
	return n
}

// TestE2EWatches watches tasks a person typed, on every pinned version: to
// watch.completed (with the final message where the record anchors it
// exactly), through a permission prompt the person answers
// (watch.approval_observed), and never a keystroke from AKK.
func TestE2EWatches(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	for _, a := range agenttest.RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			l := useWorld(t, a, worldSpec{})
			e, rec, d, host := l.e, l.rec, l.daemon(), l.host
			term := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend).Terminal.TerminalID
			watch := func() watchAnswer {
				t.Helper()
				var w watchAnswer
				if code := callConv(t, "POST", d.url+"/v1/watches", host.Token, `{"terminal_id":"`+term+`"}`, "c1", &w); code != 201 {
					t.Fatalf("watch: %d %+v", code, w)
				}
				return w
			}
			var p watchAnswer
			if code := call(t, "POST", d.url+"/v1/watches", host.Token, `{"terminal_id":"`+term+`"}`, &p); code != 409 || p.Code != "nothing_to_watch" {
				t.Fatalf("watch an idle pane: %d %+v", code, p)
			}

			// A slow task a person typed.
			e.Submit("[[akk:slow secs=6]] a task I typed myself")
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasAction("watch"))
			w := watch()
			// On a version whose shared app-server daemon holds the rollouts,
			// the records cannot say which is this pane's: the daemon itself
			// says which thread runs (read-only), and the Watch is exact too.
			wantMode, wantConf := "exact_task", "exact"
			if w.WatchMode != wantMode || w.Confidence != wantConf || w.State != "active" {
				t.Fatalf("watch %+v, want %s/%s", w, wantMode, wantConf)
			}
			done := rec.waitTurn(t, w.WatchID, "watch.completed", 90*time.Second)
			if done.Data["confidence"] != wantConf {
				t.Fatalf("completion %+v", done.Data)
			}
			if wantConf == "exact" {
				if fm, _ := done.Data["final_message"].(string); !strings.Contains(fm, "slow") {
					t.Fatalf("final message %q", fm)
				}
			}

			// A task that stops at a permission prompt: observed, answered by the person.
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
			e.Submit(`[[akk:bash cmd="touch akk-watched && echo akk-watched-$((6*7))"]] run my check`)
			findRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, func(c conversationRow) bool {
				return c.Terminal.ScreenState == "awaiting_approval" && hasAction("watch")(c)
			})
			w2 := watch()
			rec.waitTurn(t, w2.WatchID, "watch.approval_observed", 30*time.Second)
			time.Sleep(500 * time.Millisecond)
			if toolResultsWith(e, "akk-watched-42") != 0 {
				t.Fatal("the command ran before the person answered")
			}
			e.Choose("Yes")
			rec.waitTurn(t, w2.WatchID, "watch.completed", 90*time.Second)
			if toolResultsWith(e, "akk-watched-42") != 1 {
				t.Fatal("the person's approval did not run the command once")
			}
			if n := userPrompts(e); n != 2 {
				t.Fatalf("the model saw %d prompts; the person typed 2 and AKK none", n)
			}
			var got watchAnswer
			if code := call(t, "GET", d.url+"/v1/watches/"+w2.WatchID, host.Token, "", &got); code != 200 || got.State != "completed" {
				t.Fatalf("watch status: %d %+v", code, got)
			}
		})
	}
}

// sharedDaemon reports whether agent a's version hands its threads to a
// shared app-server daemon (its profile's RolloutInProcess is false).
func sharedDaemon(a agenttest.Agent) bool {
	if a.Kind != agenttest.KindCodex {
		return false
	}
	for _, p := range codex.Profiles {
		if p.Version == a.Version {
			return !p.RolloutInProcess
		}
	}
	return false
}
