package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// DriftEnv names the releases TestDrift tries ("claude@2.1.333,codex@0.172.0"),
// installed in the agent cache; `make drift` sets it to the registry's
// newest release of each agent.
const DriftEnv = "AKK_DRIFT"

// TestDrift tries, on each release DriftEnv names, what a host does with
// AKK, and prints a table of what works there: list, send, a permission
// prompt through each channel, a question, models, permissions. A tool,
// not part of `make test`: it skips without DriftEnv.
func TestDrift(t *testing.T) {
	names := os.Getenv(DriftEnv)
	if names == "" {
		t.Skip("make drift sets " + DriftEnv)
	}
	var table []string
	for _, name := range strings.Split(names, ",") {
		kind, version, ok := strings.Cut(strings.TrimSpace(name), "@")
		if !ok {
			t.Fatalf("%s: %q is not kind@version", DriftEnv, name)
		}
		a := agenttest.Agent{Kind: kind, Version: version, Dir: filepath.Join(agenttest.AgentsDir(), kind+"@"+version)}
		if !a.Installed() {
			t.Fatalf("%s is not installed (make drift installs it)", a.Name())
		}
		row := drift(t, a)
		table = append(table, row)
	}
	fmt.Println("\n| agent | version | profile | list | send | prompt, exact channel | prompt, screen | question | models | permissions |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range table {
		fmt.Println(r)
	}
}

// drift tries a on a fresh pane and daemon; each check is a subtest, so a
// failed one is shown and the others still run.
func drift(t *testing.T, a agenttest.Agent) string {
	res := map[string]string{}
	check := func(name string, f func(t *testing.T) string) {
		var got string
		if t.Run(a.Name()+"/"+name, func(t *testing.T) { got = f(t) }) {
			res[name] = got
		} else {
			res[name] = "no"
		}
	}
	e := agenttest.New(t, a, agenttest.Options{})
	rec := newReceiver(t, "")
	d := startDaemon(t, t.TempDir(), map[string]string{"AKK_TMUX_SOCKETS": e.SocketPath()})
	defer d.stop()
	if a.Kind == agenttest.KindClaude {
		akkCLI(t, d, "hooks", "install", "claude-code", "--settings", filepath.Join(e.Home, ".claude", "settings.json"))
	}
	e.StartReady()
	var host hostCreds
	call(t, "POST", d.url+"/v1/hosts", d.token, `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
	var row conversationRow
	profile := "?"
	check("list", func(t *testing.T) string {
		row = findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, hasSend)
		profile = row.Agent.Profile
		return "yes"
	})
	term := row.Terminal.TerminalID
	send := func(t *testing.T, body string) string {
		t.Helper()
		findRow(t, d.url, host.Token, e.ProjectDir, 60*time.Second, hasSend)
		var s sendAnswer
		if code := callConv(t, "POST", d.url+"/v1/turns", host.Token, body, "c1", &s); code != 202 {
			t.Fatalf("send: %d %+v", code, s)
		}
		return s.TurnID
	}
	// approve answers a Turn's prompt once and says how.
	approve := func(t *testing.T, id string) string {
		t.Helper()
		rec.waitTurn(t, id, "turn.approval_required", 60*time.Second)
		var st approvalStatus
		callConv(t, "GET", d.url+"/v1/turns/"+id, host.Token, "", "c1", &st)
		if st.Approval == nil || st.Approval.ManualRequired {
			var c struct{ Code string }
			callConv(t, "POST", d.url+"/v1/turns/"+id+"/cancel", host.Token, `{}`, "c1", &c)
			return "manual_required"
		}
		var r sendAnswer
		if code := callConv(t, "POST", d.url+"/v1/turns/"+id+"/approval", host.Token, `{"decision":"approve_once"}`, "c1", &r); code != 200 || r.Outcome != "done" {
			t.Fatalf("approve: %d %+v", code, r)
		}
		rec.waitTurn(t, id, "turn.completed", 60*time.Second)
		return "yes"
	}
	check("send", func(t *testing.T) string {
		id := send(t, `{"terminal_id":"`+term+`","request":"Say hello for the drift check"}`)
		rec.waitTurn(t, id, "turn.completed", 90*time.Second)
		return "yes"
	})
	// Read before the prompts and the question, whose Turns may keep the
	// pane held when AKK cannot answer them.
	for _, what := range []string{"models", "permissions"} {
		check(what, func(t *testing.T) string {
			var p struct{ Code string }
			code := call(t, "GET", d.url+"/v1/terminals/"+term+"/"+what, host.Token, "", &p)
			if code == 200 {
				return "yes"
			}
			return fmt.Sprintf("%d %s", code, p.Code)
		})
	}
	check("prompt_exact", func(t *testing.T) string {
		if a.Kind == agenttest.KindClaude {
			id := send(t, `{"terminal_id":"`+term+`","request":"[[akk:bash cmd=\"touch akk-drift-1\"]] drift"}`)
			how := approve(t, id)
			if r := findRow(t, d.url, host.Token, e.ProjectDir, 10*time.Second, func(conversationRow) bool { return true }); r.Terminal.Channels.Permission != "hook" {
				return how + " (channel " + r.Terminal.Channels.Permission + ")"
			}
			return how + " (hook)"
		}
		b := findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend)
		id := send(t, `{"conversation_id":"`+b.ConversationID+`","request":"drift `+fakemodel.Marker(fakemodel.ScenarioBash)+`"}`)
		return approve(t, id) + " (app_server)"
	})
	check("prompt_screen", func(t *testing.T) string {
		if a.Kind == agenttest.KindClaude {
			return "n/a (the hook has it)"
		}
		id := send(t, `{"terminal_id":"`+term+`","request":"[[akk:bash cmd=\"touch akk-drift-2\"]] drift"}`)
		return approve(t, id)
	})
	check("question", func(t *testing.T) string {
		target := `"terminal_id":"` + term + `"`
		how := " (screen)"
		if a.Kind == agenttest.KindCodex {
			e.WaitIdle(agenttest.TurnTimeout)
			e.PlanMode()
			target = `"conversation_id":"` + findBackendRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, backendSend).ConversationID + `"`
			how = " (app_server)"
		}
		id := send(t, `{`+target+`,"request":"drift `+fakemodel.Marker(fakemodel.ScenarioAsk)+`"}`)
		rec.waitTurn(t, id, "turn.interaction_required", 60*time.Second)
		var p projection
		if code := callConv(t, "GET", d.url+"/v1/turns/"+id+"/interaction", host.Token, "", "c1", &p); code != 200 || len(p.Questions) == 0 {
			callConv(t, "POST", d.url+"/v1/turns/"+id+"/cancel", host.Token, `{}`, "c1", nil)
			return fmt.Sprintf("manual_required (%d)", code)
		}
		var r sendAnswer
		if code := callConv(t, "POST", d.url+"/v1/turns/"+id+"/interaction", host.Token, answerBody(p, 0, ""), "c1", &r); code != 200 {
			t.Fatalf("answer: %d %+v", code, r)
		}
		rec.waitTurn(t, id, "turn.completed", 60*time.Second)
		return "yes" + how
	})
	return fmt.Sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", a.Kind, a.Version, profile,
		res["list"], res["send"], res["prompt_exact"], res["prompt_screen"], res["question"], res["models"], res["permissions"])
}
