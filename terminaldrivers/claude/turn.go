package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/proc"
	"akk/terminaldrivers/screen"
)

// TurnRules implements agent.TurnProfile.
func (p Profile) TurnRules() agent.TurnRules { return p.Turn }

// ComposerText implements agent.TurnProfile: the rows between the two rules
// of the composer, the first after the prompt glyph, the others after their
// two-column indent.
func (p Profile) ComposerText(c screen.Capture) ([]string, bool) {
	bottom := c.Bottom()
	lower := c.LastIndex(0, bottom, isRule)
	if lower < 0 {
		return nil, false
	}
	upper := c.LastIndex(0, lower, isRule)
	if upper < 0 || upper+1 >= lower || !strings.HasPrefix(c.Lines[upper+1].Text, p.Composer) {
		return nil, false
	}
	var rows []string
	for i := upper + 1; i < lower; i++ {
		t := c.Lines[i].Text
		if i == upper+1 {
			t = strings.TrimPrefix(t, p.Composer)
			t = strings.TrimPrefix(strings.TrimPrefix(t, " "), "\u00a0")
		} else {
			t = strings.TrimPrefix(t, "  ")
		}
		rows = append(rows, strings.TrimRight(t, " \u00a0"))
	}
	for len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1]
	}
	return rows, true
}

var pastedText = regexp.MustCompile(`^\[Pasted text #\d+(?: \+(\d+) lines)?\]$`)

// collapsedPaste recognises "[Pasted text #N +M lines]" (M the newlines of
// the paste) or "[Pasted text #N]" (one long line), which Claude Code shows
// alone in the composer instead of a paste over 800 characters or 3 lines.
func collapsedPaste(rows []string, text string) bool {
	if len(rows) != 1 {
		return false
	}
	m := pastedText.FindStringSubmatch(rows[0])
	if m == nil {
		return false
	}
	newlines := strings.Count(text, "\n")
	if m[1] == "" {
		return newlines == 0
	}
	n, err := strconv.Atoi(m[1])
	return err == nil && n == newlines
}

// collapses: Claude Code collapses a paste of more than 800 characters
// (UTF-16 code units) or more than three lines.
func collapses(text string) bool {
	return len(utf16.Encode([]rune(text))) > 800 || strings.Count(text, "\n") > 2
}

// SessionRecord reads sessions/<pid>.json of exactly this process
// incarnation: its session id and working directory.
func SessionRecord(p agent.Process) (configDir, sessionID, cwd string, err error) {
	dir, ok := ConfigDir(p.Env)
	if !ok {
		return "", "", "", errors.New("Claude Code's environment names no HOME or CLAUDE_CONFIG_DIR")
	}
	rec, err := readSessionRecord(filepath.Join(dir, "sessions", strconv.Itoa(p.Stat.PID)+".json"))
	if err != nil {
		return "", "", "", fmt.Errorf("read Claude Code's session record: %w", err)
	}
	if rec.PID != p.Stat.PID || rec.ProcStart != strconv.FormatUint(p.Stat.StartTicks, 10) {
		return "", "", "", errors.New("Claude Code's session record belongs to an earlier process with the same pid")
	}
	if !uuid.MatchString(rec.SessionID) {
		return "", "", "", errors.New("Claude Code's session record names no session id")
	}
	cwd = rec.Cwd
	if cwd == "" {
		cwd = p.Cwd
	}
	return dir, rec.SessionID, cwd, nil
}

// transcriptRecords is where the next turn of a Claude Code process goes:
// the transcript of the session its session record names, which may not
// exist before the first message.
func transcriptRecords(_ proc.FS, _ *proc.Table, p agent.Process) (agent.RecordSet, error) {
	dir, sid, cwd, err := SessionRecord(p)
	if err != nil {
		return agent.RecordSet{}, err
	}
	path, ok := TranscriptPath(dir, cwd, sid)
	if !ok {
		path = filepath.Join(ProjectDir(dir, cwd), sid+".jsonl")
	}
	state := filepath.Join(dir, "sessions", strconv.Itoa(p.Stat.PID)+".json")
	return agent.RecordSet{Files: []agent.RecordFile{{Path: path, ThreadID: sid}}, State: state}, nil
}

// sessionIdleSince reads the session record's status: "idle" since
// statusUpdatedAt (ms since the epoch) when no turn runs; "busy" while one
// runs and "waiting" while a permission prompt or question waits.
func sessionIdleSince(stateFile, sessionID string) (time.Time, bool) {
	b, err := os.ReadFile(stateFile)
	if err != nil {
		return time.Time{}, false
	}
	var rec struct {
		SessionID       string `json:"sessionId"`
		Status          string `json:"status"`
		StatusUpdatedAt int64  `json:"statusUpdatedAt"`
	}
	if json.Unmarshal(b, &rec) != nil || rec.SessionID != sessionID || rec.Status != "idle" || rec.StatusUpdatedAt <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(rec.StatusUpdatedAt), true
}

// sessionWaiting: the session record says "waiting" (a permission prompt
// or question waits) for sessionID ("" when not known yet).
func sessionWaiting(stateFile, sessionID string) bool {
	b, err := os.ReadFile(stateFile)
	if err != nil {
		return false
	}
	var rec struct {
		SessionID string `json:"sessionId"`
		Status    string `json:"status"`
	}
	return json.Unmarshal(b, &rec) == nil && rec.Status == "waiting" && (sessionID == "" || rec.SessionID == sessionID)
}

// transcriptLine is the part of a transcript line a Turn reads.
type transcriptLine struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	IsSidechain bool   `json:"isSidechain"`
	IsMeta      bool   `json:"isMeta"`
	IsAPIError  bool   `json:"isApiErrorMessage"`
	APIStatus   int    `json:"apiErrorStatus"`
	PromptID    string `json:"promptId"`
	UUID        string `json:"uuid"`
	Timestamp   string `json:"timestamp"`
	// ToolUseResult is what a tool's result line says the tool did (an
	// object for a file tool; a string for an error).
	ToolUseResult json.RawMessage `json:"toolUseResult"`
	Message       struct {
		ID         string          `json:"id"`
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		StopReason string          `json:"stop_reason"`
	} `json:"message"`
}

type contentBlock struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	ID        string `json:"id"`          // tool_use
	Name      string `json:"name"`        // tool_use
	ToolUseID string `json:"tool_use_id"` // tool_result
	IsError   bool   `json:"is_error"`    // tool_result
}

// action reads a message that is only tool use (the assistant starts a
// tool) or only tool results (a tool ended) as an action entry.
func action(raw json.RawMessage, at time.Time) (agent.Entry, bool) {
	var blocks []contentBlock
	if json.Unmarshal(raw, &blocks) != nil || len(blocks) != 1 {
		return agent.Entry{}, false
	}
	b := blocks[0]
	switch {
	case b.Type == "tool_use" && b.ID != "" && b.Name != "":
		return agent.Entry{Kind: agent.EntryAction, ActionID: b.ID, Action: b.Name, ActionStatus: agent.ActionInProgress, Time: at}, true
	case b.Type == "tool_result" && b.ToolUseID != "":
		st := agent.ActionCompleted
		if b.IsError {
			st = agent.ActionFailed
		}
		return agent.Entry{Kind: agent.EntryAction, ActionID: b.ToolUseID, ActionStatus: st, Time: at}, true
	}
	return agent.Entry{}, false
}

// content reads message content: a string, or blocks whose text blocks are
// joined. onlyText is false when other blocks (tool use, tool results,
// images) are present.
func content(raw json.RawMessage) (text string, onlyText bool, ok bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true, true
	}
	var blocks []contentBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return "", false, false
	}
	var parts []string
	onlyText = true
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			onlyText = false
		}
	}
	return strings.Join(parts, "\n"), onlyText, true
}

// interruptedMarker starts the user record Claude Code writes when the
// person interrupts a turn that had begun answering ("[Request interrupted
// by user]", "... for tool use]").
const interruptedMarker = "[Request interrupted by user"

// ParseTranscriptLine reads one transcript line for a Turn: the person's
// prompts, assistant text, the end of a turn (turn_duration), API errors
// and interrupts. Sub-agent (sidechain) and meta records say nothing about
// the person's turn.
func ParseTranscriptLine(line []byte) (agent.Entry, bool) {
	var l transcriptLine
	if json.Unmarshal(line, &l) != nil || l.IsSidechain {
		return agent.Entry{}, false
	}
	at, _ := time.Parse(time.RFC3339Nano, l.Timestamp)
	switch {
	case l.Type == "user" && !l.IsMeta && l.Message.Role == "user":
		text, onlyText, ok := content(l.Message.Content)
		if ok && !onlyText {
			e, ok := action(l.Message.Content, at)
			if ok && e.ActionStatus == agent.ActionCompleted {
				e.Changes = fileChanges(l.ToolUseResult)
			}
			return e, ok
		}
		if !ok {
			return agent.Entry{}, false
		}
		if strings.HasPrefix(text, interruptedMarker) {
			return agent.Entry{Kind: agent.EntryInterrupted, Text: "interrupted", Time: at}, true
		}
		turn := l.PromptID
		if turn == "" {
			turn = l.UUID
		}
		return agent.Entry{Kind: agent.EntryUserPrompt, Text: text, TurnID: turn, Time: at}, true
	case l.Type == "assistant" && l.IsAPIError:
		text, _, _ := content(l.Message.Content)
		return agent.Entry{Kind: agent.EntryFailed, Text: short(text), Time: at}, true
	case l.Type == "assistant":
		text, onlyText, ok := content(l.Message.Content)
		if !ok {
			return agent.Entry{}, false
		}
		if e, isAction := action(l.Message.Content, at); isAction && !onlyText && text == "" {
			e.MessageID = l.Message.ID
			return e, true
		}
		return agent.Entry{Kind: agent.EntryAssistantText, Text: text, MessageID: l.Message.ID, EndTurn: l.Message.StopReason == "end_turn", Time: at}, true
	case l.Type == "system" && l.Subtype == "turn_duration":
		return agent.Entry{Kind: agent.EntryCompleted, Time: at}, true
	}
	return agent.Entry{}, false
}

// fileResult is the part of a file tool's result (Write, Edit, MultiEdit)
// that says what it changed.
type fileResult struct {
	Type            string        `json:"type"` // Write: create or update
	FilePath        string        `json:"filePath"`
	Content         string        `json:"content"`
	StructuredPatch *[]agent.Hunk `json:"structuredPatch"`
}

// fileChanges reads what a tool result says a file tool changed: a file
// created (Write's "create", its whole content) or updated (the hunks of
// its structuredPatch). Other tools' results, errors (a string) and
// updates that changed nothing say nothing.
func fileChanges(raw json.RawMessage) []agent.FileChange {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var r fileResult
	if json.Unmarshal(raw, &r) != nil || r.FilePath == "" || r.StructuredPatch == nil {
		return nil
	}
	if r.Type == "create" {
		return []agent.FileChange{{Path: r.FilePath, Op: "created", Content: r.Content}}
	}
	if len(*r.StructuredPatch) == 0 {
		return nil
	}
	return []agent.FileChange{{Path: r.FilePath, Op: "updated", Hunks: *r.StructuredPatch}}
}

// short bounds a failure reason to one line of 200 bytes.
func short(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

// pastedContent is how Claude Code 2.1.328 records a prompt that was one
// collapsed paste: the pasted text between tags naming the paste, after
// two newlines.
var pastedContent = regexp.MustCompile(`(?s)^\n\n<pasted_content id="([0-9A-Za-z_-]+)">\n(.*)\n</pasted_content id="([0-9A-Za-z_-]+)">\n$`)

// unwrapPaste returns the pasted text of a prompt recorded as one paste,
// else the prompt as recorded.
func unwrapPaste(text string) string {
	m := pastedContent.FindStringSubmatch(text)
	if m == nil || m[1] != m[3] {
		return text
	}
	return m[2]
}

// ParseTranscriptLineUnwrapping is ParseTranscriptLine for versions that
// record a collapsed paste wrapped in pasted_content tags: the prompt is
// the text the person pasted.
func ParseTranscriptLineUnwrapping(line []byte) (agent.Entry, bool) {
	e, ok := ParseTranscriptLine(line)
	if ok && e.Kind == agent.EntryUserPrompt {
		e.Text = unwrapPaste(e.Text)
	}
	return e, ok
}
