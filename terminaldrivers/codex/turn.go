package codex

import (
	"encoding/json"
	"errors"

	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/proc"
	"akk/terminaldrivers/screen"
)

// TurnRules implements agent.TurnProfile.
func (p Profile) TurnRules() agent.TurnRules { return p.Turn }

// composerReach bounds how far above the status line the composer's first
// row may be: a tall draft pushes it up.
const composerReach = 60

// ComposerText implements agent.TurnProfile: the composer row ("› ...")
// above the session status line and the indented rows under it. The
// placeholder is drawn dim and reads as empty.
func (p Profile) ComposerText(c screen.Capture) ([]string, bool) {
	bottom := c.Bottom()
	if bottom == 0 {
		return nil, false
	}
	status := c.LastIndex(max(0, bottom-3), bottom, p.Status.MatchString)
	if status < 0 {
		return nil, false
	}
	at := c.LastIndex(max(0, status-composerReach), status, func(s string) bool { return strings.HasPrefix(s, p.Composer) })
	if at < 0 {
		return nil, false
	}
	first := c.Lines[at]
	if first.Dim(len(p.Composer)) {
		for i := at + 1; i < status; i++ {
			if !screen.Blank(c.Lines[i].Text) {
				return nil, false // a placeholder with text under it: not a state we know
			}
		}
		return nil, true
	}
	var rows []string
	for i := at; i < status; i++ {
		t := c.Lines[i].Text
		switch {
		case i == at:
			t = strings.TrimPrefix(strings.TrimPrefix(t, p.Composer), " ")
		case screen.Blank(t):
			t = ""
		case strings.HasPrefix(t, "  "):
			t = strings.TrimPrefix(t, "  ")
		default:
			return nil, false // not a draft's continuation
		}
		rows = append(rows, strings.TrimRight(t, " \u00a0"))
	}
	for len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1]
	}
	return rows, true
}

var pastedContent = regexp.MustCompile(`^\[Pasted Content (\d+) chars\]$`)

// collapsedPaste recognises "[Pasted Content N chars]", which Codex shows
// alone in the composer instead of a paste over 1000 characters.
func collapsedPaste(rows []string, text string) bool {
	if len(rows) != 1 {
		return false
	}
	m := pastedContent.FindStringSubmatch(rows[0])
	if m == nil {
		return false
	}
	n, err := strconv.Atoi(m[1])
	return err == nil && n == utf8.RuneCountInString(text)
}

// collapses: Codex collapses a paste of more than 1000 characters.
func collapses(text string) bool { return utf8.RuneCountInString(text) > 1000 }

// Held lists the rollouts a process holds open as record files.
func Held(fs proc.FS, pid int) ([]agent.RecordFile, error) {
	rs, err := OpenRollouts(fs, pid)
	if err != nil {
		return nil, err
	}
	out := make([]agent.RecordFile, len(rs))
	for i, r := range rs {
		out[i] = agent.RecordFile{Path: r.Path, ThreadID: r.ThreadID}
	}
	return out, nil
}

// rolloutsOfTUI: the TUI process itself opens and holds its rollout
// (0.155.1); a fresh TUI holds none until its first turn.
func rolloutsOfTUI(fs proc.FS, _ *proc.Table, p agent.Process) (agent.RecordSet, error) {
	files, err := Held(fs, p.Stat.PID)
	if err != nil {
		return agent.RecordSet{}, err
	}
	return agent.RecordSet{Files: files, Holder: p.Stat.PID, HolderStart: p.Stat.StartTicks}, nil
}

// rolloutsOfDaemon: the managed app-server daemon of the TUI's CODEX_HOME
// holds the rollouts of every thread it serves (0.169.0), possibly for
// several TUIs; which one is this pane's is proven later by the exact
// request.
func rolloutsOfDaemon(fs proc.FS, table *proc.Table, p agent.Process) (agent.RecordSet, error) {
	home, ok := Home(p.Env)
	if !ok {
		return agent.RecordSet{}, errors.New("Codex's environment names no HOME or CODEX_HOME")
	}
	daemon := ManagedDaemon(fs, table, home)
	if daemon == 0 {
		return agent.RecordSet{}, errors.New("no Codex app-server daemon runs for this Codex home")
	}
	s, _ := table.Stat(daemon)
	files, err := Held(fs, daemon)
	if err != nil {
		return agent.RecordSet{}, err
	}
	return agent.RecordSet{Files: files, Holder: daemon, HolderStart: s.StartTicks}, nil
}

// rolloutLine is the part of a rollout line a Turn reads.
type rolloutLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Payload   struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		ID      string `json:"id"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Meta struct {
			TurnID string `json:"turn_id"`
		} `json:"internal_chat_message_metadata_passthrough"`
		TurnID           string          `json:"turn_id"`
		Name             string          `json:"name"`      // function_call, custom_tool_call
		CallID           string          `json:"call_id"`   // tool calls and their ends
		ExitCode         *int            `json:"exit_code"` // exec_command_end
		LastAgentMessage *string         `json:"last_agent_message"`
		Error            json.RawMessage `json:"error"`
		Reason           string          `json:"reason"`
		Item             *rolloutItem    `json:"item"` // item_completed
	} `json:"payload"`
}

// rolloutItem is an item_completed's item; a FileChange names the files
// an applied patch changed.
type rolloutItem struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Status  string `json:"status"`
	Changes map[string]struct {
		Type     string  `json:"type"` // add, delete, update
		Content  string  `json:"content"`
		Diff     string  `json:"unified_diff"`
		MovePath *string `json:"move_path"`
	} `json:"changes"`
}

// fileChanges reads a completed FileChange item: each file the patch
// added (its content), deleted (its content) or updated (its diff from
// the first "@@", and where it moved), in path order.
func (it *rolloutItem) fileChanges() []agent.FileChange {
	var out []agent.FileChange
	for path, c := range it.Changes {
		switch c.Type {
		case "add":
			out = append(out, agent.FileChange{Path: path, Op: "created", Content: c.Content})
		case "delete":
			out = append(out, agent.FileChange{Path: path, Op: "deleted", Content: c.Content})
		case "update":
			fc := agent.FileChange{Path: path, Op: "updated", Body: c.Diff}
			if c.MovePath != nil && *c.MovePath != "" && *c.MovePath != path {
				fc.Op, fc.MovedTo = "moved", *c.MovePath
			}
			out = append(out, fc)
		}
	}
	slices.SortFunc(out, func(a, b agent.FileChange) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// ParseRolloutLine reads one rollout line for a Turn: the person's
// messages (with the native turn id), assistant messages, task_complete
// (completion, or failure when it carries an error) and turn_aborted.
func ParseRolloutLine(line []byte) (agent.Entry, bool) {
	var l rolloutLine
	if json.Unmarshal(line, &l) != nil {
		return agent.Entry{}, false
	}
	at, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	p := l.Payload
	switch {
	case l.Type == "response_item" && p.Type == "message" && (p.Role == "user" || p.Role == "assistant"):
		var parts []string
		for _, c := range p.Content {
			if c.Type == "input_text" || c.Type == "output_text" {
				parts = append(parts, c.Text)
			}
		}
		if p.Role == "user" {
			return agent.Entry{Kind: agent.EntryUserPrompt, Text: strings.Join(parts, ""), TurnID: p.Meta.TurnID, Time: at}, true
		}
		return agent.Entry{Kind: agent.EntryAssistantText, Text: strings.Join(parts, ""), TurnID: p.Meta.TurnID, MessageID: p.ID, Time: at}, true
	case l.Type == "response_item" && (p.Type == "function_call" || p.Type == "custom_tool_call") && p.CallID != "" && p.Name != "":
		return agent.Entry{Kind: agent.EntryAction, ActionID: p.CallID, Action: p.Name, ActionStatus: agent.ActionInProgress,
			TurnID: p.Meta.TurnID, Time: at}, true
	case l.Type == "response_item" && (p.Type == "function_call_output" || p.Type == "custom_tool_call_output") && p.CallID != "":
		return agent.Entry{Kind: agent.EntryAction, ActionID: p.CallID, ActionStatus: agent.ActionCompleted, TurnID: p.Meta.TurnID, Time: at}, true
	case l.Type == "event_msg" && p.Type == "exec_command_end" && p.CallID != "" && p.ExitCode != nil:
		st := agent.ActionCompleted
		if *p.ExitCode != 0 {
			st = agent.ActionFailed
		}
		return agent.Entry{Kind: agent.EntryAction, ActionID: p.CallID, ActionStatus: st, TurnID: p.TurnID, Time: at}, true
	case l.Type == "event_msg" && p.Type == "item_completed" && p.Item != nil && p.Item.Type == "FileChange" && p.Item.ID != "":
		// An applied patch: the files it changed, as Codex records them.
		st := agent.ActionFailed
		var changes []agent.FileChange
		if p.Item.Status == "completed" {
			st, changes = agent.ActionCompleted, p.Item.fileChanges()
		}
		return agent.Entry{Kind: agent.EntryAction, ActionID: p.Item.ID, ActionStatus: st, TurnID: p.TurnID, Time: at, Changes: changes}, true
	case l.Type == "event_msg" && p.Type == "task_complete":
		if len(p.Error) > 0 && string(p.Error) != "null" {
			return agent.Entry{Kind: agent.EntryFailed, Text: failure(p.Error), TurnID: p.TurnID, Time: at}, true
		}
		final := ""
		if p.LastAgentMessage != nil {
			final = *p.LastAgentMessage
		}
		return agent.Entry{Kind: agent.EntryCompleted, Text: final, HasFinal: true, TurnID: p.TurnID, Time: at}, true
	case l.Type == "event_msg" && p.Type == "turn_aborted":
		reason := p.Reason
		if reason == "" {
			reason = "aborted"
		}
		return agent.Entry{Kind: agent.EntryInterrupted, Text: reason, TurnID: p.TurnID, Time: at}, true
	}
	return agent.Entry{}, false
}

// failure is a short reason from task_complete's error: its kind and the
// first line of its message (which may itself be the API's JSON body).
func failure(raw json.RawMessage) string {
	var e struct {
		Message string `json:"message"`
		Info    any    `json:"codex_error_info"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return "error"
	}
	msg := e.Message
	var api struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(msg), &api) == nil && api.Error.Message != "" {
		msg = api.Error.Message
	}
	msg, _, _ = strings.Cut(strings.TrimSpace(msg), "\n")
	if info, ok := e.Info.(string); ok && info != "" {
		msg = info + ": " + msg
	}
	if len(msg) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}
