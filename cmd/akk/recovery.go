package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"akk/cmd/akk/client"
)

// retryCallback: akk retry-callback <turn_id|watch_id> [notification_id]
// redelivers a failed webhook with its original identity; with several
// failed, the daemon asks for the notification_id.
func (c *cli) retryCallback(args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return errors.New("usage: akk retry-callback <turn_id|watch_id> [notification_id]")
	}
	var n *string
	if len(args) == 2 {
		n = &args[1]
	}
	var resp *http.Response
	var body []byte
	switch {
	case strings.HasPrefix(args[0], "turn_"):
		r, err := c.api.RetryTurnCallbackWithResponse(c.ctx, args[0], client.RetryTurnCallbackJSONRequestBody{NotificationId: n})
		if err != nil {
			return err
		}
		resp, body = r.HTTPResponse, r.Body
	case strings.HasPrefix(args[0], "watch_"):
		r, err := c.api.RetryWatchCallbackWithResponse(c.ctx, args[0], client.RetryWatchCallbackJSONRequestBody{NotificationId: n})
		if err != nil {
			return err
		}
		resp, body = r.HTTPResponse, r.Body
	default:
		return fmt.Errorf("%q is neither a turn_id nor a watch_id", args[0])
	}
	if err := check(resp, body, nil); err != nil {
		return err
	}
	return c.printResult(body)
}

// watchRecovery: akk watch-renew WATCH_ID | akk watch-recover WATCH_ID
func (c *cli) watchRecovery(name string, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: akk %s WATCH_ID", name)
	}
	var resp *http.Response
	var body []byte
	if name == "watch-renew" {
		r, err := c.api.RenewWatchWithResponse(c.ctx, args[0])
		if err != nil {
			return err
		}
		resp, body = r.HTTPResponse, r.Body
	} else {
		r, err := c.api.RecoverWatchWithResponse(c.ctx, args[0])
		if err != nil {
			return err
		}
		resp, body = r.HTTPResponse, r.Body
	}
	if err := check(resp, body, nil); err != nil {
		return err
	}
	return c.printResult(body)
}

// interaction: akk interaction TURN_ID shows the current questionnaire step
// (and offers it to this conversation).
func (c *cli) interaction(args []string) error {
	fs := newFlags("interaction")
	conv := fs.String("conversation", "", "AKK-Conversation the offer is bound to")
	turnID, args := leadingID(args)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if turnID == "" && fs.NArg() == 1 {
		turnID = fs.Arg(0)
	}
	if turnID == "" {
		return errors.New("usage: akk interaction [--conversation C] TURN_ID")
	}
	in, body, err := c.getInteraction(turnID, *conv)
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(body)
	}
	fmt.Fprintf(c.out, "interaction %s (%s, step %d of %d)\n", in.InteractionId, in.Kind, in.Step.Index, in.Step.Total)
	if in.ManualRequired != nil && *in.ManualRequired {
		reason := ""
		if in.Reason != nil {
			reason = ": " + *in.Reason
		}
		fmt.Fprintf(c.out, "manual_required%s\n", reason)
	}
	for _, q := range in.Questions {
		fmt.Fprintf(c.out, "\n%s  [%s]  %s\n", q.QuestionId, q.ResponseKind, q.Prompt)
		for _, o := range q.Options {
			fmt.Fprintf(c.out, "  %s  %s\n", o.OptionId, o.Label)
		}
	}
	return nil
}

func (c *cli) getInteraction(turnID, conv string) (*client.Interaction, []byte, error) {
	params := &client.GetTurnInteractionParams{}
	if conv != "" {
		params.AKKConversation = &conv
	}
	r, err := c.api.GetTurnInteractionWithResponse(c.ctx, turnID, params)
	if err != nil {
		return nil, nil, err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return nil, nil, err
	}
	return r.JSON200, r.Body, nil
}

// leadingID splits an id given before the flags off args.
func leadingID(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
func (m *multiFlag) Type() string       { return "strings" }

// respondInteraction: akk respond-interaction TURN_ID --interaction ID
// --answer QUESTION=OPTION[,OPTION] [--text QUESTION=TEXT]. It reads the
// step again first: the interaction id must still be the one shown.
func (c *cli) respondInteraction(args []string) error {
	fs := newFlags("respond-interaction")
	conv := fs.String("conversation", "", "AKK-Conversation the offer is bound to")
	want := fs.String("interaction", "", "the interaction_id you were shown (required)")
	mode := fs.String("delivery-mode", "", "steer_current_turn or queue_next_turn (async questions only)")
	var answers, texts multiFlag
	fs.Var(&answers, "answer", "QUESTION_ID=OPTION_ID[,OPTION_ID] (repeatable)")
	fs.Var(&texts, "text", "QUESTION_ID=free text (repeatable)")
	turnID, args := leadingID(args)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if turnID == "" && fs.NArg() == 1 {
		turnID = fs.Arg(0)
	}
	if turnID == "" || *want == "" || len(answers)+len(texts) == 0 {
		return errors.New("usage: akk respond-interaction TURN_ID --interaction ID --answer QUESTION_ID=OPTION_ID[,…] [--text QUESTION_ID=TEXT]")
	}
	in, _, err := c.getInteraction(turnID, *conv)
	if err != nil {
		return err
	}
	if in.InteractionId != *want {
		return fmt.Errorf("the step changed: it is now %s, not %s; read it again (akk interaction %s)", in.InteractionId, *want, turnID)
	}
	body, err := interactionAnswers(in, answers, texts)
	if err != nil {
		return err
	}
	if *mode != "" {
		m := client.InteractionResponseDeliveryMode(*mode)
		body.DeliveryMode = &m
	}
	params := &client.RespondTurnInteractionParams{}
	if *conv != "" {
		params.AKKConversation = conv
	}
	r, err := c.api.RespondTurnInteractionWithResponse(c.ctx, turnID, params, body)
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	return c.printResult(r.Body)
}

// interactionAnswers is the answer body for step in from --answer specs
// (QUESTION_ID=OPTION_ID[,…]) and --text specs (QUESTION_ID=TEXT); an
// --answer and a --text of one question are one answer: the option that
// carries free text, and its text.
func interactionAnswers(in *client.Interaction, answers, texts []string) (client.RespondTurnInteractionJSONRequestBody, error) {
	kinds := map[string]client.ResponseKind{}
	for _, q := range in.Questions {
		kinds[q.QuestionId] = q.ResponseKind
	}
	body := client.RespondTurnInteractionJSONRequestBody{InteractionId: in.InteractionId}
	type answer = struct {
		QuestionId        string              `json:"question_id"`
		ResponseKind      client.ResponseKind `json:"response_kind"`
		SelectedOptionIds *[]string           `json:"selected_option_ids,omitempty"`
		Text              *string             `json:"text,omitempty"`
	}
	at := map[string]int{} // question -> its answer in body.Answers
	add := func(spec string, text bool) error {
		q, v, ok := strings.Cut(spec, "=")
		kind, known := kinds[q]
		if !ok || !known {
			return fmt.Errorf("%q: expected QUESTION_ID=… with a question of this step", spec)
		}
		i, seen := at[q]
		if !seen {
			i, at[q] = len(body.Answers), len(body.Answers)
			body.Answers = append(body.Answers, answer{QuestionId: q, ResponseKind: kind})
		}
		if text {
			body.Answers[i].Text = &v
		} else {
			ids := strings.Split(v, ",")
			body.Answers[i].SelectedOptionIds = &ids
		}
		return nil
	}
	for _, s := range answers {
		if err := add(s, false); err != nil {
			return body, err
		}
	}
	for _, s := range texts {
		if err := add(s, true); err != nil {
			return body, err
		}
	}
	return body, nil
}
