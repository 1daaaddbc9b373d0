package codexappserver

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/codex"
)

// used is every part of the protocol AKK sends or reads: methods (requests
// it sends, notifications it reads) and, per definition, the properties it
// sends or reads. The pin of a version holds their schemas as that
// version's own generate-json-schema prints them, plus each definition's
// required properties (a new required one breaks what AKK sends).
var used = struct {
	Requests      []string
	Notifications []string
	Definitions   map[string][]string
	// ServerRequests are the daemon's requests AKK reads and answers;
	// RequestDefinitions are definitions of ServerRequest.json; Responses
	// are the answers' whole schemas (every decision they allow).
	ServerRequests     []string
	RequestDefinitions map[string][]string
	Responses          []string
}{
	Requests:       []string{"initialize", "thread/loaded/list", "thread/read", "turn/start", "turn/interrupt", "thread/resume", "thread/unsubscribe", "thread/start", "thread/list", "model/list"},
	Notifications:  []string{"turn/started", "turn/completed", "item/completed", "serverRequest/resolved"},
	ServerRequests: []string{MethodCommandApproval, MethodUserInput},
	RequestDefinitions: map[string][]string{
		"CommandExecutionRequestApprovalParams": {"threadId", "turnId", "itemId", "approvalId", "command", "cwd", "reason"},
		"ToolRequestUserInputParams":            {"threadId", "turnId", "itemId", "isBlocking", "questions"},
		"ToolRequestUserInputQuestion":          {"id", "header", "question", "isOther", "isSecret", "options"},
		"ToolRequestUserInputOption":            {"label", "description"},
	},
	Responses: []string{"CommandExecutionRequestApprovalResponse", "ToolRequestUserInputResponse"},
	Definitions: map[string][]string{
		"InitializeParams":                  {"clientInfo", "capabilities"},
		"ClientInfo":                        {"name", "title", "version"},
		"InitializeCapabilities":            {"experimentalApi"},
		"ThreadLoadedListParams":            {"cursor"},
		"ThreadLoadedListResponse":          {"data", "nextCursor"},
		"ThreadReadParams":                  {"threadId", "includeTurns"},
		"ThreadReadResponse":                {"thread"},
		"ThreadResumeParams":                {"threadId", "excludeTurns"},
		"ThreadResumeResponse":              {"thread"},
		"ThreadUnsubscribeParams":           {"threadId"},
		"ThreadStartParams":                 {"cwd"},
		"ThreadStartResponse":               {"thread"},
		"ThreadListParams":                  {"cursor", "limit"},
		"ThreadListResponse":                {"data", "nextCursor"},
		"Thread":                            {"id", "cwd", "name", "preview", "model", "reasoningEffort", "cliVersion", "path", "ephemeral", "originator", "status", "turns"},
		"ModelListParams":                   {"cursor", "includeHidden"},
		"ModelListResponse":                 {"data", "nextCursor"},
		"Model":                             {"id", "model", "displayName", "hidden", "isDefault", "defaultReasoningEffort", "supportedReasoningEfforts"},
		"ReasoningEffortOption":             {"reasoningEffort"},
		"Turn":                              {"id", "status", "items", "error"},
		"TurnStatus":                        {},
		"TurnStartParams":                   {"threadId", "input", "clientUserMessageId", "model", "effort"},
		"ReasoningEffort":                   {},
		"TurnStartResponse":                 {"turn"},
		"TurnInterruptParams":               {"threadId", "turnId"},
		"TurnStartedNotification":           {"threadId", "turn"},
		"TurnCompletedNotification":         {"threadId", "turn"},
		"ItemCompletedNotification":         {"threadId", "turnId", "item"},
		"ServerRequestResolvedNotification": {"requestId", "threadId"},
	},
}

// pinOf reduces a generated schema folder to what AKK depends on.
func pinOf(t *testing.T, dir string) []byte {
	t.Helper()
	read := func(name string) map[string]any {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	methods := func(name string) map[string]any {
		out := map[string]any{}
		for _, o := range read(name)["oneOf"].([]any) {
			props := o.(map[string]any)["properties"].(map[string]any)
			enum, _ := props["method"].(map[string]any)["enum"].([]any)
			if len(enum) == 1 {
				out[enum[0].(string)] = props["params"]
			}
		}
		return out
	}
	pin := map[string]any{}
	reqs, notes := methods("ClientRequest.json"), methods("ServerNotification.json")
	for _, m := range used.Requests {
		pin["request "+m] = reqs[m] // nil: the method is gone
	}
	for _, m := range used.Notifications {
		pin["notification "+m] = notes[m]
	}
	definitions := func(prefix string, defs map[string]any, used map[string][]string) {
		for name, props := range used {
			d, _ := defs[name].(map[string]any)
			if d == nil {
				pin[prefix+name] = nil
				continue
			}
			entry := map[string]any{"required": d["required"]}
			if len(props) == 0 {
				entry["schema"] = d
			}
			all, _ := d["properties"].(map[string]any)
			for _, p := range props {
				entry["property "+p] = all[p]
			}
			pin[prefix+name] = entry
		}
	}
	definitions("definition ", read("codex_app_server_protocol.v2.schemas.json")["definitions"].(map[string]any), used.Definitions)
	serverRequests := read("ServerRequest.json")
	sreqs := methods("ServerRequest.json")
	for _, m := range used.ServerRequests {
		pin["server request "+m] = sreqs[m]
	}
	sdefs, _ := serverRequests["definitions"].(map[string]any)
	definitions("request definition ", sdefs, used.RequestDefinitions)
	for _, name := range used.Responses {
		if _, err := os.Stat(filepath.Join(dir, name+".json")); err != nil {
			pin["response "+name] = nil
			continue
		}
		pin["response "+name] = read(name + ".json")
	}
	b, err := json.MarshalIndent(withoutDescriptions(pin), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// Every pinned Codex whose threads a managed app-server daemon holds has
// its protocol pinned: what AKK uses, as that version's own
// generate-json-schema prints it. A new version that changes a method or
// field AKK uses fails here (AKK_UPDATE_PROTOCOL=1 rewrites the pins after
// the client is checked against the change).
func TestProtocolPinnedPerVersion(t *testing.T) {
	agents, err := agenttest.PinnedAgents()
	if err != nil {
		t.Fatal(err)
	}
	daemonVersions := codex.DaemonVersions()
	checked := 0
	for _, a := range agents {
		if a.Kind != "codex" || !slices.Contains(daemonVersions, a.Version) {
			continue
		}
		t.Run(a.Name(), func(t *testing.T) {
			a := agenttest.RequireAgent(t, a.Kind, a.Version)
			dir := t.TempDir()
			if out, err := exec.Command(a.Native(), "app-server", "generate-json-schema", "--out", dir).CombinedOutput(); err != nil {
				t.Fatalf("generate-json-schema: %v\n%s", err, out)
			}
			got := pinOf(t, dir)
			path := filepath.Join("testdata", "protocol", a.Name()+".json")
			if os.Getenv("AKK_UPDATE_PROTOCOL") == "1" {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("no protocol pin for %s (AKK_UPDATE_PROTOCOL=1 writes it): %v", a.Name(), err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s's app-server protocol changed in a part AKK uses; check the client against it, then AKK_UPDATE_PROTOCOL=1:\n%s", a.Name(), firstDiff(string(want), string(got)))
			}
		})
		checked++
	}
	if checked == 0 {
		t.Fatal("no pinned Codex runs a managed app-server daemon")
	}
}

// withoutDescriptions drops the prose of a schema: a reworded description
// changes nothing AKK sends or reads.
func withoutDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k == "description" {
				if _, prose := e.(string); prose {
					continue
				}
			}
			out[k] = withoutDescriptions(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutDescriptions(e)
		}
		return out
	}
	return v
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "pinned: " + x + "\nnow:    " + y
		}
	}
	return ""
}
