package fakemodel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scenario names, as written in a marker.
const (
	ScenarioReply = "reply"
	// ScenarioSlow streams a slow answer: secs=N (default 5) pieces, half
	// of N quiet first; hold=NAME keeps it quiet until Server.Release(NAME).
	ScenarioSlow = "slow"
	ScenarioBash = "bash"
	ScenarioAsk  = "ask"
	// ScenarioAskAsync asks with Codex's request_user_input_async tool, which
	// returns at once, then keeps working (streams slowly) so the answer
	// arrives while the turn runs: secs=N (default 20), half of it quiet;
	// hold=NAME keeps it quiet instead until Server.Release(NAME).
	ScenarioAskAsync = "ask_async"
	ScenarioSteps    = "steps"
	ScenarioError    = "error"
	ScenarioSecret   = "secret"
	ScenarioMCP      = "mcp_drive"
	// ScenarioEdit edits two files of dir (an absolute path): it creates
	// EditNewFile (EditNewContent, which holds a fake secret) and changes "two" to "TWO" in EditOldFile, which the
	// test writes first (EditOldContent). Claude Code: Write, then Read
	// and Edit of the old file (its Edit needs a Read first). Codex: one
	// apply_patch with both files.
	ScenarioEdit = "edit"
	// ScenarioTitle is recorded for side requests (no tools offered).
	ScenarioTitle = "title"
	// ScenarioToolResult is recorded for the answer that echoes tool results.
	ScenarioToolResult = "tool_result"
)

// DefaultBashCommand is the command the bash scenario asks to run. It writes a
// file, so Claude Code does not treat it as read-only and asks for approval.
const DefaultBashCommand = "touch akk-approval-probe && echo akk-bash-ran"

// Fake secrets the secret scenario puts in its reply. They only look like
// credentials (fixed text, no real key); redaction tests look for them.
const (
	SecretAnthropicKey = "sk-ant-api03-AKKFAKEKEY0000000000000000000000000000000000000000000000000000000000000000000000000000-AKKFAKEAA"
	SecretAWSKey       = "AKIAAKKFAKE000000000"
)

// The files of the edit scenario, their content before and after.
const (
	EditNewFile    = "akk-edit-new.txt"
	EditNewContent = "alpha\nbeta\naws_key=" + SecretAWSKey + "\n" // a secret for redaction tests
	EditOldFile    = "akk-edit-old.txt"
	EditOldContent = "one\ntwo\nthree\n"
	EditOldAfter   = "one\nTWO\nthree\n"
)

// EditPatch is the edit scenario's patch for Codex's apply_patch.
const EditPatch = "*** Begin Patch\n*** Add File: " + EditNewFile + "\n+alpha\n+beta\n+aws_key=" + SecretAWSKey + "\n*** Update File: " + EditOldFile +
	"\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n"

// TitleText answers side requests (session titles, probes).
const TitleText = "Fake session title"

// Marker builds a marker for a scenario, e.g. Marker("slow", "secs", "3").
func Marker(scenario string, kv ...string) string {
	var b strings.Builder
	b.WriteString("[[akk:")
	b.WriteString(scenario)
	for i := 0; i+1 < len(kv); i += 2 {
		v := kv[i+1]
		if v == "" || strings.ContainsAny(v, " \t\"]") {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " %s=%s", kv[i], v)
	}
	b.WriteString("]]")
	return b.String()
}

// ReplyToken is the recognisable token of the default reply to a user text.
func ReplyToken(userText string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(userText)))
	return "akk-reply-" + hex.EncodeToString(sum[:4])
}

// DefaultReply is the text of the default reply to a user text.
func DefaultReply(userText string) string {
	return "Fake model reply " + ReplyToken(userText) + "."
}

// Question is one question of the ask scenario.
type Question struct {
	ID, Header, Question string
	Options              []Option
}

// Option is one choice of a Question.
type Option struct{ Label, Description string }

// Questions are the questions the ask scenario asks, in order.
var Questions = []Question{
	{ID: "color", Header: "Color", Question: "Which color should the widget be?", Options: []Option{{"Red", "warm"}, {"Blue", "cool"}}},
	{ID: "size", Header: "Size", Question: "Which size should the widget be?", Options: []Option{{"Small", "fits a pocket"}, {"Large", "fills a desk"}}},
	{ID: "shape", Header: "Shape", Question: "Which shape should the widget have?", Options: []Option{{"Round", "no corners"}, {"Square", "four corners"}}},
}

// MoreColors are the options the first question gains with options=3 or 4.
var MoreColors = []Option{{"Green", "calm"}, {"Yellow", "bright"}}

// Claude Code's <system-reminder> blocks, the record of a command run in
// Claude Code itself (/clear), which it sends along with the next message,
// and Codex's <environment_context> (which it sends again, as a message of
// its own, when the date changes: at midnight).
var reminderRE = regexp.MustCompile(`(?s)<(system-reminder|local-command-caveat|local-command-stdout|command-name|command-message|command-args|environment_context)>.*?</(system-reminder|local-command-caveat|local-command-stdout|command-name|command-message|command-args|environment_context)>`)

// DeepSeek Harness sends its runtime context (file policy, time) as a user
// message of its own after the user's first message of a session.
const harnessContext = "Current runtime context."

var hostContextRE = regexp.MustCompile(`(?s)<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>.*?<<<END_OPENCLAW_INTERNAL_CONTEXT>>>`)

// cleanUserText drops the context an agent or host wraps around what the
// human typed (Claude Code's <system-reminder> blocks, OpenClaw's internal
// context), so the text is what was typed.
func cleanUserText(s string) string {
	if strings.HasPrefix(s, harnessContext) {
		return ""
	}
	s = reminderRE.ReplaceAllString(s, "")
	return strings.TrimSpace(hostContextRE.ReplaceAllString(s, ""))
}

var markerRE = regexp.MustCompile(`\[\[akk:([a-z_]+)((?:\s+[a-zA-Z_]+=(?:"(?:[^"\\]|\\.)*"|[^\s\]]*))*)\s*\]\]`)
var paramRE = regexp.MustCompile(`([a-zA-Z_]+)=("(?:[^"\\]|\\.)*"|[^\s\]]*)`)

// ParseMarker finds the last marker in text. ok is false without one.
func ParseMarker(text string) (scenario string, params map[string]string, ok bool) {
	all := markerRE.FindAllStringSubmatch(text, -1)
	if len(all) == 0 {
		return "", nil, false
	}
	m := all[len(all)-1]
	params = map[string]string{}
	for _, p := range paramRE.FindAllStringSubmatch(m[2], -1) {
		v := p[2]
		if strings.HasPrefix(v, `"`) {
			if u, err := strconv.Unquote(v); err == nil {
				v = u
			} else {
				v = strings.Trim(v, `"`)
			}
		}
		params[p[1]] = v
	}
	return m[1], params, true
}

// toolKind is what a tool call does, independent of the API's tool names.
type toolKind int

const (
	toolShell toolKind = iota + 1
	toolAsk
	toolAskAsync // Codex's request_user_input_async: returns at once
	toolNamed    // a tool by its own name and input (an MCP tool)
	toolPatch    // Codex's apply_patch of input["patch"]
)

type toolCall struct {
	kind          toolKind
	cmd           string
	escalate      bool
	justification string
	questions     []Question
	multiSelect   bool
	name          string         // toolNamed
	input         map[string]any // toolNamed, toolPatch
	freeform      bool           // toolPatch: a custom (freeform) tool call
}

// plan is what to answer, before it is rendered for one API.
type plan struct {
	scenario string
	status   int // non-zero: answer with this HTTP error
	errMsg   string
	text     string
	pieces   int           // stream text in this many pieces (ignored with chunks)
	chunks   []string      // stream text in exactly these pieces
	pace     time.Duration // between pieces
	quiet    time.Duration // before the first piece, with keep-alives
	hold     string        // quiet instead until the server's Release(hold)
	released <-chan struct{}
	tool     *toolCall
}

// turn is what the server understood of a request.
type turn struct {
	aux         bool
	jsonTitle   bool // the side request wants {"title": ...}
	userText    string
	earlier     []string // user texts before userText (OpenAI)
	toolResults []string
	// openai: the request came in on the Responses API; freeformPatch:
	// it offers apply_patch as a custom (freeform) tool.
	openai, freeformPatch bool
}

func intParam(p map[string]string, key string, def, lo, hi int) int {
	n, err := strconv.Atoi(p[key])
	if err != nil {
		return def
	}
	return max(lo, min(hi, n))
}

func boolParam(p map[string]string, key string) bool {
	v, err := strconv.ParseBool(p[key])
	return err == nil && v
}

// decide turns a request into a plan. It is the same for both APIs.
func decide(t turn) plan {
	if t.aux && t.jsonTitle {
		return plan{scenario: ScenarioTitle, text: `{"title":"` + TitleText + `"}`, pieces: 1}
	}
	if t.aux {
		return plan{scenario: ScenarioTitle, text: TitleText, pieces: 1}
	}
	scenario, params, ok := ParseMarker(t.userText)
	if !ok {
		if p, ok := hostCallback(t); ok {
			return p
		}
		scenario, params = ScenarioReply, map[string]string{}
	}
	if scenario == ScenarioSteps {
		return steps(params, t.toolResults)
	}
	if scenario == ScenarioMCP {
		return mcpDrive(params, t.toolResults)
	}
	if scenario == ScenarioAskAsync {
		return askAsync(params, t.toolResults)
	}
	if scenario == ScenarioEdit {
		return edit(params, t)
	}
	if len(t.toolResults) > 0 {
		return plan{scenario: ScenarioToolResult, text: echoResults(t.toolResults), pieces: 1}
	}
	switch scenario {
	case ScenarioSlow:
		// The first piece comes at once (so an interrupt finds a started
		// answer), then half the time is quiet (keep-alives only) while the
		// TUI shows its working indicator, then the rest streams in pieces.
		secs := intParam(params, "secs", 5, 1, 600)
		quiet := time.Duration(secs) * time.Second / 2
		pieces := secs
		chunks := slowChunks(pieces)
		if p := params["lead"]; p == "false" || p == "0" {
			chunks = append([]string{""}, chunks...) // an empty first piece: quiet from the start
		}
		return plan{scenario: scenario, text: strings.Join(chunks, ""), chunks: chunks, pace: 500 * time.Millisecond, quiet: quiet, hold: params["hold"]}
	case ScenarioBash:
		cmd := params["cmd"]
		if cmd == "" {
			cmd = DefaultBashCommand
		}
		return plan{scenario: scenario, text: "I need to run a command.", pieces: 1, tool: &toolCall{
			kind: toolShell, cmd: cmd, escalate: true, justification: "The task needs this command to run outside the sandbox.",
		}}
	case ScenarioAsk:
		n := intParam(params, "questions", 1, 1, len(Questions))
		qs := slices.Clone(Questions[:n])
		if k := intParam(params, "options", 2, 2, 2+len(MoreColors)); k > 2 {
			qs[0].Options = append(slices.Clone(qs[0].Options), MoreColors[:k-2]...)
		}
		return plan{scenario: scenario, text: "I have a question first.", pieces: 1, tool: &toolCall{
			kind: toolAsk, questions: qs, multiSelect: boolParam(params, "multi"),
		}}
	case ScenarioError:
		status := intParam(params, "status", 500, 400, 599)
		return plan{scenario: scenario, status: status, errMsg: fmt.Sprintf("Fake model error %d requested by the test.", status)}
	case ScenarioSecret:
		return plan{scenario: scenario, pieces: 1, text: "Here are the credentials: ANTHROPIC_API_KEY=" + SecretAnthropicKey +
			" and AWS_ACCESS_KEY_ID=" + SecretAWSKey + " (fake)."}
	default:
		text := params["text"]
		if text == "" {
			text = DefaultReply(t.userText)
		}
		return plan{scenario: ScenarioReply, text: text, pieces: 1}
	}
}

// steps runs n commands one turn after another (a file write each when
// escalate, so each asks), then answers with their results, slowly when
// secs is set.
func steps(params map[string]string, results []string) plan {
	scenario := ScenarioSteps
	n := intParam(params, "n", 3, 1, 20)
	if done := len(results); done < n {
		cmd := fmt.Sprintf("echo akk-step-%d", done+1)
		escalate := boolParam(params, "escalate")
		if escalate {
			// Claude Code runs a bare echo without asking; a file write makes every step a prompt.
			cmd = fmt.Sprintf("touch akk-step-%d && echo akk-step-%d", done+1, done+1)
		}
		return plan{scenario: scenario, text: fmt.Sprintf("Step %d of %d.", done+1, n), pieces: 1, tool: &toolCall{
			kind: toolShell, cmd: cmd, escalate: escalate,
			justification: fmt.Sprintf("Step %d of the multi-step task needs to run a command.", done+1),
		}}
	}
	if secs := intParam(params, "secs", 0, 0, 600); secs > 0 {
		// The answer after the last step streams slowly, as slow does.
		chunks := append([]string{echoResults(results) + " "}, slowChunks(secs)...)
		return plan{scenario: scenario, text: strings.Join(chunks, ""), chunks: chunks, pace: 500 * time.Millisecond,
			quiet: time.Duration(secs) * time.Second / 2}
	}
	return plan{scenario: scenario, text: echoResults(results), pieces: 1}
}

// edit plays the edit scenario: Claude Code (Anthropic) writes, reads and
// edits, one tool call a request; Codex (OpenAI) applies one patch with
// the tool its request offers (apply_patch, freeform or as a function).
func edit(params map[string]string, t turn) plan {
	dir := params["dir"]
	done := len(t.toolResults)
	call := func(text string, tc *toolCall) plan {
		return plan{scenario: ScenarioEdit, text: text, pieces: 1, tool: tc}
	}
	if t.openai {
		if done == 0 {
			return call("Applying the patch.", &toolCall{kind: toolPatch, input: map[string]any{"patch": EditPatch}, freeform: t.freeformPatch})
		}
	} else {
		newPath, oldPath := dir+"/"+EditNewFile, dir+"/"+EditOldFile
		switch done {
		case 0:
			return call("Creating the new file.", &toolCall{kind: toolNamed, name: "Write", input: map[string]any{"file_path": newPath, "content": EditNewContent}})
		case 1:
			return call("Reading the old file.", &toolCall{kind: toolNamed, name: "Read", input: map[string]any{"file_path": oldPath}})
		case 2:
			return call("Changing the old file.", &toolCall{kind: toolNamed, name: "Edit", input: map[string]any{"file_path": oldPath, "old_string": "two", "new_string": "TWO", "replace_all": false}})
		}
	}
	return plan{scenario: ScenarioEdit, text: echoResults(t.toolResults), pieces: 1}
}

// askAsync asks its questions with the async tool, then works for secs
// seconds (half of them quiet) while the answer may arrive; the answer is
// the user's next message, answered as any other (the default reply).
func askAsync(params map[string]string, results []string) plan {
	if len(results) == 0 {
		n := intParam(params, "questions", 1, 1, len(Questions))
		qs := slices.Clone(Questions[:n])
		return plan{scenario: ScenarioAskAsync, text: "I have a question; I keep working meanwhile.", pieces: 1,
			tool: &toolCall{kind: toolAskAsync, questions: qs}}
	}
	secs := intParam(params, "secs", 20, 1, 600)
	chunks := append([]string{"Working while I wait. "}, slowChunks(secs)...)
	return plan{scenario: ScenarioAskAsync, text: strings.Join(chunks, ""), chunks: chunks, pace: 500 * time.Millisecond,
		quiet: time.Duration(secs) * time.Second / 2, hold: params["hold"]}
}

func slowChunks(pieces int) []string {
	out := make([]string, 0, pieces+1)
	for i := 1; i <= pieces; i++ {
		out = append(out, fmt.Sprintf("slow-%d ", i))
	}
	return append(out, "done.")
}

// parts is the text cut into the pieces to stream.
func (p plan) parts() []string {
	if len(p.chunks) > 0 {
		return p.chunks
	}
	return split(p.text, p.pieces)
}

func echoResults(results []string) string {
	var b strings.Builder
	b.WriteString("Tool results received:")
	for i, r := range results {
		fmt.Fprintf(&b, "\n%d. <<<%s>>>", i+1, r)
	}
	return b.String()
}

// split cuts s into n pieces of similar length on rune boundaries.
func split(s string, n int) []string {
	r := []rune(s)
	if n <= 1 || len(r) <= 1 {
		return []string{s}
	}
	n = min(n, len(r))
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, string(r[i*len(r)/n:(i+1)*len(r)/n]))
	}
	return out
}

// mcpDrive plays an assistant that drives another agent's pane through
// AKK's MCP tools: akk_list, then akk_send of text to the pane whose
// project is the project parameter, then akk_status until the Turn ends,
// then a final answer quoting its final message (with follow=false, a
// final answer once the Turn is sent: the host hears its end from AKK's
// callback). prefix is how the host names the server's tools (Claude Code:
// "mcp__<server>__").
func mcpDrive(params map[string]string, results []string) plan {
	prefix := params["prefix"]
	if prefix == "" {
		prefix = "mcp__akk__"
	}
	call := func(text, tool string, input map[string]any) plan {
		return plan{scenario: ScenarioMCP, text: text, pieces: 1, tool: &toolCall{kind: toolNamed, name: prefix + tool, input: input}}
	}
	final := func(text string) plan { return plan{scenario: ScenarioMCP, text: text, pieces: 1} }
	if len(results) == 0 {
		return call("Listing the agents.", "akk_list", map[string]any{})
	}
	last := ResultJSON(results[len(results)-1])
	if len(results) == 1 {
		var list struct {
			Conversations []struct {
				Project string `json:"project"`
				Actions []struct {
					Action string         `json:"action"`
					Target string         `json:"target"`
					Body   map[string]any `json:"body"`
				} `json:"available_actions"`
			} `json:"conversations"`
		}
		json.Unmarshal(last, &list)
		for _, c := range list.Conversations {
			if c.Project != params["project"] {
				continue
			}
			for _, a := range c.Actions {
				if a.Action == "send" && strings.HasPrefix(a.Target, "terminal") {
					return call("Sending the task.", "akk_send", map[string]any{"terminal_id": a.Body["terminal_id"], "request": params["text"]})
				}
			}
		}
		return final("MCP drive: no send-ready pane for " + params["project"] + ".")
	}
	var st struct {
		TurnID string `json:"turn_id"`
		State  string `json:"state"`
		Result struct {
			FinalMessage string `json:"final_message"`
		} `json:"result"`
		Code string `json:"code"`
	}
	json.Unmarshal(last, &st)
	switch {
	case st.Code != "":
		return final("MCP drive: refused: " + st.Code + ".")
	case len(results) == 2 && params["follow"] == "false":
		return final(fmt.Sprintf("MCP drive: sent turn %s (%s).", st.TurnID, st.State))
	case st.State == "completed" || st.State == "failed" || st.State == "cancelled":
		return final(fmt.Sprintf("MCP drive: turn %s %s: <<<%s>>>", st.TurnID, st.State, st.Result.FinalMessage))
	case st.TurnID == "" || len(results) > 300:
		return final("MCP drive: gave up.")
	}
	return call("Checking the task.", "akk_status", map[string]any{"turn_id": st.TurnID})
}

var approvalCallbackRE = regexp.MustCompile(`turn\.approval_required\b[\s\S]*?\b(turn_[A-Za-z0-9]+)`)

// hostCallback plays an assistant woken by AKK's approval_required
// callback in a host's session whose task was sent by mcp_drive with
// on_approval=approve (an earlier message of the same conversation, so
// OpenAI requests only): akk_status of the Turn, then akk_approve once,
// then a final answer quoting what the approval answered.
func hostCallback(t turn) (plan, bool) {
	var params map[string]string
	for _, e := range t.earlier {
		if sc, p, ok := ParseMarker(e); ok && sc == ScenarioMCP {
			params = p
		}
	}
	m := approvalCallbackRE.FindStringSubmatch(t.userText)
	if params["on_approval"] != "approve" || m == nil {
		return plan{}, false
	}
	prefix := params["prefix"]
	if prefix == "" {
		prefix = "mcp__akk__"
	}
	call := func(text, tool string, input map[string]any) plan {
		return plan{scenario: ScenarioMCP, text: text, pieces: 1, tool: &toolCall{kind: toolNamed, name: prefix + tool, input: input}}
	}
	switch len(t.toolResults) {
	case 0:
		return call("Reading the prompt.", "akk_status", map[string]any{"turn_id": m[1]}), true
	case 1:
		return call("Approving once.", "akk_approve", map[string]any{"turn_id": m[1], "decision": "approve_once"}), true
	}
	return plan{scenario: ScenarioMCP, text: "MCP drive: approval answered: <<<" + t.toolResults[len(t.toolResults)-1] + ">>>", pieces: 1}, true
}

// ResultJSON is the JSON object in a tool result's text (AKK's tools put
// a summary line before it).
// A host may put more text after it (OpenClaw adds the content blocks
// after the structured content): only the first JSON value counts.
func ResultJSON(text string) []byte {
	i := strings.IndexByte(text, '{')
	if i < 0 {
		return nil
	}
	var raw json.RawMessage
	if json.NewDecoder(strings.NewReader(text[i:])).Decode(&raw) == nil {
		return raw
	}
	return []byte(text[i:])
}
