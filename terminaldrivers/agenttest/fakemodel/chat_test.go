package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// chatStream posts a Chat Completions request and reads its "data:"
// chunks: the text, the tool call (name and arguments), the finish
// reason, and whether it ended with [DONE].
func chatStream(t *testing.T, url string, body map[string]any) (text, tool, args, finish string, done bool, status int) {
	t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					Content   string `json:"content"`
					ToolCalls []struct {
						Function struct{ Name, Arguments string } `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("bad chunk %q: %v", line, err)
		}
		ch := c.Choices[0]
		text += ch.Delta.Content
		for _, tc := range ch.Delta.ToolCalls {
			tool, args = tc.Function.Name, tc.Function.Arguments
		}
		if ch.FinishReason != nil {
			finish = *ch.FinishReason
		}
	}
	return text, tool, args, finish, done, resp.StatusCode
}

var chatTools = []map[string]any{{"type": "function", "function": map[string]any{"name": "mcp__akk__akk_list"}}}

// Chat Completions (DeepSeek Harness's API): the default reply, a named
// tool call and its result echoed, a side request, an error, and the
// whole answer when not streamed; each recorded with its API.
func TestChatCompletionsScenarios(t *testing.T) {
	s, srv := newTestServer(t)
	user := func(text string) map[string]any { return map[string]any{"role": "user", "content": text} }
	sys := map[string]any{"role": "system", "content": "you are a harness"}

	text, tool, _, finish, done, _ := chatStream(t, srv.URL, map[string]any{"model": "m", "stream": true, "tools": chatTools, "messages": []any{sys, user("hi")}})
	if text != DefaultReply("hi") || tool != "" || finish != "stop" || !done {
		t.Errorf("reply = %q tool %q finish %q done %v", text, tool, finish, done)
	}

	// DeepSeek Harness's runtime context, a user message after the
	// session's first, is not the user's text.
	_, tool, args, finish, done, _ := chatStream(t, srv.URL, map[string]any{"model": "m", "stream": true, "tools": chatTools,
		"messages": []any{user(`[[akk:mcp_drive project=/p]] drive it`), user("Current runtime context. This snapshot supersedes earlier ones.")}})
	if tool != "mcp__akk__akk_list" || finish != "tool_calls" || !done || args != "{}" {
		t.Errorf("tool call: %q %q finish %q done %v", tool, args, finish, done)
	}

	text, _, _, _, _, _ = chatStream(t, srv.URL, map[string]any{"model": "m", "stream": true, "tools": chatTools, "messages": []any{
		user(`[[akk:bash]]`),
		map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
			"function": map[string]any{"name": "exec_command", "arguments": "{}"}}}},
		map[string]any{"role": "tool", "tool_call_id": "c1", "content": "Output:\nakk-bash-ran\n"},
	}})
	if !strings.Contains(text, "<<<Output:\nakk-bash-ran\n>>>") {
		t.Errorf("echo = %q", text)
	}

	if _, _, _, _, _, status := chatStream(t, srv.URL, map[string]any{"model": "m", "stream": true, "tools": chatTools, "messages": []any{user("[[akk:error]]")}}); status != 500 {
		t.Errorf("error status %d", status)
	}

	data, _ := json.Marshal(map[string]any{"model": "m", "tools": chatTools, "messages": []any{user("whole")}})
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var whole struct {
		Choices []struct {
			Message      struct{ Content string } `json:"message"`
			FinishReason string                   `json:"finish_reason"`
		} `json:"choices"`
	}
	json.NewDecoder(resp.Body).Decode(&whole)
	resp.Body.Close()
	if len(whole.Choices) != 1 || whole.Choices[0].Message.Content != DefaultReply("whole") || whole.Choices[0].FinishReason != "stop" {
		t.Errorf("whole answer %+v", whole)
	}

	// No tools offered: a side request (a title), not a played scenario.
	chatStream(t, srv.URL, map[string]any{"model": "m", "stream": true, "messages": []any{user("title please")}})
	reqs := s.Requests()
	if len(reqs) != 6 || reqs[0].API != APIChat || reqs[1].ToolCall != "mcp__akk__akk_list" || !reqs[5].Aux {
		t.Errorf("recorded %+v", reqs)
	}
}
