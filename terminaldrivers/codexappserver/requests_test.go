package codexappserver

import (
	"encoding/json"
	"errors"
	"testing"
)

func request(id, method, params string) Message {
	m := Message{Method: method, Params: json.RawMessage(params)}
	if id != "" {
		m.ID = json.RawMessage(id)
	}
	return m
}

const approvalParams = `{"threadId":"th","turnId":"tu","itemId":"it","startedAtMs":1,"command":"touch x","cwd":"/p","reason":"why"}`

func TestParseCommandApproval(t *testing.T) {
	a, ok := ParseCommandApproval(request("7", MethodCommandApproval, approvalParams))
	if !ok || a.ThreadID != "th" || a.TurnID != "tu" || a.ItemID != "it" || a.Command == nil || *a.Command != "touch x" {
		t.Fatalf("parsed %+v, %v", a, ok)
	}
	for name, m := range map[string]Message{
		"a notification":  request("", MethodCommandApproval, approvalParams),
		"another method":  request("7", "item/fileChange/requestApproval", approvalParams),
		"no thread":       request("7", MethodCommandApproval, `{"turnId":"tu","itemId":"it"}`),
		"not an object":   request("7", MethodCommandApproval, `[1]`),
		"malformed JSON":  request("7", MethodCommandApproval, `{"threadId":`),
		"no item of turn": request("7", MethodCommandApproval, `{"threadId":"th","turnId":"tu"}`),
	} {
		if _, ok := ParseCommandApproval(m); ok {
			t.Errorf("%s parsed as a command approval", name)
		}
	}
}

const questionParams = `{"threadId":"th","turnId":"tu","itemId":"it","isBlocking":true,"questions":[
 {"id":"color","header":"Color","question":"Which color?","isOther":true,"isSecret":false,"options":[{"label":"Red","description":"warm"},{"label":"Blue","description":"cool"}]},
 {"id":"size","header":"Size","question":"Which size?","isOther":false,"isSecret":false,"options":[{"label":"Small","description":""},{"label":"Large","description":""}]}]}`

func TestUserInputResult(t *testing.T) {
	req := request(`"q-1"`, MethodUserInput, questionParams)
	got, err := UserInputResult(req, map[string]Answer{"color": {Text: "Teal, like the sea"}, "size": {Option: "Large"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	if want := `{"answers":{"color":{"answers":["Teal, like the sea"]},"size":{"answers":["Large"]}}}`; string(b) != want {
		t.Fatalf("result %s, want %s", b, want)
	}
	bad := map[string]map[string]Answer{
		"one answer for two questions": {"color": {Option: "Red"}},
		"an unknown question":          {"color": {Option: "Red"}, "shape": {Option: "Round"}},
		"an option not offered":        {"color": {Option: "Green"}, "size": {Option: "Large"}},
		"text where only options go":   {"color": {Option: "Red"}, "size": {Text: "Medium"}},
		"an option and text":           {"color": {Option: "Red", Text: "and more"}, "size": {Option: "Large"}},
		"nothing":                      {"color": {}, "size": {Option: "Large"}},
		"a non-breaking space":         {"color": {Text: "Teal\u00a0blue"}, "size": {Option: "Large"}},
		"a zero-width space":           {"color": {Text: "Teal\u200bblue"}, "size": {Option: "Large"}},
		"two lines":                    {"color": {Text: "Teal\nblue"}, "size": {Option: "Large"}},
		"a leading space":              {"color": {Text: " Teal"}, "size": {Option: "Large"}},
	}
	for name, answers := range bad {
		if _, err := UserInputResult(req, answers); !errors.Is(err, ErrNotAnswerable) {
			t.Errorf("%s: %v, want ErrNotAnswerable", name, err)
		}
	}
	secret := request("9", MethodUserInput, `{"threadId":"th","turnId":"tu","itemId":"it","isBlocking":true,"questions":[{"id":"pw","header":"Password","question":"Your password?","isOther":true,"isSecret":true,"options":null}]}`)
	if _, err := UserInputResult(secret, map[string]Answer{"pw": {Text: "hunter2"}}); !errors.Is(err, ErrNotAnswerable) {
		t.Fatalf("a secret question: %v, want ErrNotAnswerable", err)
	}
	dup := request("9", MethodUserInput, `{"threadId":"th","turnId":"tu","itemId":"it","isBlocking":true,"questions":[{"id":"a","header":"","question":"?"},{"id":"a","header":"","question":"?"}]}`)
	if _, ok := ParseUserInput(dup); ok {
		t.Fatal("two questions with one id parsed")
	}
	if _, err := UserInputResult(request("7", MethodCommandApproval, approvalParams), nil); !errors.Is(err, ErrNotAnswerable) {
		t.Fatalf("a command approval answered as a question: %v", err)
	}
}

func TestResolvedMatchesItsRequestByValueAndType(t *testing.T) {
	r, ok := ParseResolved(request("", MethodResolved, `{"requestId":7,"threadId":"th"}`))
	if !ok {
		t.Fatal("not parsed")
	}
	if !r.Resolves(request("7", MethodCommandApproval, approvalParams)) {
		t.Error("7 does not resolve request 7")
	}
	if r.Resolves(request(`"7"`, MethodCommandApproval, approvalParams)) || r.Resolves(request("8", MethodCommandApproval, approvalParams)) {
		t.Error("7 resolves request \"7\" or 8")
	}
	if _, ok := ParseResolved(request("3", MethodResolved, `{"requestId":7,"threadId":"th"}`)); ok {
		t.Error("a request parsed as the resolved notification")
	}
}

func TestShellScriptIsTheWrappedScriptOnlyWhenExact(t *testing.T) {
	for cmd, want := range map[string]string{
		"/bin/bash -lc 'touch notes.txt'":         "touch notes.txt",
		"bash -lc 'touch notes.txt; rm x'":        "touch notes.txt; rm x", // the rule refuses the script itself
		"/bin/zsh -lc 'ls'":                       "ls",
		"/bin/sh -c 'ls'":                         "ls",
		"touch notes.txt":                         "",
		"/bin/bash -lc 'touch a' 'b'":             "",
		"/bin/bash -lc 'it'\\''s'":                "",
		"/bin/bash -lc \"touch notes.txt\"":       "",
		"env X=1 /bin/bash -lc 'touch notes.txt'": "",
		"/bin/bash -lc 'touch notes.txt' ; rm x":  "",
	} {
		if got := shellScript(cmd); got != want {
			t.Errorf("shellScript(%q) = %q, want %q", cmd, got, want)
		}
	}
}
