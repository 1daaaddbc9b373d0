package api

import "testing"

func TestValidateCall(t *testing.T) {
	ok := []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/turns", map[string]any{"terminal_id": "term_x", "request": "x"}},
		{"POST", "/v1/turns/turn_abc/approval", map[string]any{"decision": "approve_once"}},
		{"POST", "/v1/turns/turn_abc/close", map[string]any{}},
		{"POST", "/v1/turns/turn_abc/cancel", nil},
		{"DELETE", "/v1/watches/watch_abc", nil},
	}
	for _, c := range ok {
		if err := ValidateCall(c.method, c.path, c.body); err != nil {
			t.Errorf("%s %s %v: %v", c.method, c.path, c.body, err)
		}
	}
	bad := []struct {
		method, path string
		body         any
	}{
		// The list once advertised approve with every decision in an array.
		{"POST", "/v1/turns/turn_abc/approval", map[string]any{"decision": []string{"approve_once", "reject"}}},
		{"POST", "/v1/turns", map[string]any{"terminal_id": "term_x"}}, // no request
		{"POST", "/v1/turns", map[string]any{"request": "x", "raw_keys": "C-c"}},
		{"GET", "/v1/no-such-route", nil},
	}
	for _, c := range bad {
		if err := ValidateCall(c.method, c.path, c.body); err == nil {
			t.Errorf("%s %s %v: accepted", c.method, c.path, c.body)
		}
	}
}
