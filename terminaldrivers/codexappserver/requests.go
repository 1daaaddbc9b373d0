package codexappserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"akk/domain"
)

// Server requests AKK reads and answers, and the notification that ends
// one (another client answered it, or the turn ended).
const (
	MethodCommandApproval = "item/commandExecution/requestApproval"
	MethodUserInput       = "item/tool/requestUserInput"
	MethodResolved        = "serverRequest/resolved"
)

// ErrNotAnswerable: the request is not one AKK answers, or the answer is
// not one the request offers. Nothing was sent.
var ErrNotAnswerable = errors.New("not an answer this request offers")

// CommandApproval is a command execution the daemon asks a client to
// approve (item/commandExecution/requestApproval).
type CommandApproval struct {
	ThreadID   string  `json:"threadId"`
	TurnID     string  `json:"turnId"`
	ItemID     string  `json:"itemId"`
	ApprovalID *string `json:"approvalId"`
	Command    *string `json:"command"`
	Cwd        *string `json:"cwd"`
	Reason     *string `json:"reason"`
}

// Decision is a closed, one-time answer to a command approval. Persistent
// grants the protocol also knows (acceptForSession, exec or network policy
// amendments) are not Decisions: AKK never sends them.
type Decision string

const (
	// ApproveOnce runs this one command.
	ApproveOnce Decision = "accept"
	// Decline refuses it; the turn goes on without it.
	Decline Decision = "decline"
)

// ParseCommandApproval reads m as a command approval request.
func ParseCommandApproval(m Message) (CommandApproval, bool) {
	var a CommandApproval
	if !m.IsRequest() || m.Method != MethodCommandApproval || json.Unmarshal(m.Params, &a) != nil || a.ThreadID == "" || a.TurnID == "" || a.ItemID == "" {
		return CommandApproval{}, false
	}
	return a, true
}

// UserInputRequest is a question the agent asks through its tool
// (item/tool/requestUserInput).
type UserInputRequest struct {
	ThreadID   string              `json:"threadId"`
	TurnID     string              `json:"turnId"`
	ItemID     string              `json:"itemId"`
	IsBlocking bool                `json:"isBlocking"`
	Questions  []UserInputQuestion `json:"questions"`
}

// UserInputQuestion is one question of a UserInputRequest. IsOther: the
// person may answer in their own words beside the options; IsSecret: the
// answer is a secret (AKK never relays one).
type UserInputQuestion struct {
	ID       string            `json:"id"`
	Header   string            `json:"header"`
	Question string            `json:"question"`
	IsOther  bool              `json:"isOther"`
	IsSecret bool              `json:"isSecret"`
	Options  []UserInputOption `json:"options"`
}

// UserInputOption is one choice of a question.
type UserInputOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// ParseUserInput reads m as a user input request.
func ParseUserInput(m Message) (UserInputRequest, bool) {
	var r UserInputRequest
	if !m.IsRequest() || m.Method != MethodUserInput || json.Unmarshal(m.Params, &r) != nil || r.ThreadID == "" || r.TurnID == "" || len(r.Questions) == 0 {
		return UserInputRequest{}, false
	}
	seen := map[string]bool{}
	for _, q := range r.Questions {
		if q.ID == "" || seen[q.ID] {
			return UserInputRequest{}, false
		}
		seen[q.ID] = true
	}
	return r, true
}

// Answer is the answer to one question: one of its options' labels, or
// (where the question IsOther) the person's own words.
type Answer struct {
	Option string
	Text   string
}

// MaxAnswerText bounds an answer in the person's own words (code points).
const MaxAnswerText = 2000

// Resolved is a serverRequest/resolved notification: the request with that
// id needs no answer any more.
type Resolved struct {
	RequestID json.RawMessage `json:"requestId"`
	ThreadID  string          `json:"threadId"`
}

// ParseResolved reads m as a serverRequest/resolved notification.
func ParseResolved(m Message) (Resolved, bool) {
	var r Resolved
	if m.IsRequest() || m.Method != MethodResolved || json.Unmarshal(m.Params, &r) != nil || len(r.RequestID) == 0 {
		return Resolved{}, false
	}
	return r, true
}

// Resolves reports whether r ends the request req.
func (r Resolved) Resolves(req Message) bool { return sameID(r.RequestID, req.ID) }

// sameID compares two JSON-RPC ids (a number or a string) by value.
func sameID(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y) && fmt.Sprintf("%T", x) == fmt.Sprintf("%T", y)
}

// DecideCommand answers a command approval request with a one-time
// decision. Anything but ApproveOnce or Decline, or a request that is not
// a command approval, sends nothing (ErrNotAnswerable).
func (c *Client) DecideCommand(ctx context.Context, req Message, d Decision) error {
	if _, ok := ParseCommandApproval(req); !ok {
		return fmt.Errorf("%w: not a command approval request", ErrNotAnswerable)
	}
	if d != ApproveOnce && d != Decline {
		return fmt.Errorf("%w: decision %q", ErrNotAnswerable, d)
	}
	return c.respond(ctx, req.ID, map[string]any{"decision": string(d)})
}

// AnswerUserInput answers a user input request: exactly one Answer per
// question, each an advertised option's label or, where the question
// allows it, one line of the person's own words (the questionnaire text
// rule, domain.FreeTextProblem). A secret question, an unknown question id
// or option, or text the rule refuses sends nothing (ErrNotAnswerable).
func (c *Client) AnswerUserInput(ctx context.Context, req Message, answers map[string]Answer) error {
	result, err := UserInputResult(req, answers)
	if err != nil {
		return err
	}
	return c.respond(ctx, req.ID, result)
}

// UserInputResult is the protocol's answer to req for answers, validated
// as AnswerUserInput says.
func UserInputResult(req Message, answers map[string]Answer) (map[string]any, error) {
	r, ok := ParseUserInput(req)
	if !ok {
		return nil, fmt.Errorf("%w: not a user input request", ErrNotAnswerable)
	}
	if len(answers) != len(r.Questions) {
		return nil, fmt.Errorf("%w: %d answers to %d questions", ErrNotAnswerable, len(answers), len(r.Questions))
	}
	out := map[string]any{}
	for _, q := range r.Questions {
		a, ok := answers[q.ID]
		if !ok {
			return nil, fmt.Errorf("%w: question %q has no answer", ErrNotAnswerable, q.ID)
		}
		if q.IsSecret {
			return nil, fmt.Errorf("%w: question %q asks for a secret", ErrNotAnswerable, q.ID)
		}
		var value string
		switch {
		case a.Option != "" && a.Text == "":
			for _, o := range q.Options {
				if o.Label == a.Option {
					value = o.Label
				}
			}
			if value == "" {
				return nil, fmt.Errorf("%w: question %q offers no option %q", ErrNotAnswerable, q.ID, a.Option)
			}
		case a.Option == "" && a.Text != "":
			if !q.IsOther && len(q.Options) > 0 {
				return nil, fmt.Errorf("%w: question %q takes only its options", ErrNotAnswerable, q.ID)
			}
			if why := domain.FreeTextProblem(a.Text, MaxAnswerText); why != "" {
				return nil, fmt.Errorf("%w: question %q: %s", ErrNotAnswerable, q.ID, why)
			}
			value = a.Text
		default:
			return nil, fmt.Errorf("%w: question %q needs one option or one text", ErrNotAnswerable, q.ID)
		}
		out[q.ID] = map[string]any{"answers": []string{value}}
	}
	return map[string]any{"answers": out}, nil
}

// respond answers the daemon's request id with result.
func (c *Client) respond(ctx context.Context, id json.RawMessage, result any) error {
	if len(id) == 0 {
		return fmt.Errorf("%w: no request id", ErrNotAnswerable)
	}
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.write(ctx, map[string]any{"id": id, "result": result})
}
