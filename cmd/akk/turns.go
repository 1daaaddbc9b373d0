package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/r3labs/sse/v2"
	"gopkg.in/cenkalti/backoff.v1"

	"akk/cmd/akk/client"
)

// send: akk send [--message-id K] [--wait] <terminal_id|session_id|conversation_id|-> <text...>
func (c *cli) send(args []string) error {
	fs := newFlags("send")
	fs.SetInterspersed(false) // the text is the rest, whatever it holds
	wait := fs.Bool("wait", false, "follow the Turn until it ends")
	msgID := fs.String("message-id", "", "idempotency key")
	conv := fs.String("conversation", "", "AKK-Conversation value to record")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() < 2 {
		return usageErr("usage: akk send [--wait] [--message-id K] <conversation_id|terminal_id|session_id|-> <text>")
	}
	target, text := fs.Arg(0), strings.Join(fs.Args()[1:], " ")
	body := client.SendTurnJSONRequestBody{Request: text}
	switch {
	case strings.HasPrefix(target, "term_"):
		body.TerminalId = &target
	case strings.HasPrefix(target, "sess_"):
		body.SessionId = &target
	case strings.HasPrefix(target, "conv_"):
		// A conversation, as akk list prints it: sent where its row's send
		// action says (its pane, or its thread through the daemon).
		term, conv, err := c.conversationSend(target)
		if err != nil {
			return err
		}
		body.TerminalId, body.ConversationId = term, conv
	case target == "-":
	default:
		return usageErr(fmt.Sprintf("target %q is neither a conversation_id (conv_…, as akk list prints it), a terminal_id (term_…), a session_id (sess_…) nor - (the only send-ready terminal)", target))
	}
	if *msgID != "" {
		body.MessageId = msgID
	}
	params := &client.SendTurnParams{}
	if *conv != "" {
		params.AKKConversation = conv
	}
	r, err := c.api.SendTurnWithResponse(c.ctx, params, body)
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	res := r.JSON202
	if res == nil {
		res = r.JSON200
	}
	if c.json && !*wait {
		if err := c.printJSON(r.Body); err != nil || !res.DoNotRetry {
			return err
		}
		return uncertainErr
	}
	if !c.json {
		fmt.Fprintf(c.out, "turn %s: %s (outcome %s, %s)\n", res.TurnId, res.State, res.Outcome, res.DeliveryPath)
		if res.WatchId != nil {
			fmt.Fprintf(c.out, "watch %s\n", *res.WatchId)
		}
		for _, w := range res.Warnings {
			fmt.Fprintf(c.out, "warning: %s\n", w)
		}
		if res.DoNotRetry {
			fmt.Fprintln(c.out, "delivery is not proven: do not send it again; look at the pane")
			return uncertainErr
		}
	}
	if *wait {
		return c.follow(res.TurnId)
	}
	return nil
}

// follow streams one Turn's events until a state the monitor leaves.
func (c *cli) follow(turnID string) error {
	sc := sse.NewClient(c.url + "/v1/turns/" + turnID + "/events")
	sc.Headers["Authorization"] = "Bearer " + c.token
	sc.ReconnectStrategy = backoff.WithContext(backoff.NewExponentialBackOff(), c.ctx)
	sc.ResponseValidator = func(_ *sse.Client, resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("events: HTTP %d", resp.StatusCode)
		}
		return nil
	}
	ctx, stop := context.WithCancel(c.ctx)
	defer stop()
	var final, shown string
	err := sc.SubscribeRawWithContext(ctx, func(e *sse.Event) {
		if len(e.Data) == 0 {
			return
		}
		var env struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		json.Unmarshal(e.Data, &env)
		switch {
		case c.json:
			fmt.Fprintf(c.out, "%s\n", e.Data)
		case env.Type == "turn.progress":
			c.showProgress(turnID, &shown)
		default:
			fmt.Fprintf(c.out, "%s\t%v\n", env.Type, env.Data["state"])
			if env.Data["state"] == "working" {
				c.showProgress(turnID, &shown) // acceptance may come with progress
			}
		}
		switch env.Data["state"] {
		case "awaiting_approval", "awaiting_interaction":
			// It waits on a person now (the stream replays a Turn's story
			// from its start; a prompt answered since is passed by): say
			// how to answer, and let them.
			if r, err := c.api.GetTurnWithResponse(ctx, turnID); err != nil || r.JSON200 == nil || string(r.JSON200.State) != env.Data["state"] {
				return
			}
			if !c.json {
				how := "akk approve " + turnID + " approve_once|reject"
				if env.Data["state"] == "awaiting_interaction" {
					how = "akk interaction " + turnID
				}
				fmt.Fprintf(c.out, "\nwaiting for you: akk status %s shows what; answer with %s, then akk status --wait %s\n", turnID, how, turnID)
			}
			final, _ = env.Data["state"].(string)
			stop()
		case "completed", "failed", "cancelled", "stalled", "delivery_uncertain", "response_uncertain", "closed", "waiting_for_host":
			final, _ = env.Data["state"].(string)
			if m, ok := env.Data["final_message"].(string); ok && !c.json {
				fmt.Fprintf(c.out, "\n%s\n", m)
			}
			stop()
		}
	})
	if final != "" || c.ctx.Err() != nil {
		return nil
	}
	return err
}

// showProgress prints the Turn's public progress when it changed since
// shown (a turn.progress event says only that it moved).
func (c *cli) showProgress(turnID string, shown *string) {
	r, err := c.api.GetTurnWithResponse(c.ctx, turnID)
	if err != nil || r.JSON200 == nil {
		return
	}
	line := progressLine(r.JSON200.Progress)
	if line != "" && line != *shown {
		*shown = line
		fmt.Fprintf(c.out, "progress\t%s\n", line)
	}
}

// progressLine is the progress body on one line: actions, then commentary.
func progressLine(p client.TurnProgress) string {
	var parts []string
	for _, a := range p.Actions {
		parts = append(parts, "["+a.Type+" "+string(a.Status)+"]")
	}
	if t := strings.Join(strings.Fields(p.LatestText), " "); t != "" {
		parts = append(parts, t)
	}
	return strings.Join(parts, " ")
}

func (c *cli) status(args []string) error {
	fs := newFlags("status")
	wait := fs.Bool("wait", false, "follow the Turn until it ends or waits on you")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	args = fs.Args()
	if len(args) != 1 {
		return usageErr("usage: akk status [--wait] TURN_ID")
	}
	if *wait {
		return c.follow(args[0])
	}
	r, err := c.api.GetTurnWithResponse(c.ctx, args[0])
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	t := r.JSON200
	fmt.Fprintf(c.out, "turn:     %s\nstate:    %s\nterminal: %s\nsession:  %s\ncreated:  %s\n", t.TurnId, t.State, t.TerminalId, t.SessionId, t.CreatedAt)
	if t.Result != nil && t.Result.Reason != nil {
		fmt.Fprintf(c.out, "reason:   %s\n", *t.Result.Reason)
	}
	fmt.Fprintf(c.out, "path:     %s\n", t.DeliveryPath)
	if t.WatchId != nil {
		fmt.Fprintf(c.out, "watch:    %s\n", *t.WatchId)
	}
	fmt.Fprintf(c.out, "progress: %s", t.Progress.State)
	if t.Progress.Truncated {
		fmt.Fprint(c.out, " (shortened)")
	}
	fmt.Fprintln(c.out)
	if line := progressLine(t.Progress); line != "" {
		fmt.Fprintf(c.out, "latest:   %s\n", line)
	}
	if a := t.Approval; a != nil {
		// What waits for a decision, as the API shows it (redacted).
		what := a.PromptKind
		if a.Tool != nil && *a.Tool != "" {
			what += " (" + *a.Tool + ")"
		}
		fmt.Fprintf(c.out, "approval: %s\n", what)
		if a.CommandExcerpt != nil && *a.CommandExcerpt != "" {
			fmt.Fprintf(c.out, "command:  %s\n", *a.CommandExcerpt)
		}
		switch {
		case a.ManualRequired:
			fmt.Fprintf(c.out, "answer:   in the pane (%s)\n", deref(a.Reason))
		case len(a.Decisions) > 0:
			var ds []string
			for _, d := range a.Decisions {
				ds = append(ds, string(d))
			}
			fmt.Fprintf(c.out, "answer:   akk approve %s %s\n", t.TurnId, strings.Join(ds, "|"))
		}
	}
	if in := t.InteractionState; in != nil {
		for _, q := range in.Questions {
			fmt.Fprintf(c.out, "question: %s\n", strings.TrimSpace(q.Header+": "+q.Prompt))
			for _, o := range q.Options {
				fmt.Fprintf(c.out, "          - %s (%s)\n", o.Label, o.OptionId)
			}
		}
		fmt.Fprintf(c.out, "answer:   akk respond-interaction %s --interaction %s --answer QUESTION_ID=OPTION_ID (akk interaction %s shows the ids)\n",
			t.TurnId, in.InteractionId, t.TurnId)
	}
	if t.Result != nil && t.Result.FinalMessage != nil {
		fmt.Fprintf(c.out, "\n%s\n", *t.Result.FinalMessage)
	}
	fmt.Fprintf(c.out, "webhooks: %d delivered, %d pending, %d failed\n", t.Callbacks.Delivered, t.Callbacks.Pending, t.Callbacks.Failed)
	return nil
}

func (c *cli) turns(args []string) error {
	fs := newFlags("turns")
	state := fs.String("state", "", "only Turns in this state")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	params := &client.ListTurnsParams{}
	if *state != "" {
		s := client.TurnState(*state)
		params.State = &s
	}
	r, err := c.api.ListTurnsWithResponse(c.ctx, params)
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	var rows [][]string
	for _, t := range r.JSON200.Turns {
		rows = append(rows, []string{t.TurnId, string(t.State), t.TerminalId, t.CreatedAt.Local().Format("2006-01-02 15:04:05")})
	}
	c.table("TURN\tSTATE\tTERMINAL\tCREATED", rows)
	return nil
}

// turnAction runs respond, cancel, close, renew or recover.
func (c *cli) turnAction(name string, args []string) error {
	if len(args) < 1 || (name == "respond" && len(args) < 2) {
		if name == "respond" {
			return errors.New("usage: akk respond TURN_ID <text>")
		}
		return fmt.Errorf("usage: akk %s TURN_ID", name)
	}
	id := args[0]
	var resp *http.Response
	var body []byte
	var err error
	switch name {
	case "respond":
		var r *client.RespondTurnResponse
		if r, err = c.api.RespondTurnWithResponse(c.ctx, id, client.RespondTurnJSONRequestBody{Request: strings.Join(args[1:], " ")}); err == nil {
			resp, body = r.HTTPResponse, r.Body
		}
	case "cancel":
		var r *client.CancelTurnResponse
		if r, err = c.api.CancelTurnWithResponse(c.ctx, id); err == nil {
			resp, body = r.HTTPResponse, r.Body
		}
	case "close":
		var r *client.CloseTurnResponse
		reason := strings.Join(args[1:], " ")
		req := client.CloseTurnJSONRequestBody{}
		if reason != "" {
			req.Reason = &reason
		}
		if r, err = c.api.CloseTurnWithResponse(c.ctx, id, req); err == nil {
			resp, body = r.HTTPResponse, r.Body
		}
	case "renew":
		var r *client.RenewTurnResponse
		if r, err = c.api.RenewTurnWithResponse(c.ctx, id); err == nil {
			resp, body = r.HTTPResponse, r.Body
		}
	case "recover":
		var r *client.RecoverTurnResponse
		if r, err = c.api.RecoverTurnWithResponse(c.ctx, id); err == nil {
			resp, body = r.HTTPResponse, r.Body
		}
	}
	if err != nil {
		return err
	}
	if err := check(resp, body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(body)
	}
	var out struct {
		State      string `json:"state"`
		Outcome    string `json:"outcome"`
		DoNotRetry bool   `json:"do_not_retry"`
	}
	json.Unmarshal(body, &out)
	fmt.Fprintf(c.out, "turn %s: %s (outcome %s)\n", id, out.State, out.Outcome)
	if out.DoNotRetry {
		fmt.Fprintln(c.out, "not proven: do not repeat it; look at the pane")
	}
	return nil
}

// conversationSend is where a task for a conversation akk list shows
// goes: the target its send action names (its pane's terminal, or its
// thread's conversation); with no send offered now, its pane's terminal,
// so akkd says why it takes no task.
func (c *cli) conversationSend(id string) (terminalID, conversationID *string, err error) {
	r, err := c.api.ListConversationsWithResponse(c.ctx)
	if err != nil {
		return nil, nil, err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return nil, nil, err
	}
	for _, cv := range r.JSON200.Conversations {
		if cv.ConversationId != id {
			continue
		}
		for _, a := range cv.AvailableActions {
			if a.Action != "send" || a.Body == nil {
				continue
			}
			str := func(k string) *string {
				if v, ok := (*a.Body)[k].(string); ok && v != "" {
					return &v
				}
				return nil
			}
			if terminalID, conversationID = str("terminal_id"), str("conversation_id"); terminalID != nil || conversationID != nil {
				return terminalID, conversationID, nil
			}
		}
		if cv.Terminal != nil {
			return &cv.Terminal.TerminalId, nil, nil
		}
		return nil, nil, &apiError{status: 409, code: "conversation_not_sendable", msg: "conversation " + id + " takes no task now (akk list says what it does)"}
	}
	return nil, nil, &apiError{status: 404, code: "conversation_not_found", msg: "no conversation " + id + " in akk list (its pane closed, or it belongs to another host)"}
}
