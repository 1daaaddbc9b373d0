package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"akk/cmd/akk/client"
)

// approve: akk approve <turn_id|terminal_id> approve_once|reject
// The status (akk status, akk list) must have shown the prompt first.
func (c *cli) approve(args []string) error {
	if len(args) != 2 || (args[1] != "approve_once" && args[1] != "reject") {
		return errors.New("usage: akk approve <turn_id|terminal_id> approve_once|reject")
	}
	d := client.ApprovalRequestDecision(args[1])
	var body []byte
	switch {
	case strings.HasPrefix(args[0], "turn_"):
		// A fresh status first: acting on a prompt needs an offer.
		if r, err := c.api.GetTurnWithResponse(c.ctx, args[0]); err != nil {
			return err
		} else if err := check(r.HTTPResponse, r.Body, nil); err != nil {
			return err
		}
		r, err := c.api.ApproveTurnWithResponse(c.ctx, args[0], &client.ApproveTurnParams{}, client.ApproveTurnJSONRequestBody{Decision: d})
		if err != nil {
			return err
		}
		if err := check(r.HTTPResponse, r.Body, nil); err != nil {
			return err
		}
		body = r.Body
	case strings.HasPrefix(args[0], "term_"):
		if r, err := c.api.ListConversationsWithResponse(c.ctx); err != nil {
			return err
		} else if err := check(r.HTTPResponse, r.Body, nil); err != nil {
			return err
		}
		r, err := c.api.ApproveTerminalWithResponse(c.ctx, args[0], &client.ApproveTerminalParams{}, client.ApproveTerminalJSONRequestBody{Decision: d})
		if err != nil {
			return err
		}
		if err := check(r.HTTPResponse, r.Body, nil); err != nil {
			return err
		}
		body = r.Body
	default:
		return fmt.Errorf("%q is neither a turn_id nor a terminal_id", args[0])
	}
	var res struct {
		TurnID     string  `json:"turn_id"`
		TerminalID string  `json:"terminal_id"`
		State      string  `json:"state"`
		Outcome    string  `json:"outcome"`
		DoNotRetry bool    `json:"do_not_retry"`
		Detail     *string `json:"detail"`
	}
	_ = json.Unmarshal(body, &res)
	if c.json {
		if err := c.printJSON(body); err != nil || !res.DoNotRetry {
			return err
		}
		return uncertainErr
	}
	line := args[1] + ": " + res.Outcome
	if res.TurnID != "" {
		line += fmt.Sprintf(" (turn %s now %s)", res.TurnID, res.State)
	}
	fmt.Fprintln(c.out, line)
	return c.uncertain(res.DoNotRetry, res.Detail)
}

// watch: akk watch TERMINAL_ID | akk unwatch WATCH_ID | akk watch-status WATCH_ID
func (c *cli) watch(name string, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: akk %s ID", name)
	}
	var body []byte
	switch name {
	case "watch":
		r, err := c.api.CreateWatchWithResponse(c.ctx, &client.CreateWatchParams{}, client.CreateWatchJSONRequestBody{TerminalId: args[0]})
		if err != nil {
			return err
		}
		if err := check(r.HTTPResponse, r.Body, nil); err != nil {
			return err
		}
		body = r.Body
	case "unwatch":
		r, err := c.api.DeleteWatchWithResponse(c.ctx, args[0])
		if err != nil {
			return err
		}
		if err := check(r.HTTPResponse, r.Body, nil); err != nil {
			return err
		}
		body = r.Body
	case "watch-status":
		r, err := c.api.GetWatchWithResponse(c.ctx, args[0])
		if err != nil {
			return err
		}
		if err := check(r.HTTPResponse, r.Body, nil); err != nil {
			return err
		}
		body = r.Body
	}
	return c.printResult(body)
}
