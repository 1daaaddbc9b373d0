package fakemodel

import (
	"encoding/json"
	"net/http"
	"time"
)

// OpenAI's Chat Completions, as DeepSeek Harness (and many hosts) speak
// it: a list of messages in, a stream of "data:" chunks out, ending with
// "data: [DONE]". The scenarios are the same as for the other APIs; a tool
// call is a function call named as in the Responses API.

type chatRequest struct {
	Model    string        `json:"model"`
	Stream   bool          `json:"stream"`
	Messages []chatMessage `json:"messages"`
	Tools    []struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	ReasoningEffort string `json:"reasoning_effort"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
}

// chatTurn finds the user's latest message and the tool results after it.
// A request offering no tools, or asking for JSON, is a side request.
func chatTurn(req chatRequest) turn {
	json := req.ResponseFormat != nil && req.ResponseFormat.Type != "" && req.ResponseFormat.Type != "text"
	t := turn{aux: len(req.Tools) == 0 || json, jsonTitle: json}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		switch m.Role {
		case "tool":
			t.toolResults = append([]string{outputText(m.Content)}, t.toolResults...)
		case "user":
			text := cleanUserText(itemText(m.Content))
			if text == "" {
				continue
			}
			t.userText = text
			for _, e := range req.Messages[:i] {
				if e.Role == "user" {
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

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	body, err := readBody(r, &req)
	if err != nil {
		s.logger.Printf("chat: %v", err)
		writeJSON(w, http.StatusBadRequest, openaiError(http.StatusBadRequest, err.Error()))
		return
	}
	t := chatTurn(req)
	p := s.plan(APIChat, t)
	id := s.recordPlayed(APIChat, r, body, req.Model, req.ReasoningEffort, t, p, openaiToolName)
	if p.status != 0 {
		writeJSON(w, p.status, openaiError(p.status, p.errMsg))
		return
	}
	if !req.Stream {
		if p.released != nil {
			select { // a held scenario holds a whole answer too
			case <-p.released:
			case <-r.Context().Done():
				return
			}
		}
		writeJSON(w, http.StatusOK, chatCompletion(req.Model, p))
		s.update(id, func(r *Request) { r.Finished = time.Now() })
		return
	}
	e := newSSE(w, r)
	streamChat(e, req.Model, p)
	s.finish(id, e)
}

// chatToolCall is the plan's tool call in Chat Completions' shape.
func chatToolCall(p plan) map[string]any {
	return map[string]any{"id": newID("call"), "type": "function",
		"function": map[string]any{"name": openaiToolName(p.tool), "arguments": openaiToolArgs(p.tool)}}
}

func chatUsage() map[string]any {
	return map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
}

// chatCompletion is a whole answer (stream: false).
func chatCompletion(model string, p plan) map[string]any {
	msg := map[string]any{"role": "assistant", "content": p.text}
	finish := "stop"
	if p.tool != nil {
		msg["tool_calls"] = []any{chatToolCall(p)}
		finish = "tool_calls"
	}
	return map[string]any{"id": newID("chatcmpl"), "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": chatUsage()}
}

func streamChat(e *sse, model string, p plan) {
	id, created := newID("chatcmpl"), time.Now().Unix()
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	e.data(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for i, piece := range p.parts() {
		if i == 1 && !e.quiet(p, e.comment) {
			return
		}
		if i > 0 && !e.sleep(p.pace) {
			return
		}
		e.data(chunk(map[string]any{"content": piece}, nil))
	}
	finish := "stop"
	if p.tool != nil {
		call := chatToolCall(p)
		call["index"] = 0
		e.data(chunk(map[string]any{"tool_calls": []any{call}}, nil))
		finish = "tool_calls"
	}
	last := chunk(map[string]any{}, finish)
	last["usage"] = chatUsage()
	e.data(last)
	e.data("[DONE]")
}
