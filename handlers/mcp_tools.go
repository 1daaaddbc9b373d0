package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"akk/domain"
)

// An MCP tool is one REST action: its routes, its input schema and its
// description come from the contract (api/openapi.yaml), and a call is
// served by the same REST handler chain a host's request takes (auth,
// contract validation, domain), so a tool has exactly a route's authority.
// Only the names and the guidance for the model are written here.

// mcpTool names one catalogue entry.
type mcpTool struct {
	// Name is the tool's name; "akk_" + an available_actions name where
	// the list advertises the action.
	Name string
	// Ops are the contract's operationIds. With more than one, the id the
	// arguments carry picks the route (turn_id, watch_id or terminal_id).
	Ops      []string
	ReadOnly bool
	// Guide is what the model must know to use it safely.
	Guide string
}

// mcpCatalogue is the tool catalogue, in the operator guide's order. A test
// keeps it in step with the contract and with the actions the domain
// advertises.
// span says d as the guides do: whole minutes in minutes, else seconds.
func span(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		if d == time.Minute {
			return "1 minute"
		}
		return strconv.Itoa(int(d/time.Minute)) + " minutes"
	}
	return strconv.Itoa(int(d/time.Second)) + " s"
}

var mcpCatalogue = []mcpTool{
	{Name: "akk_list", Ops: []string{"listConversations"}, ReadOnly: true,
		Guide: "Start here. Use only the ids and bodies of a fresh list's available_actions: each names the tool to call (akk_ + its name), its ids and its prefilled body. Never invent or reuse ids from an old list."},
	{Name: "akk_threads", Ops: []string{"listThreads"}, ReadOnly: true,
		Guide: "The agent's own conversations in a pane's project (terminal_id from a fresh akk_list), newest first; number and short_id are for showing the user only, never for a later call."},
	{Name: "akk_new_thread", Ops: []string{"newThread"},
		Guide: "Start a clean thread of the agent in a pane (also what a user means by clear), only when a fresh akk_list advertises new_thread for it. It returns the new session_id to send to. Never repeat an uncertain result: look at the pane first."},
	{Name: "akk_resume_thread", Ops: []string{"resumeThread"},
		Guide: "Resume one of the agent's own threads in a pane a fresh akk_list advertises resume_thread for: native_thread_id is the complete id the user chose from a fresh akk_threads (never a number or short id). It returns the new session_id. Never repeat an uncertain result."},
	{Name: "akk_permission_options", Ops: []string{"getPermissions"},
		Guide: "The agent's own permission mode in an idle pane and the modes it offers (Codex opens and closes its menu). Show the user the labels; use only the mode ids for akk_set_permissions."},
	{Name: "akk_set_permissions", Ops: []string{"setPermissions"},
		Guide: "Change the pane's permission mode to one the user chose from a fresh akk_permission_options (full_access only on the user's explicit word). Never repeat an uncertain result."},
	{Name: "akk_model_options", Ops: []string{"getModels"},
		Guide: "Open the agent's own model UI once in an idle pane and read its models and the reasoning effort in effect. The result authorizes one akk_set_model from this same conversation within " + span(domain.ModelCatalogTTL) + ". On a Codex backend row (terminal_id cx_<thread id> from its model_options action) the daemon gives the catalogue with no input, and it authorizes no akk_set_model."},
	{Name: "akk_set_model", Ops: []string{"setModel"},
		Guide: "Set the reasoning effort of the model in effect to one the immediately preceding akk_model_options advertised (model and reasoning_effort both from it). Never repeat an uncertain result: read the catalogue again."},
	{Name: "akk_repair_model_control", Ops: []string{"repairModelControl"},
		Guide: "Only when a fresh akk_list advertises repair_model_control: close the agent's model picker left open, or clear its bare /model command, back to an empty composer. It never selects anything. Never repeat an uncertain result."},
	{Name: "akk_native_inspect", Ops: []string{"inspectTerminal"},
		Guide: "Read the agent's own status view once (version, model, directory, thread id) in an idle pane a fresh akk_list advertises native_inspect for. It creates nothing; never repeat an uncertain result."},
	{Name: "akk_identify_foreground", Ops: []string{"identifyForeground"},
		Guide: "Codex only: which thread an idle pane shows, when its identity is ambiguous. The proof expires after " + span(domain.ForegroundProofTTL) + " and authorizes nothing."},
	{Name: "akk_watch", Ops: []string{"createWatch"},
		Guide: "Watch a task a person started in a pane, or a turn another client started in a Codex backend thread (terminal_id from the watch action of a fresh akk_list row). The Watch reports its end; it never types."},
	{Name: "akk_unwatch", Ops: []string{"deleteWatch"},
		Guide: "Stop a Watch of yours."},
	{Name: "akk_status", Ops: []string{"getTurn", "getWatch"}, ReadOnly: true,
		Guide: "Give exactly one of turn_id or watch_id. A notification or callback is only a wake-up: call akk_status before acting on it, and act only through the available_actions it returns."},
	{Name: "akk_send", Ops: []string{"sendTurn"},
		Guide: "Send one task to an agent pane as a Turn (terminal_id or session_id from a fresh akk_list), or to a backend conversation (conversation_id of a codex_backend row; only there, model and reasoning_effort from its akk_model_options choose the model for this and later turns, when the user asked for them). The request is the user's words, never a slash command, key or menu number. If outcome is uncertain or do_not_retry is true, never send it again: report it to the user and follow the Turn with akk_status."},
	{Name: "akk_respond", Ops: []string{"respondTurn"},
		Guide: "Answer a Turn that is waiting_for_host with the user's words. Never retry an uncertain result."},
	{Name: "akk_interaction", Ops: []string{"getTurnInteraction"}, ReadOnly: true,
		Guide: "Read the questionnaire step a Turn waits on (awaiting_interaction): its interaction_id, questions and option ids."},
	{Name: "akk_respond_interaction", Ops: []string{"respondTurnInteraction"},
		Guide: "Answer the step read with akk_interaction, with its interaction_id and option ids only. Ask the user when the choice is theirs. Never retry an uncertain result."},
	{Name: "akk_approve", Ops: []string{"approveTurn", "approveTerminal"},
		Guide: "Answer a permission prompt: give turn_id (the prompt of your Turn) or terminal_id (a pane no Turn holds), and a decision the status or list offers. Approve only what the user would approve; call akk_status first. Never retry an uncertain result."},
	{Name: "akk_renew", Ops: []string{"renewTurn", "renewWatch"},
		Guide: "Give exactly one of turn_id or watch_id: extend its observation deadline."},
	{Name: "akk_recover", Ops: []string{"recoverTurn", "recoverWatch"},
		Guide: "Give exactly one of turn_id or watch_id: look again at a stalled or broken record. It sends no input."},
	{Name: "akk_retry_callback", Ops: []string{"retryTurnCallback", "retryWatchCallback"},
		Guide: "Give exactly one of turn_id or watch_id: deliver a failed callback again (same webhook-id)."},
	{Name: "akk_cancel", Ops: []string{"cancelTurn"},
		Guide: "Interrupt the agent's work on your Turn (its native Esc, once)."},
	{Name: "akk_close", Ops: []string{"closeTurn"},
		Guide: "Close your Turn so the pane is free for the next one. It sends no input."},
}

// mcpRoute is one operation of the contract, as a tool calls it.
type mcpRoute struct {
	op          string
	method      string
	path        string   // template, e.g. /v1/turns/{turn_id}
	pathParams  []string // in the template
	queryParams []string
	hasBody     bool
	summary     string
	description string
}

// mcpToolDef is a catalogue entry with what the contract says of it.
type mcpToolDef struct {
	mcpTool
	routes []mcpRoute
	schema map[string]any
}

// buildMCPTools reads the routes and schemas of the catalogue from the
// contract. It fails when a catalogue entry names an operation the
// contract does not have.
func buildMCPTools(spec *openapi3.T) ([]mcpToolDef, error) {
	byOp := map[string]mcpRoute{}
	bodies := map[string]*openapi3.SchemaRef{}
	params := map[string]openapi3.Parameters{}
	for path, item := range spec.Paths.Map() {
		for method, op := range item.Operations() {
			r := mcpRoute{op: op.OperationID, method: method, path: path, summary: op.Summary, description: op.Description}
			all := append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...)
			for _, p := range all {
				switch p.Value.In {
				case "path":
					r.pathParams = append(r.pathParams, p.Value.Name)
				case "query":
					r.queryParams = append(r.queryParams, p.Value.Name)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				if mt := op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
					r.hasBody = true
					bodies[op.OperationID] = mt.Schema
				}
			}
			byOp[op.OperationID] = r
			params[op.OperationID] = all
		}
	}
	var out []mcpToolDef
	for _, t := range mcpCatalogue {
		d := mcpToolDef{mcpTool: t}
		props := map[string]any{}
		var required []string
		for i, name := range t.Ops {
			r, ok := byOp[name]
			if !ok {
				return nil, fmt.Errorf("tool %s: the contract has no operation %s", t.Name, name)
			}
			d.routes = append(d.routes, r)
			for _, p := range params[name] {
				if p.Value.In != "path" && p.Value.In != "query" {
					continue
				}
				s := jsonSchema(p.Value.Schema, 0)
				if p.Value.Description != "" {
					s["description"] = p.Value.Description
				}
				props[p.Value.Name] = s
				if p.Value.In == "path" && len(t.Ops) == 1 {
					required = append(required, p.Value.Name)
				}
			}
			if b := bodies[name]; b != nil {
				bs := jsonSchema(b, 0)
				bp, _ := bs["properties"].(map[string]any)
				for k, v := range bp {
					props[k] = v
				}
				if i == 0 {
					if req, ok := bs["required"].([]string); ok {
						required = append(required, req...)
					}
				}
			}
		}
		d.schema = map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			sort.Strings(required)
			d.schema["required"] = required
		}
		out = append(out, d)
	}
	return out, nil
}

// jsonSchema turns a contract schema (OpenAPI 3.0) into JSON Schema, with
// every $ref inlined.
func jsonSchema(ref *openapi3.SchemaRef, depth int) map[string]any {
	out := map[string]any{}
	if ref == nil || ref.Value == nil || depth > 12 {
		return out
	}
	s := ref.Value
	if s.Type != nil && len(*s.Type) > 0 {
		types := []string(*s.Type)
		if s.Nullable {
			types = append(types, "null")
		}
		if len(types) == 1 {
			out["type"] = types[0]
		} else {
			out["type"] = types
		}
	}
	schemaKeywords(s, out)
	if s.Items != nil {
		out["items"] = jsonSchema(s.Items, depth+1)
	}
	if len(s.Properties) > 0 {
		props := map[string]any{}
		for k, v := range s.Properties {
			if v.Value != nil && v.Value.ReadOnly {
				continue
			}
			props[k] = jsonSchema(v, depth+1)
		}
		out["properties"] = props
	}
	if len(s.Required) > 0 {
		out["required"] = append([]string(nil), s.Required...)
	}
	if ap := s.AdditionalProperties; ap.Has != nil && !*ap.Has {
		out["additionalProperties"] = false
	} else if ap.Schema != nil {
		out["additionalProperties"] = jsonSchema(ap.Schema, depth+1)
	}
	for key, list := range map[string]openapi3.SchemaRefs{"oneOf": s.OneOf, "anyOf": s.AnyOf, "allOf": s.AllOf} {
		if len(list) == 0 {
			continue
		}
		var xs []any
		for _, x := range list {
			xs = append(xs, jsonSchema(x, depth+1))
		}
		out[key] = xs
	}
	return out
}

// schemaKeywords copies s's scalar keywords (description, format, bounds,
// enum, default…) into out.
func schemaKeywords(s *openapi3.Schema, out map[string]any) {
	if s.Description != "" {
		out["description"] = s.Description
	}
	if s.Format != "" {
		out["format"] = s.Format
	}
	if len(s.Enum) > 0 {
		out["enum"] = s.Enum
	}
	if s.Pattern != "" {
		out["pattern"] = s.Pattern
	}
	if s.MinLength > 0 {
		out["minLength"] = s.MinLength
	}
	if s.MaxLength != nil {
		out["maxLength"] = *s.MaxLength
	}
	if s.Min != nil {
		out["minimum"] = *s.Min
	}
	if s.Max != nil {
		out["maximum"] = *s.Max
	}
	if s.MinItems > 0 {
		out["minItems"] = s.MinItems
	}
	if s.MaxItems != nil {
		out["maxItems"] = *s.MaxItems
	}
	if s.UniqueItems {
		out["uniqueItems"] = true
	}
	if s.Default != nil {
		out["default"] = s.Default
	}
}

// description is what the model reads about a tool: the guide's rule
// first, then the contract's own words.
func (d mcpToolDef) description() string {
	var b strings.Builder
	b.WriteString(d.Guide)
	for _, r := range d.routes {
		fmt.Fprintf(&b, "\n\n%s (%s %s).", strings.TrimSuffix(r.summary, "."), r.method, r.path)
		if r.description != "" {
			b.WriteString(" ")
			b.WriteString(strings.TrimSpace(r.description))
		}
	}
	return b.String()
}

// mcpIDs are the path ids a multi-route tool is told apart by.
var mcpIDs = []string{"turn_id", "watch_id", "terminal_id"}

// request turns a tool call's arguments into the REST request it stands
// for. A problem here is the caller's mistake, reported like a REST one.
func (d mcpToolDef) request(ctx context.Context, args map[string]any) (*http.Request, error) {
	r := d.routes[0]
	if len(d.routes) > 1 {
		var picked []mcpRoute
		for _, x := range d.routes {
			for _, id := range x.pathParams {
				if _, ok := args[id]; ok {
					picked = append(picked, x)
				}
			}
		}
		if len(picked) != 1 {
			var ids []string
			for _, x := range d.routes {
				ids = append(ids, x.pathParams...)
			}
			return nil, fmt.Errorf("give exactly one of %s", strings.Join(ids, ", "))
		}
		r = picked[0]
		// The other routes' ids are not this route's.
		for _, x := range d.routes {
			for _, id := range x.pathParams {
				if x.op != r.op {
					delete(args, id)
				}
			}
		}
	}
	path := r.path
	for _, name := range r.pathParams {
		v, ok := args[name].(string)
		if !ok || v == "" {
			return nil, fmt.Errorf("%s is required (a string)", name)
		}
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
		delete(args, name)
	}
	q := url.Values{}
	for _, name := range r.queryParams {
		if v, ok := args[name]; ok {
			q.Set(name, fmt.Sprint(v))
			delete(args, name)
		}
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var body []byte
	if r.hasBody {
		body, _ = json.Marshal(args)
	} else if len(args) > 0 {
		var extra []string
		for k := range args {
			extra = append(extra, k)
		}
		sort.Strings(extra)
		return nil, fmt.Errorf("unknown argument(s): %s", strings.Join(extra, ", "))
	}
	req, err := http.NewRequestWithContext(ctx, r.method, path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if r.hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// result turns a REST answer into a tool result: the body as structured
// content, and as text after a one-line summary (what most models read).
// A problem is a tool error the model can read, with its code.
func mcpResult(status int, body []byte) *mcp.CallToolResult {
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil || v == nil {
		v = map[string]any{"status": status, "body": string(body)}
	}
	text := mcpSummary(status, v) + "\n" + string(body)
	return &mcp.CallToolResult{IsError: status >= 400, StructuredContent: v,
		Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// mcpSummary is one line on what a REST answer says.
func mcpSummary(status int, v map[string]any) string {
	if status >= 400 {
		return fmt.Sprintf("Refused (%d %v): %v", status, v["code"], v["detail"])
	}
	var parts []string
	for _, k := range []string{"turn_id", "watch_id", "state", "outcome", "delivery_path"} {
		if x, ok := v[k].(string); ok && x != "" {
			parts = append(parts, k+"="+x)
		}
	}
	if b, ok := v["do_not_retry"].(bool); ok && b {
		parts = append(parts, "do_not_retry=true: never repeat this call")
	}
	if cs, ok := v["conversations"].([]any); ok {
		parts = append(parts, fmt.Sprintf("%d conversation(s)", len(cs)))
	}
	if res, ok := v["result"].(map[string]any); ok {
		if fm, ok := res["final_message"].(string); ok && fm != "" {
			if r := []rune(fm); len(r) > 200 {
				fm = string(r[:200]) + "…"
			}
			parts = append(parts, "final message: "+fm)
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("Done (%d).", status)
	}
	return strings.Join(parts, "; ")
}

// serveInProcess runs one REST request through h and returns its answer.
func serveInProcess(h http.Handler, req *http.Request) (int, []byte) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}
