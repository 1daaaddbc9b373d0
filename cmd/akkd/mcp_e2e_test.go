package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// mcpHost is one MCP client session of a host, with what it heard.
type mcpHost struct {
	t       *testing.T
	s       *mcp.ClientSession
	mu      sync.Mutex
	logs    []map[string]any
	updates []string
	heard   chan struct{}
}

type bearerRT struct{ token string }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectMCP(t *testing.T, url, token string) *mcpHost {
	t.Helper()
	h := &mcpHost{t: t, heard: make(chan struct{}, 1)}
	wake := func() {
		select {
		case h.heard <- struct{}{}:
		default:
		}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "akk-e2e", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			b, _ := json.Marshal(r.Params.Data)
			var m map[string]any
			json.Unmarshal(b, &m)
			h.mu.Lock()
			h.logs = append(h.logs, m)
			h.mu.Unlock()
			wake()
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			h.mu.Lock()
			h.updates = append(h.updates, r.Params.URI)
			h.mu.Unlock()
			wake()
		},
	})
	s, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp",
		HTTPClient: &http.Client{Transport: bearerRT{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	h.s = s
	return h
}

// call calls a tool; ok says whether it answered without a tool error.
func (h *mcpHost) call(name string, args map[string]any) (map[string]any, bool) {
	h.t.Helper()
	res, err := h.s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("%s: %v", name, err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var v map[string]any
	json.Unmarshal(b, &v)
	if len(res.Content) == 0 {
		h.t.Fatalf("%s: no text content", name)
	}
	return v, !res.IsError
}

func (h *mcpHost) must(name string, args map[string]any) map[string]any {
	h.t.Helper()
	v, ok := h.call(name, args)
	if !ok {
		h.t.Fatalf("%s %v refused: %v", name, args, v)
	}
	return v
}

// waitLog waits for a logging notification of this type about subject.
func (h *mcpHost) waitLog(typ, subject string, timeout time.Duration) {
	h.t.Helper()
	deadline := time.After(timeout)
	for {
		h.mu.Lock()
		for _, m := range h.logs {
			if m["type"] == typ && m["subject"] == subject {
				h.mu.Unlock()
				return
			}
		}
		h.mu.Unlock()
		select {
		case <-h.heard:
		case <-deadline:
			h.t.Fatalf("no %s notification for %s; heard %v", typ, subject, h.logs)
		}
	}
}

// statusUntil calls akk_status after every notification until the Turn
// is in one of states (evidence: each look follows an update).
func (h *mcpHost) statusUntil(turnID string, timeout time.Duration, states ...string) map[string]any {
	h.t.Helper()
	deadline := time.After(timeout)
	for {
		v := h.must("akk_status", map[string]any{"turn_id": turnID})
		for _, s := range states {
			if v["state"] == s {
				return v
			}
		}
		select {
		case <-h.heard:
		case <-deadline:
			h.t.Fatalf("turn %s never reached %v; last %v", turnID, states, v)
		}
	}
}

// sendAction is the send body a fresh akk_list offers for a project.
func (h *mcpHost) sendAction(project string) map[string]any {
	h.t.Helper()
	list := h.must("akk_list", map[string]any{})
	cs, _ := list["conversations"].([]any)
	for _, c := range cs {
		row := c.(map[string]any)
		if row["project"] != project {
			continue
		}
		acts, _ := row["available_actions"].([]any)
		for _, a := range acts {
			act := a.(map[string]any)
			if act["action"] == "send" && strings.HasPrefix(act["target"].(string), "terminal") {
				return act["body"].(map[string]any)
			}
		}
	}
	h.t.Fatalf("akk_list offers no send for %s: %v", project, list)
	return nil
}

// newestClaudeAndCodex is the newest pinned Claude Code and Codex (the
// test skips without both).
func newestClaudeAndCodex(t testing.TB) (claude, codex agenttest.Agent) {
	t.Helper()
	for _, a := range newestOfEachKind(agenttest.RequireAgents(t)) {
		switch a.Kind {
		case agenttest.KindClaude:
			claude = a
		case agenttest.KindCodex:
			codex = a
		}
	}
	if claude.Kind == "" || codex.Kind == "" {
		t.Skip("needs a Claude Code and a Codex")
	}
	return claude, codex
}

// TestE2EMCP drives AKK's MCP endpoint against real agent panes (the
// newest pinned Claude Code and Codex): with the Go SDK's client, list →
// send → status until completed; an approval prompt reached through a
// notification, then status, then approve; a questionnaire answered
// through akk_respond_interaction; another host's Turn invisible. With an
// independent client (@modelcontextprotocol/inspector's CLI), the tools
// over HTTP (schemas checked with --strict) and through `akk mcp` on
// stdio. Then Claude Code itself, with AKK as its MCP server, puts a task
// into the Codex pane and reads the result back: an agent driving an
// agent.
func TestE2EMCP(t *testing.T) {
	claudeA, codexA := newestClaudeAndCodex(t)
	daemonBinary(t)
	claude := agenttest.New(t, claudeA, agenttest.Options{})
	codex := agenttest.New(t, codexA, agenttest.Options{})
	d := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+claude.SocketPath()+":"+codex.SocketPath())
	op := d.token()
	rec := newReceiver(t, "")
	var a, b hostCreds
	call(t, "POST", d.url+"/v1/hosts", op, `{"name":"a","webhook_url":"http://`+rec.addr+`/a"}`, &a)
	call(t, "POST", d.url+"/v1/hosts", op, `{"name":"b","webhook_url":"http://`+rec.addr+`/b"}`, &b)
	// Claude Code's own MCP client speaks to AKK as host A.
	claude.AddMCPServer("akk", map[string]any{"type": "http", "url": d.url + "/mcp",
		"headers": map[string]string{"Authorization": "Bearer " + a.Token}})
	claude.StartReady()
	codex.StartReady()
	findRow(t, d.url, op, claude.ProjectDir, 60*time.Second, hasSend)
	findRow(t, d.url, op, codex.ProjectDir, 60*time.Second, hasSend)

	hostA := connectMCP(t, d.url, a.Token)
	hostB := connectMCP(t, d.url, b.Token)
	var turnsOfA []string

	t.Run("send_status", func(t *testing.T) {
		hostA.t = t
		body := hostA.sendAction(codex.ProjectDir)
		text := "a task through MCP"
		sent := hostA.must("akk_send", map[string]any{"terminal_id": body["terminal_id"], "request": text})
		id, _ := sent["turn_id"].(string)
		if id == "" || sent["outcome"] != "done" || sent["watch_id"] == "" {
			t.Fatalf("akk_send: %v", sent)
		}
		turnsOfA = append(turnsOfA, id)
		if err := hostA.s.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "akk://turns/" + id}); err != nil {
			t.Fatal(err)
		}
		st := hostA.statusUntil(id, 90*time.Second, "completed")
		res, _ := st["result"].(map[string]any)
		if fm, _ := res["final_message"].(string); !strings.Contains(fm, fakemodel.ReplyToken(text)) {
			t.Fatalf("final message %q", fm)
		}
		// The resource is the status.
		rr, err := hostA.s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "akk://turns/" + id})
		if err != nil || len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, `"completed"`) {
			t.Fatalf("resource: %v %+v", err, rr)
		}
		hostA.mu.Lock()
		updated := strings.Join(hostA.updates, " ")
		hostA.mu.Unlock()
		if !strings.Contains(updated, "akk://turns/"+id) {
			t.Fatalf("no resource update for the Turn; heard %s", updated)
		}
		hostA.waitLog("turn.completed", id, 30*time.Second)
	})

	t.Run("approval", func(t *testing.T) {
		hostA.t = t
		body := hostA.sendAction(claude.ProjectDir)
		sent := hostA.must("akk_send", map[string]any{"terminal_id": body["terminal_id"], "request": fakemodel.Marker("bash") + " run it through MCP"})
		id := sent["turn_id"].(string)
		turnsOfA = append(turnsOfA, id)
		// A notification says a prompt waits; the status says what may be done.
		hostA.waitLog("turn.approval_required", id, 90*time.Second)
		st := hostA.must("akk_status", map[string]any{"turn_id": id})
		ap, _ := st["approval"].(map[string]any)
		offered := false
		for _, d := range ap["decisions"].([]any) {
			offered = offered || d == "approve_once"
		}
		if !offered || st["state"] != "awaiting_approval" {
			t.Fatalf("status offers no approve_once: %v", st)
		}
		decision := map[string]any{"decision": "approve_once"}
		ans := hostA.must("akk_approve", map[string]any{"turn_id": id, "decision": decision["decision"]})
		if ans["do_not_retry"] == true {
			t.Fatalf("approve: %v", ans)
		}
		st = hostA.statusUntil(id, 90*time.Second, "completed")
		res, _ := st["result"].(map[string]any)
		if fm, _ := res["final_message"].(string); !strings.Contains(fm, "akk-bash-ran") {
			t.Fatalf("final message %q", fm)
		}
	})

	t.Run("questionnaire", func(t *testing.T) {
		hostA.t = t
		body := hostA.sendAction(claude.ProjectDir)
		sent := hostA.must("akk_send", map[string]any{"terminal_id": body["terminal_id"], "request": fakemodel.Marker("ask") + " pick a color through MCP"})
		id := sent["turn_id"].(string)
		turnsOfA = append(turnsOfA, id)
		hostA.waitLog("turn.interaction_required", id, 90*time.Second)
		for step := 0; ; step++ {
			st := hostA.statusUntil(id, 90*time.Second, "awaiting_interaction", "completed")
			if st["state"] == "completed" {
				res, _ := st["result"].(map[string]any)
				if fm, _ := res["final_message"].(string); !strings.Contains(fm, "Blue") {
					t.Fatalf("final message %q", fm)
				}
				break
			}
			if step > 3 {
				t.Fatalf("more steps than the questionnaire has: %v", st)
			}
			in, ok := hostA.call("akk_interaction", map[string]any{"turn_id": id})
			if !ok {
				continue // the step is changing: look again after the next update
			}
			var answers []map[string]any
			for _, x := range in["questions"].([]any) {
				q := x.(map[string]any)
				opts := q["options"].([]any)
				pick := opts[0].(map[string]any)
				for _, o := range opts {
					if o.(map[string]any)["label"] == "Blue" {
						pick = o.(map[string]any)
					}
				}
				answers = append(answers, map[string]any{"question_id": q["question_id"], "response_kind": q["response_kind"],
					"selected_option_ids": []any{pick["option_id"]}})
			}
			ans := hostA.must("akk_respond_interaction", map[string]any{"turn_id": id, "interaction_id": in["interaction_id"], "answers": answers})
			if ans["do_not_retry"] == true {
				t.Fatalf("respond_interaction: %v", ans)
			}
		}
	})

	t.Run("isolation", func(t *testing.T) {
		hostB.t = t
		for _, id := range turnsOfA {
			v, ok := hostB.call("akk_status", map[string]any{"turn_id": id})
			if code, _ := v["code"].(string); ok || !strings.HasSuffix(code, "not_found") {
				t.Fatalf("host B reads host A's Turn %s: %v", id, v)
			}
			if _, err := hostB.s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "akk://turns/" + id}); err == nil {
				t.Fatalf("host B reads host A's Turn resource %s", id)
			}
		}
		hostB.mu.Lock()
		defer hostB.mu.Unlock()
		for _, m := range hostB.logs {
			for _, id := range turnsOfA {
				if m["subject"] == id {
					t.Fatalf("host B heard of host A's Turn: %v", m)
				}
			}
		}
	})

	t.Run("inspector", func(t *testing.T) {
		bin := filepath.Join(nodeToolsDir(), "node_modules", ".bin", "mcp-inspector")
		if _, err := os.Stat(bin); err != nil {
			if os.Getenv("AKK_REQUIRE_TOOLS") == "1" {
				t.Fatalf("needs %s (make node-tools)", bin)
			}
			t.Skipf("needs %s (make node-tools)", bin)
		}
		// Over streamable HTTP; --strict fails on a schema a client could not use.
		out, err := exec.Command(bin, "--cli", d.url+"/mcp", "--transport", "http", "--header", "Authorization: Bearer "+a.Token,
			"--method", "tools/list", "--strict").CombinedOutput()
		if err != nil {
			t.Fatalf("inspector tools/list: %v\n%s", err, out)
		}
		var tl struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal(jsonPart(out), &tl); err != nil || len(tl.Tools) < 13 {
			t.Fatalf("inspector tools/list: %v\n%s", err, out)
		}
		// Through `akk mcp` on stdio, with host B's token: host B's view.
		akk := cliBinary(t)
		out, err = exec.Command(bin, "--cli", "--transport", "stdio", "--method", "tools/call", "--tool-name", "akk_list", "--",
			akk, "--url", d.url, "--token", b.Token, "mcp").CombinedOutput()
		if err != nil || !strings.Contains(string(out), codex.ProjectDir) {
			t.Fatalf("inspector akk_list through akk mcp: %v\n%s", err, out)
		}
		out, _ = exec.Command(bin, "--cli", "--transport", "stdio", "--method", "tools/call", "--tool-name", "akk_status",
			"--tool-arg", "turn_id="+turnsOfA[0], "--", akk, "--url", d.url, "--token", b.Token, "mcp").CombinedOutput()
		if !strings.Contains(string(out), "not_found") {
			t.Fatalf("host B through akk mcp reads host A's Turn:\n%s", out)
		}
	})

	t.Run("agent_drives_agent", func(t *testing.T) {
		// A person asks Claude Code to have Codex do a task; Claude Code
		// does it with AKK's tools alone.
		text := "a task from one agent to another"
		claude.Submit(fakemodel.Marker(fakemodel.ScenarioMCP, "project", codex.ProjectDir, "text", text))
		want := "MCP drive: turn "
		recs := claude.WaitTranscript("the drive's final answer", 180*time.Second, func(rs []agenttest.Record) bool {
			for _, r := range rs {
				if strings.Contains(r.Text(), want) {
					return true
				}
			}
			return false
		})
		var final string
		for _, r := range recs {
			if strings.Contains(r.Text(), want) {
				final = r.Text()
			}
		}
		if !strings.Contains(final, " completed: <<<") || !strings.Contains(final, fakemodel.ReplyToken(text)) {
			t.Fatalf("Claude Code's answer: %q", final)
		}
		// The task reached Codex as typed, once.
		n := 0
		for _, r := range codex.Requests() {
			if !r.Aux && r.UserText == text {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("Codex's model saw the task %d times", n)
		}
		var tools []string
		for _, r := range claude.Requests() {
			if r.ToolCall != "" {
				tools = append(tools, r.ToolCall)
			}
		}
		got := strings.Join(tools, " ")
		for _, w := range []string{"mcp__akk__akk_list", "mcp__akk__akk_send", "mcp__akk__akk_status"} {
			if !strings.Contains(got, w) {
				t.Fatalf("Claude Code's tool calls %s lack %s", got, w)
			}
		}
		t.Logf("Claude Code called: %s", got)
	})
}

// jsonPart is the JSON document in a tool's output (after any log lines).
func jsonPart(b []byte) []byte {
	s := string(b)
	if i := strings.Index(s, "{"); i >= 0 {
		return []byte(s[i:])
	}
	return b
}
