package fakemodel

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

type openaiRequest struct {
	Model  string       `json:"model"`
	Stream bool         `json:"stream"`
	Input  []openaiItem `json:"input"`
	Tools  []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Text struct {
		Format struct {
			Type string `json:"type"`
		} `json:"format"`
	} `json:"text"`
	Reasoning *struct {
		Effort string `json:"effort"`
	} `json:"reasoning"`
}

type openaiItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Output  json.RawMessage `json:"output"`
	Tools   json.RawMessage `json:"tools"` // additional_tools items
}

// itemText flattens message content: a string or input_text/output_text parts.
func itemText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// outputText flattens a function_call_output: a string, a list of content
// parts, or an object with a content field.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && len(obj.Content) > 0 {
		return outputText(obj.Content)
	}
	return itemText(raw)
}

// openaiTurn finds the user's latest message and the tool outputs after it.
// A request for structured output (Codex's title request) or one offering no
// tools at all is a side request. Newer Codex models get their tools in an
// "additional_tools" input item instead of the tools field.
func openaiTurn(req openaiRequest) turn {
	tools := len(req.Tools) > 0
	for _, it := range req.Input {
		if it.Type == "additional_tools" && len(it.Tools) > 2 {
			tools = true
		}
	}
	t := turn{aux: !tools || req.Text.Format.Type == "json_schema", jsonTitle: req.Text.Format.Type == "json_schema", openai: true}
	for _, tool := range req.Tools {
		if tool.Name == "apply_patch" && tool.Type == "custom" {
			t.freeformPatch = true
		}
	}
	for _, it := range req.Input {
		if it.Type == "additional_tools" && strings.Contains(string(it.Tools), `"custom"`) && strings.Contains(string(it.Tools), `"apply_patch"`) {
			t.freeformPatch = true
		}
	}
	for i := len(req.Input) - 1; i >= 0; i-- {
		it := req.Input[i]
		switch {
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			t.toolResults = append([]string{outputText(it.Output)}, t.toolResults...)
		case it.Role == "user" && (it.Type == "message" || it.Type == ""):
			text := cleanUserText(itemText(it.Content))
			if text == "" {
				continue // a host's context message (OpenClaw's), not typed text
			}
			t.userText = text
			for _, e := range req.Input[:i] {
				if e.Role == "user" && (e.Type == "message" || e.Type == "") {
					if et := cleanUserText(itemText(e.Content)); et != "" {
						t.earlier = append(t.earlier, et)
					}
				}
			}
			return t
		}
	}
	return t
}

func (s *Server) serveOpenAI(w http.ResponseWriter, r *http.Request) {
	var req openaiRequest
	body, err := readBody(r, &req)
	if err != nil {
		s.logger.Printf("openai: %v", err)
		writeJSON(w, http.StatusBadRequest, openaiError(http.StatusBadRequest, err.Error()))
		return
	}
	t := openaiTurn(req)
	p := s.plan(APIOpenAI, t)
	effort := ""
	if req.Reasoning != nil {
		effort = req.Reasoning.Effort
	}
	id := s.recordPlayed(APIOpenAI, r, body, req.Model, effort, t, p, openaiToolName)
	if p.status != 0 {
		writeJSON(w, p.status, openaiError(p.status, p.errMsg))
		return
	}
	e := newSSE(w, r)
	streamOpenAI(e, req.Model, p)
	s.finish(id, e)
}

func openaiError(status int, msg string) map[string]any {
	typ, code := "server_error", "server_error"
	switch status {
	case 400:
		typ, code = "invalid_request_error", "invalid_request"
	case 429:
		typ, code = "rate_limit_exceeded", "rate_limit_exceeded"
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}}
}

func openaiToolName(tc *toolCall) string {
	if tc.kind == toolNamed {
		return tc.name
	}
	if tc.kind == toolAsk {
		return "request_user_input"
	}
	if tc.kind == toolAskAsync {
		return "request_user_input_async"
	}
	if tc.kind == toolPatch {
		return "apply_patch"
	}
	return "exec_command"
}

func openaiToolArgs(tc *toolCall) string {
	var v map[string]any
	if tc.kind == toolNamed {
		v = tc.input
	} else if tc.kind == toolPatch {
		v = map[string]any{"input": tc.input["patch"]}
	} else if tc.kind == toolShell {
		v = map[string]any{"cmd": tc.cmd}
		if tc.escalate {
			v["sandbox_permissions"] = "require_escalated"
			v["justification"] = tc.justification
		}
	} else if tc.kind == toolAskAsync {
		qs := make([]map[string]any, 0, len(tc.questions))
		for _, q := range tc.questions {
			opts := make([]string, 0, len(q.Options))
			for _, o := range q.Options {
				opts = append(opts, o.Label)
			}
			qs = append(qs, map[string]any{"title": q.Question, "options": opts})
		}
		v = map[string]any{"questions": qs}
	} else {
		qs := make([]map[string]any, 0, len(tc.questions))
		for _, q := range tc.questions {
			opts := make([]map[string]string, 0, len(q.Options))
			for _, o := range q.Options {
				opts = append(opts, map[string]string{"label": o.Label, "description": o.Description})
			}
			qs = append(qs, map[string]any{"id": q.ID, "header": q.Header, "question": q.Question, "options": opts})
		}
		v = map[string]any{"questions": qs}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func streamOpenAI(e *sse, model string, p plan) {
	respID := newID("resp")
	created := time.Now().Unix()
	seq := 0
	ev := func(name string, v map[string]any) {
		v["type"] = name
		v["sequence_number"] = seq
		seq++
		e.event(name, v)
	}
	resp := func(status string, output []any) map[string]any {
		r := map[string]any{"id": respID, "object": "response", "created_at": created, "status": status, "model": model, "output": output}
		if status == "completed" {
			r["usage"] = map[string]any{"input_tokens": 100, "input_tokens_details": map[string]int{"cached_tokens": 0},
				"output_tokens": 20, "output_tokens_details": map[string]int{"reasoning_tokens": 0}, "total_tokens": 120}
		}
		return r
	}
	ev("response.created", map[string]any{"response": resp("in_progress", []any{})})
	ev("response.in_progress", map[string]any{"response": resp("in_progress", []any{})})

	msgID := newID("msg")
	part := func(text string) map[string]any {
		return map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
	}
	ev("response.output_item.added", map[string]any{"output_index": 0, "item": map[string]any{
		"id": msgID, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}})
	ev("response.content_part.added", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "part": part("")})
	for i, piece := range p.parts() {
		if i == 1 && !e.quiet(p, e.comment) {
			return
		}
		if i > 0 && !e.sleep(p.pace) {
			return
		}
		ev("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "delta": piece})
	}
	ev("response.output_text.done", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "text": p.text})
	ev("response.content_part.done", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "part": part(p.text)})
	msg := map[string]any{"id": msgID, "type": "message", "status": "completed", "role": "assistant", "content": []any{part(p.text)}}
	ev("response.output_item.done", map[string]any{"output_index": 0, "item": msg})
	output := []any{msg}
	if p.tool != nil && p.tool.kind == toolPatch && p.tool.freeform {
		patch, _ := p.tool.input["patch"].(string)
		fc := map[string]any{"id": newID("ctc"), "type": "custom_tool_call", "status": "completed", "call_id": newID("call"),
			"name": "apply_patch", "input": patch}
		added := map[string]any{}
		for k, v := range fc {
			added[k] = v
		}
		added["status"], added["input"] = "in_progress", ""
		ev("response.output_item.added", map[string]any{"output_index": 1, "item": added})
		ev("response.custom_tool_call_input.delta", map[string]any{"item_id": fc["id"], "output_index": 1, "delta": patch})
		ev("response.custom_tool_call_input.done", map[string]any{"item_id": fc["id"], "output_index": 1, "input": patch})
		ev("response.output_item.done", map[string]any{"output_index": 1, "item": fc})
		output = append(output, fc)
	} else if p.tool != nil {
		fc := map[string]any{"id": newID("fc"), "type": "function_call", "status": "completed", "call_id": newID("call"),
			"name": openaiToolName(p.tool), "arguments": openaiToolArgs(p.tool)}
		added := map[string]any{}
		for k, v := range fc {
			added[k] = v
		}
		added["status"], added["arguments"] = "in_progress", ""
		ev("response.output_item.added", map[string]any{"output_index": 1, "item": added})
		ev("response.function_call_arguments.delta", map[string]any{"item_id": fc["id"], "output_index": 1, "delta": fc["arguments"]})
		ev("response.function_call_arguments.done", map[string]any{"item_id": fc["id"], "output_index": 1, "arguments": fc["arguments"]})
		ev("response.output_item.done", map[string]any{"output_index": 1, "item": fc})
		output = append(output, fc)
	}
	ev("response.completed", map[string]any{"response": resp("completed", output)})
}
