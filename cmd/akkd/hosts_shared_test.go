package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// What every host test (OpenClaw, Pi, DeepSeek Harness) checks the same
// way: the host's model, scripted through its chat, drives AKK's tools; its
// requests to the fake model (client: its API key's id) show what it did
// and what woke it.

// requireHost skips (or with AKK_REQUIRE_TOOLS=1 fails) a test when the
// host (name, installed in dir by `make target`) is not there.
func requireHost(t testing.TB, name, dir, target string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short (make check): no " + name)
	}
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		if os.Getenv("AKK_REQUIRE_TOOLS") == "1" {
			t.Fatalf("%s is not installed in %s (make %s)", name, dir, target)
		}
		t.Skipf("%s is not installed in %s (make %s)", name, dir, target)
	}
}

// hostSent waits for the host's model to have AKK's akk_send answer for
// the task carrying marker, and returns the Turn it made.
func hostSent(t *testing.T, model *fakemodel.Server, client, marker string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.Patient(3*time.Minute))
	sent, err := model.WaitRequest(ctx, func(r fakemodel.Request) bool {
		return r.Client == client && strings.Contains(r.UserText, marker) && len(r.ToolResults) == 2
	})
	cancel()
	if err != nil {
		t.Fatalf("no akk_send result reached the host's model: %v\n%s", err, requestsOf(model, client))
	}
	var res struct {
		TurnID  string `json:"turn_id"`
		Outcome string `json:"outcome"`
	}
	json.Unmarshal(fakemodel.ResultJSON(sent.ToolResults[1]), &res)
	if res.TurnID == "" || res.Outcome != "done" {
		t.Fatalf("akk_send answered %s", sent.ToolResults[1])
	}
	return res.TurnID
}

// hostWoke waits for the Turn's completion callback to reach the host's
// model and checks it ran in the session that sent the task (its earlier
// messages hold marker, and none of others) with the final message.
func hostWoke(t *testing.T, model *fakemodel.Server, client, turnID, text, marker string, others []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.Patient(3*time.Minute))
	woke, err := model.WaitRequest(ctx, func(r fakemodel.Request) bool {
		return strings.Contains(r.UserText, "turn.completed") && strings.Contains(r.UserText, turnID)
	})
	cancel()
	if err != nil {
		t.Fatalf("the completion of %s never reached the host's model: %v\n%s", turnID, err, requestsOf(model, client))
	}
	if woke.Client != client {
		t.Fatalf("the completion of %s woke another host (%s)", turnID, woke.Client)
	}
	if !strings.Contains(woke.UserText, fakemodel.DefaultReply(text)) {
		t.Fatalf("the callback does not hold the final message: %s", woke.UserText)
	}
	holds := func(m string) bool {
		return slices.ContainsFunc(woke.Earlier, func(e string) bool { return strings.Contains(e, m) })
	}
	if !holds(marker) {
		t.Fatalf("the callback ran outside the session that sent the task; earlier messages: %q", woke.Earlier)
	}
	for _, o := range others {
		if holds(o) {
			t.Fatalf("the callback of %s ran in another session too", turnID)
		}
	}
}

// hostApprovedOnce waits for the host's model, woken by
// turn.approval_required, to have read akk_status and answered akk_approve
// once, then for the approved Turn to complete in conversation conv with
// the command's output, which reached the agent's model once.
func hostApprovedOnce(t *testing.T, model *fakemodel.Server, client, base, token, conv string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agenttest.Patient(3*time.Minute))
	approved, err := model.WaitRequest(ctx, func(r fakemodel.Request) bool {
		return r.Client == client && strings.Contains(r.UserText, "turn.approval_required") && len(r.ToolResults) == 2
	})
	cancel()
	if err != nil {
		t.Fatalf("the approval callback was not answered: %v\n%s", err, requestsOf(model, client))
	}
	var ans struct {
		TurnID     string `json:"turn_id"`
		Outcome    string `json:"outcome"`
		DoNotRetry bool   `json:"do_not_retry"`
	}
	json.Unmarshal(fakemodel.ResultJSON(approved.ToolResults[1]), &ans)
	if ans.TurnID == "" || ans.Outcome != "done" || ans.DoNotRetry {
		t.Fatalf("akk_approve answered %s", approved.ToolResults[1])
	}
	var st map[string]any
	for deadline := time.Now().Add(agenttest.Patient(2 * time.Minute)); ; time.Sleep(500 * time.Millisecond) {
		call(t, "GET", base+"/v1/turns/"+ans.TurnID, token, "", &st)
		if st["state"] == "completed" || time.Now().After(deadline) {
			break
		}
	}
	res, _ := st["result"].(map[string]any)
	if fm, _ := res["final_message"].(string); st["conversation"] != conv || !strings.Contains(fm, "akk-bash-ran") {
		t.Fatalf("the approved Turn: %v", st)
	}
	ran := 0
	for _, r := range model.Requests() {
		for _, tr := range r.ToolResults {
			if r.Client != client && strings.Contains(tr, "akk-bash-ran") {
				ran++
			}
		}
	}
	if ran != 1 {
		t.Fatalf("the approved command's output reached the agent's model %d times", ran)
	}
}

// paneWorld is a real akkd watching the newest Claude Code's and Codex's
// panes, both on one fake model: what the host and push tests drive.
type paneWorld struct {
	model         *fakemodel.Server
	claude, codex *agenttest.Env
	d             *proc
	op            string // the operator token
}

func newPaneWorld(t *testing.T) paneWorld {
	t.Helper()
	claudeA, codexA := newestClaudeAndCodex(t)
	daemonBinary(t)
	model := fakemodel.New(fakemodel.Options{})
	if err := model.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	w := paneWorld{model: model}
	w.claude = agenttest.New(t, claudeA, agenttest.Options{Model: model})
	w.codex = agenttest.New(t, codexA, agenttest.Options{Model: model})
	w.d = startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+w.claude.SocketPath()+":"+w.codex.SocketPath())
	w.op = w.d.token()
	w.claude.StartReady()
	w.codex.StartReady()
	return w
}
