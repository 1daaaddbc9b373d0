package fakemodel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseMarker(t *testing.T) {
	tests := []struct {
		text, scenario string
		params         map[string]string
		ok             bool
	}{
		{"no marker here", "", nil, false},
		{"do it [[akk:bash]]", "bash", map[string]string{}, true},
		{`x [[akk:reply text="two words"]] y`, "reply", map[string]string{"text": "two words"}, true},
		{"[[akk:ask questions=2 multi=true]]", "ask", map[string]string{"questions": "2", "multi": "true"}, true},
		{"[[akk:slow secs=3]] then [[akk:error status=529]]", "error", map[string]string{"status": "529"}, true},
		{Marker("reply", "text", `say "hi" ]`), "reply", map[string]string{"text": `say "hi" ]`}, true},
	}
	for _, tt := range tests {
		scenario, params, ok := ParseMarker(tt.text)
		if scenario != tt.scenario || ok != tt.ok || len(params) != len(tt.params) {
			t.Errorf("ParseMarker(%q) = %q %v %v, want %q %v %v", tt.text, scenario, params, ok, tt.scenario, tt.params, tt.ok)
			continue
		}
		for k, v := range tt.params {
			if params[k] != v {
				t.Errorf("ParseMarker(%q)[%s] = %q, want %q", tt.text, k, params[k], v)
			}
		}
	}
}

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string
	data map[string]any
}

func post(t *testing.T, srv *httptest.Server, path string, body any) (*http.Response, []sseEvent) {
	t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(srv.URL+path, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []sseEvent
	sc := bufio.NewScanner(resp.Body)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("bad data line %q: %v", line, err)
			}
			events = append(events, sseEvent{name, m})
		}
	}
	return resp, events
}

// anthropicText joins the streamed text deltas; tool is the streamed tool
// name and input.
func anthropicText(events []sseEvent) (text, tool string, input map[string]any, stop string) {
	var partial string
	for _, e := range events {
		switch e.name {
		case "content_block_start":
			if cb, _ := e.data["content_block"].(map[string]any); cb["type"] == "tool_use" {
				tool, _ = cb["name"].(string)
			}
		case "content_block_delta":
			d, _ := e.data["delta"].(map[string]any)
			if s, ok := d["text"].(string); ok {
				text += s
			}
			if s, ok := d["partial_json"].(string); ok {
				partial += s
			}
		case "message_delta":
			d, _ := e.data["delta"].(map[string]any)
			stop, _ = d["stop_reason"].(string)
		}
	}
	if partial != "" {
		_ = json.Unmarshal([]byte(partial), &input)
	}
	return
}

func newTestServer(t *testing.T) (*Server, *httptest.Server) {
	s := New(Options{})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

var claudeTools = []map[string]any{{"name": "Bash"}, {"name": "AskUserQuestion"}}

func TestAnthropicScenarios(t *testing.T) {
	s, srv := newTestServer(t)
	userMsg := func(text string) map[string]any {
		return map[string]any{"role": "user", "content": []map[string]any{
			{"type": "text", "text": "<system-reminder>\ncontext\n</system-reminder>\n"},
			{"type": "text", "text": text},
		}}
	}
	system := map[string]any{"role": "system", "content": "trailing system entry"}

	// Default reply, with a trailing system message as Claude Code 2.1.267 sends.
	_, ev := post(t, srv, "/v1/messages?beta=true", map[string]any{"model": "m", "stream": true, "tools": claudeTools,
		"messages": []any{userMsg("hello"), system}})
	if text, _, _, stop := anthropicText(ev); text != DefaultReply("hello") || stop != "end_turn" {
		t.Errorf("reply = %q stop %q, want %q end_turn", text, stop, DefaultReply("hello"))
	}
	if ev[0].name != "message_start" || ev[len(ev)-1].name != "message_stop" {
		t.Errorf("stream from %s to %s, want message_start to message_stop", ev[0].name, ev[len(ev)-1].name)
	}

	// Bash tool call.
	_, ev = post(t, srv, "/v1/messages?beta=true", map[string]any{"model": "m", "stream": true, "tools": claudeTools,
		"messages": []any{userMsg("run [[akk:bash cmd=\"echo hi\"]]")}})
	if _, tool, input, stop := anthropicText(ev); tool != "Bash" || input["command"] != "echo hi" || stop != "tool_use" {
		t.Errorf("bash: tool %q input %v stop %q", tool, input, stop)
	}

	// Questionnaire.
	_, ev = post(t, srv, "/v1/messages", map[string]any{"model": "m", "stream": true, "tools": claudeTools,
		"messages": []any{userMsg("[[akk:ask questions=2 multi=true]]")}})
	_, tool, input, _ := anthropicText(ev)
	qs, _ := input["questions"].([]any)
	if tool != "AskUserQuestion" || len(qs) != 2 || qs[0].(map[string]any)["multiSelect"] != true {
		t.Errorf("ask: tool %q input %v", tool, input)
	}

	// A tool result is echoed verbatim.
	withResult := []any{userMsg("run [[akk:bash]]"),
		map[string]any{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": "t1", "name": "Bash", "input": map[string]any{}}}},
		map[string]any{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": "t1", "content": "line one\nline two"}}},
	}
	_, ev = post(t, srv, "/v1/messages", map[string]any{"model": "m", "stream": true, "tools": claudeTools, "messages": withResult})
	if text, tool, _, _ := anthropicText(ev); !strings.Contains(text, "<<<line one\nline two>>>") || tool != "" {
		t.Errorf("tool result echo = %q (tool %q)", text, tool)
	}

	// Typed text sent along with a tool result starts a new turn.
	_, ev = post(t, srv, "/v1/messages", map[string]any{"model": "m", "stream": true, "tools": claudeTools, "messages": []any{
		map[string]any{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": "t1", "content": "declined"}, {"type": "text", "text": "[[akk:bash]]"}}},
	}})
	if _, tool, _, _ := anthropicText(ev); tool != "Bash" {
		t.Errorf("text after a tool result: tool %q, want Bash", tool)
	}

	// A tool-less request is a side request: a title, recorded as aux.
	_, ev = post(t, srv, "/v1/messages", map[string]any{"model": "m", "stream": true, "messages": []any{userMsg("[[akk:bash]]")}})
	if text, tool, _, _ := anthropicText(ev); text != TitleText || tool != "" {
		t.Errorf("title = %q tool %q", text, tool)
	}
	reqs := s.Requests()
	if last := reqs[len(reqs)-1]; !last.Aux || last.Scenario != ScenarioTitle || last.Finished.IsZero() {
		t.Errorf("title request recorded as %+v", last)
	}
	if first := reqs[0]; first.UserText != "hello" || first.Scenario != ScenarioReply {
		t.Errorf("first request recorded as %+v", first)
	}
}

func TestAnthropicStepsAndErrors(t *testing.T) {
	_, srv := newTestServer(t)
	msgs := []any{map[string]any{"role": "user", "content": "[[akk:steps n=2]]"}}
	for i := 1; i <= 3; i++ {
		_, ev := post(t, srv, "/v1/messages", map[string]any{"model": "m", "stream": true, "tools": claudeTools, "messages": msgs})
		text, tool, input, _ := anthropicText(ev)
		if i <= 2 {
			if tool != "Bash" || input["command"] != "echo akk-step-"+string(rune('0'+i)) {
				t.Fatalf("step %d: tool %q input %v", i, tool, input)
			}
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": []map[string]any{{"type": "tool_use", "id": "t", "name": "Bash", "input": input}}},
				map[string]any{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": "t", "content": "akk-step-" + string(rune('0'+i))}}})
			continue
		}
		if tool != "" || !strings.Contains(text, "<<<akk-step-1>>>") || !strings.Contains(text, "<<<akk-step-2>>>") {
			t.Errorf("final step: %q tool %q", text, tool)
		}
	}

	resp, _ := post(t, srv, "/v1/messages", map[string]any{"model": "m", "stream": true, "tools": claudeTools,
		"messages": []any{map[string]any{"role": "user", "content": "[[akk:error status=529]]"}}})
	if resp.StatusCode != 529 {
		t.Errorf("error status = %d, want 529", resp.StatusCode)
	}
}

var codexTools = []map[string]any{{"type": "function", "name": "exec_command"}, {"type": "function", "name": "request_user_input"}}

func openaiUser(text string) map[string]any {
	return map[string]any{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": text}}}
}

// openaiOutput returns the streamed text and the completed function call.
func openaiOutput(events []sseEvent) (text string, call map[string]any, completed bool) {
	for _, e := range events {
		switch e.name {
		case "response.output_text.delta":
			text += e.data["delta"].(string)
		case "response.output_item.done":
			if it, _ := e.data["item"].(map[string]any); it["type"] == "function_call" {
				call = it
			}
		case "response.completed":
			completed = true
		}
	}
	return
}

func TestOpenAIScenarios(t *testing.T) {
	s, srv := newTestServer(t)
	env := openaiUser("<environment_context>cwd</environment_context>")

	_, ev := post(t, srv, "/v1/responses", map[string]any{"model": "m", "stream": true, "tools": codexTools, "input": []any{env, openaiUser("hi")}})
	if text, call, done := openaiOutput(ev); text != DefaultReply("hi") || call != nil || !done {
		t.Errorf("reply = %q call %v completed %v", text, call, done)
	}

	_, ev = post(t, srv, "/v1/responses", map[string]any{"model": "m", "stream": true, "tools": codexTools, "input": []any{env, openaiUser("[[akk:bash]]")}})
	_, call, _ := openaiOutput(ev)
	var args map[string]any
	if call != nil {
		_ = json.Unmarshal([]byte(call["arguments"].(string)), &args)
	}
	if call == nil || call["name"] != "exec_command" || args["sandbox_permissions"] != "require_escalated" || args["justification"] == "" || args["cmd"] != DefaultBashCommand {
		t.Errorf("bash: call %v args %v", call, args)
	}

	// Tools offered in an additional_tools item (newer Codex models) count.
	addl := map[string]any{"type": "additional_tools", "role": "developer", "tools": codexTools}
	_, ev = post(t, srv, "/v1/responses", map[string]any{"model": "m", "stream": true, "input": []any{addl, openaiUser("[[akk:ask]]")}})
	if _, call, _ = openaiOutput(ev); call == nil || call["name"] != "request_user_input" || !strings.Contains(call["arguments"].(string), `"id":"color"`) {
		t.Errorf("ask: call %v", call)
	}

	out := map[string]any{"type": "function_call_output", "call_id": "c", "output": "Output:\nakk-bash-ran\n"}
	_, ev = post(t, srv, "/v1/responses", map[string]any{"model": "m", "stream": true, "tools": codexTools,
		"input": []any{openaiUser("[[akk:bash]]"), map[string]any{"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"}, out}})
	if text, _, _ := openaiOutput(ev); !strings.Contains(text, "<<<Output:\nakk-bash-ran\n>>>") {
		t.Errorf("echo = %q", text)
	}
	// At midnight Codex tells the model the new date in an environment
	// context message of its own, after the tool's result: not the user's.
	newDay := openaiUser("<environment_context>\n  <current_date>2026-12-07</current_date>\n</environment_context>")
	_, ev = post(t, srv, "/v1/responses", map[string]any{"model": "m", "stream": true, "tools": codexTools,
		"input": []any{openaiUser("[[akk:bash]]"), map[string]any{"type": "function_call", "call_id": "c", "name": "exec_command", "arguments": "{}"}, out, newDay}})
	if text, _, _ := openaiOutput(ev); !strings.Contains(text, "<<<Output:\nakk-bash-ran\n>>>") {
		t.Errorf("echo after a new day's context = %q", text)
	}

	// The title request asks for JSON output.
	_, ev = post(t, srv, "/v1/responses", map[string]any{"model": "m", "stream": true, "tools": []map[string]any{{"type": "custom", "name": "apply_patch"}},
		"text": map[string]any{"format": map[string]any{"type": "json_schema"}}, "input": []any{openaiUser("Generate a title [[akk:bash]]")}})
	if text, call, _ := openaiOutput(ev); text != `{"title":"`+TitleText+`"}` || call != nil {
		t.Errorf("title = %q call %v", text, call)
	}

	resp, _ := post(t, srv, "/v1/responses", map[string]any{"model": "m", "stream": true, "tools": codexTools, "input": []any{openaiUser("[[akk:error]]")}})
	if resp.StatusCode != 500 {
		t.Errorf("error status = %d", resp.StatusCode)
	}

	// The request log is served as JSON.
	r, err := http.Get(srv.URL + "/_fake/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var logged []Request
	if err := json.NewDecoder(r.Body).Decode(&logged); err != nil {
		t.Fatal(err)
	}
	if len(logged) != len(s.Requests()) || logged[1].Scenario != ScenarioBash || logged[1].ToolCall != "exec_command" {
		t.Errorf("logged %d requests, second %+v", len(logged), logged[1])
	}
}

func TestSlowReplyInterrupted(t *testing.T) {
	s, srv := newTestServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	data, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "tools": claudeTools,
		"messages": []any{map[string]any{"role": "user", "content": "[[akk:slow secs=30]]"}}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/messages", bytes.NewReader(data))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Read the first word, then hang up as an interrupted client does.
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), "slow-1") {
	}
	cancel()
	resp.Body.Close()
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	got, err := s.WaitRequest(wctx, func(r Request) bool { return r.Done() })
	if err != nil {
		t.Fatal(err)
	}
	if !got.Interrupted || got.Scenario != ScenarioSlow || got.Finished.Sub(got.Received) > 10*time.Second {
		t.Errorf("slow request recorded as %+v", got)
	}
}

func TestUnknownPathIsRecorded(t *testing.T) {
	s, srv := newTestServer(t)
	resp, err := http.Post(srv.URL+"/v1/something/new", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %d", resp.StatusCode)
	}
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Path != "/v1/something/new" || reqs[0].Status != 404 {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestErrorTimesThenRecovers(t *testing.T) {
	_, srv := newTestServer(t)
	body := map[string]any{"model": "m", "stream": true, "tools": codexTools, "input": []any{openaiUser("[[akk:error status=529 times=2]]")}}
	for i := 1; i <= 2; i++ {
		if resp, _ := post(t, srv, "/v1/responses", body); resp.StatusCode != 529 {
			t.Fatalf("attempt %d: status %d, want 529", i, resp.StatusCode)
		}
	}
	resp, ev := post(t, srv, "/v1/responses", body)
	if text, _, _ := openaiOutput(ev); resp.StatusCode != 200 || text != "Recovered after 2 failed attempts." {
		t.Errorf("third attempt: %d %q", resp.StatusCode, text)
	}
}

func TestClientRecorded(t *testing.T) {
	s, srv := newTestServer(t)
	data, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "tools": codexTools, "input": []any{openaiUser("hi")}})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/responses", bytes.NewReader(data))
	req.Header.Set("Authorization", "Bearer key-one")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	got := s.Requests()[0]
	if got.Client != ClientID("key-one") || got.Client == ClientID("key-two") || strings.Contains(got.Client, "key") {
		t.Errorf("client %q, want the digest of key-one", got.Client)
	}
}

// TestHeldAnswerWaitsForRelease: an ask_async or slow answer with
// hold=NAME stays quiet until Release(NAME), then streams to its end.
func TestHeldAnswerWaitsForRelease(t *testing.T) {
	user := func(text string) any {
		return map[string]any{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": text}}}
	}
	for name, input := range map[string][]any{
		"ask_async": {user("[[akk:ask_async secs=1 hold=h1]] go"), map[string]any{"type": "function_call_output", "call_id": "c", "output": "asked"}},
		"slow":      {user("[[akk:slow secs=2 lead=false hold=h1]] go")},
	} {
		t.Run(name, func(t *testing.T) { heldAnswer(t, input) })
	}
}

func heldAnswer(t *testing.T, input []any) {
	s, srv := newTestServer(t)
	data, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "tools": []map[string]any{{"type": "function", "name": "exec_command"}},
		"input": input})
	resp, err := http.Post(srv.URL+"/v1/responses", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// The first piece comes at once; then keep-alives only, until released.
	keepAlives := 0
	for l := range lines {
		if strings.Contains(l, "slow-1") {
			t.Fatal("the held part streamed before Release")
		}
		if strings.HasPrefix(l, ": keep-alive") {
			if keepAlives++; keepAlives == 2 {
				break
			}
		}
	}
	s.Release("h1")
	done := false
	for l := range lines {
		if strings.Contains(l, "response.completed") {
			done = true
		}
	}
	if !done {
		t.Fatal("the held answer never completed after Release")
	}
}

// An approval callback in a host session whose task mcp_drive sent with
// on_approval=approve: status, then approve once, then a final answer;
// without that earlier marker, or for another event, a plain reply.
func TestHostCallbackApprovesOnce(t *testing.T) {
	earlier := []string{"[Fri] " + Marker(ScenarioMCP, "project", "/p", "text", "x", "prefix", "akk__", "follow", "false", "on_approval", "approve")}
	cb := "SECURITY NOTICE ... AKK turn.approval_required: Turn turn_ab12CD is awaiting_approval. (A wake-up signal)"
	for i, want := range []string{"akk__akk_status", "akk__akk_approve", ""} {
		results := make([]string, i)
		p := decide(turn{userText: cb, earlier: earlier, toolResults: results})
		got := ""
		if p.tool != nil {
			got = p.tool.name
			if p.tool.input["turn_id"] != "turn_ab12CD" {
				t.Fatalf("step %d: input %v", i, p.tool.input)
			}
		}
		if got != want {
			t.Fatalf("step %d: tool %q, want %q", i, got, want)
		}
	}
	for _, c := range []turn{
		{userText: cb},
		{userText: strings.Replace(cb, "approval_required", "completed", 1), earlier: earlier},
	} {
		if p := decide(c); p.tool != nil || p.scenario != ScenarioReply {
			t.Fatalf("%q: %+v", c.userText, p)
		}
	}
}
