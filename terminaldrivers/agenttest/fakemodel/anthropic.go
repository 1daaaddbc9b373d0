package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

type anthropicRequest struct {
	Model    string             `json:"model"`
	Stream   bool               `json:"stream"`
	Messages []anthropicMessage `json:"messages"`
	Tools    []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type anthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type anthropicBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"` // tool_result: string or blocks
}

// blocks decodes content that is either a string or a list of blocks.
func (m anthropicMessage) blocks() []anthropicBlock {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var bs []anthropicBlock
	_ = json.Unmarshal(m.Content, &bs)
	return bs
}

// blockText flattens tool_result content (a string or text blocks).
func blockText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []anthropicBlock
	_ = json.Unmarshal(raw, &bs)
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// anthropicTurn finds the user's latest typed message (skipping messages that
// carry tool results and any trailing system entries) and the tool results
// that follow it.
func anthropicTurn(req anthropicRequest) turn {
	t := turn{aux: len(req.Tools) == 0}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		var texts, results []string
		for _, b := range m.blocks() {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_result":
				results = append(results, blockText(b.Content))
			}
		}
		text := cleanUserText(strings.Join(texts, "\n"))
		if len(results) > 0 && text == "" {
			t.toolResults = append(results, t.toolResults...)
			continue
		}
		// Typed text, possibly sent along with the results of the turn it
		// ended (a declined questionnaire, then a new message): a new turn.
		t.userText = text
		break
	}
	return t
}

var idSeq atomic.Int64

func newID(prefix string) string {
	return fmt.Sprintf("%s_akkfake%012d%06d", prefix, time.Now().UnixMilli()%1e12, idSeq.Add(1))
}

func (s *Server) serveAnthropic(w http.ResponseWriter, r *http.Request) {
	var req anthropicRequest
	body, err := readBody(r, &req)
	if err != nil {
		s.logger.Printf("anthropic: %v", err)
		writeJSON(w, http.StatusBadRequest, anthropicError(http.StatusBadRequest, err.Error()))
		return
	}
	t := anthropicTurn(req)
	p := s.plan(APIAnthropic, t)
	id := s.recordPlayed(APIAnthropic, r, body, req.Model, "", t, p, anthropicToolName)
	if p.status != 0 {
		writeJSON(w, p.status, anthropicError(p.status, p.errMsg))
		return
	}
	if !req.Stream {
		writeJSON(w, http.StatusOK, anthropicMessageJSON(req.Model, p))
		s.update(id, func(r *Request) { r.Finished = time.Now() })
		return
	}
	e := newSSE(w, r)
	streamAnthropic(e, req.Model, p)
	s.finish(id, e)
}

func anthropicError(status int, msg string) map[string]any {
	typ := "api_error"
	switch status {
	case 400:
		typ = "invalid_request_error"
	case 401:
		typ = "authentication_error"
	case 404:
		typ = "not_found_error"
	case 429:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	return map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}}
}

func anthropicToolName(tc *toolCall) string {
	if tc.kind == toolNamed {
		return tc.name
	}
	if tc.kind == toolAsk {
		return "AskUserQuestion"
	}
	return "Bash"
}

func anthropicToolInput(tc *toolCall) map[string]any {
	if tc.kind == toolNamed {
		return tc.input
	}
	if tc.kind == toolShell {
		return map[string]any{"command": tc.cmd, "description": "Run the command the task needs"}
	}
	qs := make([]map[string]any, 0, len(tc.questions))
	for _, q := range tc.questions {
		opts := make([]map[string]string, 0, len(q.Options))
		for _, o := range q.Options {
			opts = append(opts, map[string]string{"label": o.Label, "description": o.Description})
		}
		qs = append(qs, map[string]any{"question": q.Question, "header": q.Header, "options": opts, "multiSelect": tc.multiSelect})
	}
	return map[string]any{"questions": qs}
}

func anthropicUsage() map[string]int {
	return map[string]int{"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
}

func anthropicMessageJSON(model string, p plan) map[string]any {
	content := []map[string]any{{"type": "text", "text": p.text}}
	stop := "end_turn"
	if p.tool != nil {
		content = append(content, map[string]any{"type": "tool_use", "id": newID("toolu"), "name": anthropicToolName(p.tool), "input": anthropicToolInput(p.tool)})
		stop = "tool_use"
	}
	return map[string]any{"id": newID("msg"), "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": anthropicUsage()}
}

func streamAnthropic(e *sse, model string, p plan) {
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": newID("msg"), "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}})
	e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]string{"type": "text", "text": ""}})
	e.event("ping", map[string]string{"type": "ping"})
	for i, piece := range p.parts() {
		if i == 1 && !e.quiet(p, func() { e.event("ping", map[string]string{"type": "ping"}) }) {
			return
		}
		if i > 0 && !e.sleep(p.pace) {
			return
		}
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]string{"type": "text_delta", "text": piece}})
	}
	e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	stop := "end_turn"
	if p.tool != nil {
		stop = "tool_use"
		input, _ := json.Marshal(anthropicToolInput(p.tool))
		e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{
			"type": "tool_use", "id": newID("toolu"), "name": anthropicToolName(p.tool), "input": map[string]any{}}})
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]string{"type": "input_json_delta", "partial_json": string(input)}})
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 1})
	}
	e.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 20}})
	e.event("message_stop", map[string]string{"type": "message_stop"})
}
