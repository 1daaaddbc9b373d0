package codexappserver

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"akk/domain"
	"akk/terminaldrivers/agent"
)

// Thread is the part of a daemon's thread AKK reads.
type Thread struct {
	ID      string  `json:"id"`
	Cwd     string  `json:"cwd"`
	Name    *string `json:"name"`
	Preview string  `json:"preview"`
	Model   *string `json:"model"`
	// ReasoningEffort is the effort configured for the thread's next turn
	// (null: unset, the model's default applies).
	ReasoningEffort *string `json:"reasoningEffort"`
	CLIVersion      string  `json:"cliVersion"`
	Path            *string `json:"path"`
	Ephemeral       bool    `json:"ephemeral"`
	// Originator is the client name of whoever started the thread (AKK's
	// own are ClientName).
	Originator string          `json:"originator"`
	Status     ThreadStatus    `json:"status"`
	Turns      []Turn          `json:"turns"`
	Raw        json.RawMessage `json:"-"`
}

// ThreadStatus is a thread's state: idle, active, notLoaded, systemError.
type ThreadStatus struct {
	Type string `json:"type"`
}

// Turn is one turn of a thread.
type Turn struct {
	ID     string `json:"id"`
	Status string `json:"status"` // inProgress, completed, interrupted, failed
	Items  []Item `json:"items"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Item is one item of a turn; Text is set for agent messages and user
// messages' text parts.
type Item struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Text    string `json:"text"`
	Phase   string `json:"phase"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	// A fileChange item: the patch's status and the files it changes.
	Status  string       `json:"status"`
	Changes []FileUpdate `json:"changes"`
}

// FileUpdate is one file of a fileChange item: added or deleted (Diff is
// its content) or updated (Diff is a unified diff from its first "@@"),
// and where an update moved it.
type FileUpdate struct {
	Path string `json:"path"`
	Kind struct {
		Type      string  `json:"type"`
		MovePath  *string `json:"move_path"`
		MovePath2 *string `json:"movePath"`
	} `json:"kind"`
	Diff string `json:"diff"`
}

// FileChanges are a completed fileChange item's files as domain changes,
// their paths relative to cwd when inside it, in path order.
func (it Item) FileChanges(cwd string) []domain.FileChange {
	name := func(p string) string {
		if cwd != "" && filepath.IsAbs(p) {
			if rel, err := filepath.Rel(cwd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return rel
			}
		}
		return p
	}
	var out []domain.FileChange
	for _, u := range it.Changes {
		var fc agent.FileChange
		switch u.Kind.Type {
		case "add":
			fc = agent.FileChange{Path: u.Path, Op: "created", Content: u.Diff}
		case "delete":
			fc = agent.FileChange{Path: u.Path, Op: "deleted", Content: u.Diff}
		case "update":
			fc = agent.FileChange{Path: u.Path, Op: "updated", Body: u.Diff}
			to := u.Kind.MovePath
			if to == nil {
				to = u.Kind.MovePath2
			}
			if to != nil && *to != "" && *to != u.Path {
				fc.Op, fc.MovedTo = "moved", *to
			}
		default:
			continue
		}
		out = append(out, domain.FileChange{Path: name(fc.Path), Op: domain.FileOp(fc.Op), Diff: fc.Diff(name)})
	}
	slices.SortFunc(out, func(a, b domain.FileChange) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// FinalMessage is the text of the turn's last agent message, "" when none.
func (t Turn) FinalMessage() string {
	for i := len(t.Items) - 1; i >= 0; i-- {
		if t.Items[i].Type == "agentMessage" {
			return t.Items[i].Text
		}
	}
	return ""
}

// LoadedThreads lists the ids of the threads the daemon has loaded.
func (c *Client) LoadedThreads(ctx context.Context) ([]string, error) {
	var out []string
	var cursor *string
	for {
		var r struct {
			Data       []string `json:"data"`
			NextCursor *string  `json:"nextCursor"`
		}
		if err := c.Call(ctx, "thread/loaded/list", map[string]any{"cursor": cursor}, &r); err != nil {
			return nil, err
		}
		out = append(out, r.Data...)
		if r.NextCursor == nil || *r.NextCursor == "" {
			return out, nil
		}
		cursor = r.NextCursor
	}
}

// ReadThread reads one thread, with its turns when turns is set.
func (c *Client) ReadThread(ctx context.Context, id string, turns bool) (Thread, error) {
	return c.threadCall(ctx, "thread/read", map[string]any{"threadId": id, "includeTurns": turns})
}

// threadCall calls a method whose result is {"thread": …}.
func (c *Client) threadCall(ctx context.Context, method string, params any) (Thread, error) {
	var r struct {
		Thread json.RawMessage `json:"thread"`
	}
	if err := c.Call(ctx, method, params, &r); err != nil {
		return Thread{}, err
	}
	var t Thread
	if err := json.Unmarshal(r.Thread, &t); err != nil {
		return Thread{}, err
	}
	t.Raw = r.Thread
	return t, nil
}

// StartTurn starts a turn on a loaded thread with text as the user's
// message; messageID goes with it as the client's own id of that message.
// model and effort, when set, override the thread's for this turn and its
// later ones.
func (c *Client) StartTurn(ctx context.Context, threadID, text, messageID, model, effort string) (Turn, error) {
	var r struct {
		Turn Turn `json:"turn"`
	}
	params := map[string]any{
		"threadId": threadID,
		"input":    []map[string]any{{"type": "text", "text": text, "text_elements": []any{}}},
	}
	if messageID != "" {
		params["clientUserMessageId"] = messageID
	}
	if model != "" {
		params["model"] = model
	}
	if effort != "" {
		params["effort"] = effort
	}
	err := c.Call(ctx, "turn/start", params, &r)
	return r.Turn, err
}

// InterruptTurn asks the daemon to interrupt a running turn.
func (c *Client) InterruptTurn(ctx context.Context, threadID, turnID string) error {
	return c.Call(ctx, "turn/interrupt", map[string]any{"threadId": threadID, "turnId": turnID}, nil)
}

// TurnEvent is a turn/started or turn/completed notification.
type TurnEvent struct {
	ThreadID string `json:"threadId"`
	Turn     Turn   `json:"turn"`
}

// ItemEvent is an item/started or item/completed notification.
type ItemEvent struct {
	ThreadID string `json:"threadId"`
	TurnID   string `json:"turnId"`
	Item     Item   `json:"item"`
}

// Follow makes this connection a subscriber of a loaded thread, so its
// turn and item notifications reach it too (a client that did not start or
// resume a thread hears only thread/started and thread/status/changed). It
// is thread/resume without turns and without overrides: the thread's
// model, folder and settings stay as they are.
func (c *Client) Follow(ctx context.Context, threadID string) (Thread, error) {
	return c.threadCall(ctx, "thread/resume", map[string]any{"threadId": threadID, "excludeTurns": true})
}

// Unfollow ends this connection's subscription to a thread.
func (c *Client) Unfollow(ctx context.Context, threadID string) error {
	return c.Call(ctx, "thread/unsubscribe", map[string]any{"threadId": threadID}, nil)
}

// StartThread starts a thread in the folder cwd with the daemon's
// configured defaults (model, approvals, sandbox): the one a new TUI
// would start there. It stays loaded after this connection closes.
func (c *Client) StartThread(ctx context.Context, cwd string) (Thread, error) {
	return c.threadCall(ctx, "thread/start", map[string]any{"cwd": cwd})
}

// ResumeThread loads a recorded thread again (after a daemon restart),
// with its settings as recorded.
func (c *Client) ResumeThread(ctx context.Context, id string) (Thread, error) {
	return c.Follow(ctx, id)
}

// RecordedThreads pages through the daemon's recorded threads, newest
// first, until each returns false or max threads were seen.
func (c *Client) RecordedThreads(ctx context.Context, max int, each func(Thread) bool) error {
	var cursor *string
	seen := 0
	for seen < max {
		var r struct {
			Data       []json.RawMessage `json:"data"`
			NextCursor *string           `json:"nextCursor"`
		}
		if err := c.Call(ctx, "thread/list", map[string]any{"cursor": cursor, "limit": 50}, &r); err != nil {
			return err
		}
		for _, raw := range r.Data {
			var t Thread
			if err := json.Unmarshal(raw, &t); err != nil {
				return err
			}
			t.Raw = raw
			seen++
			if !each(t) {
				return nil
			}
		}
		if r.NextCursor == nil || *r.NextCursor == "" || len(r.Data) == 0 {
			return nil
		}
		cursor = r.NextCursor
	}
	return nil
}

// Model is one model of the daemon's catalogue.
type Model struct {
	ID                        string `json:"id"`
	Model                     string `json:"model"`
	DisplayName               string `json:"displayName"`
	Hidden                    bool   `json:"hidden"`
	IsDefault                 bool   `json:"isDefault"`
	DefaultReasoningEffort    string `json:"defaultReasoningEffort"`
	SupportedReasoningEfforts []struct {
		ReasoningEffort string `json:"reasoningEffort"`
	} `json:"supportedReasoningEfforts"`
}

// ListModels reads the daemon's model catalogue (hidden models left out).
func (c *Client) ListModels(ctx context.Context) ([]Model, error) {
	var out []Model
	var cursor *string
	for page := 0; page < 50; page++ {
		var r struct {
			Data       []Model `json:"data"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := c.Call(ctx, "model/list", map[string]any{"cursor": cursor, "includeHidden": false}, &r); err != nil {
			return nil, err
		}
		for _, m := range r.Data {
			if !m.Hidden {
				out = append(out, m)
			}
		}
		if r.NextCursor == nil || *r.NextCursor == "" {
			break
		}
		cursor = r.NextCursor
	}
	return out, nil
}
