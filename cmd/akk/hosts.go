package main

import (
	"errors"
	"fmt"
	"github.com/spf13/pflag"
	"net/http"
	"strings"
	"time"

	"akk/cmd/akk/client"
)

// hosts runs akk hosts list | add | set-webhook | ping | rotate-secret |
// rotate-token | approval-policy | delete.
// It is long because it is one flat table of subcommands and their flags.
func (c *cli) hosts(args []string) error {
	if len(args) == 0 {
		args = []string{"list"}
	}
	sub := map[string]func([]string) error{"list": c.hostsList, "add": c.hostsAdd, "set-webhook": c.hostsSetWebhook, "ping": c.hostsPing,
		"rotate-secret": c.hostsRotateSecret, "rotate-token": c.hostsRotateToken, "delete": c.hostsDelete,
		"approval-policy": func(args []string) error { return c.approvalPolicy(args[1:]) }}
	run, ok := sub[args[0]]
	if !ok {
		return fmt.Errorf("unknown hosts command %q", args[0])
	}
	return run(args)
}

// hostsList prints the registered hosts.
func (c *cli) hostsList(args []string) error {
	r, err := c.api.ListHostsWithResponse(c.ctx)
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
	for _, h := range r.JSON200.Hosts {
		events := "all"
		if len(h.WebhookEvents) > 0 {
			events = strings.Join(h.WebhookEvents, ",")
		}
		rows = append(rows, []string{h.HostId, h.Name, h.WebhookUrl, strings.Join(h.WebhookHeaderNames, ","), events,
			h.CreatedAt.Local().Format(time.DateTime)})
	}
	c.table("HOST\tNAME\tWEBHOOK URL\tHEADERS\tEVENTS\tCREATED", rows)
	return nil
}

// hostsAdd registers a host; its token and secret are shown once.
func (c *cli) hostsAdd(args []string) error {
	fs := newFlags("hosts add")
	name := fs.String("name", "", "a label for the host")
	hook := fs.String("webhook-url", "", "http(s) URL that receives signed webhooks")
	headers, events := webhookFlags(fs)
	node := fs.String("delivery-node", "", "in a fleet, the one node that delivers this host's webhooks (needed for a loopback URL)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *name == "" || *hook == "" {
		return errors.New("hosts add needs --name and --webhook-url")
	}
	r, err := c.api.CreateHostWithResponse(c.ctx, client.HostCreate{Name: *name, WebhookUrl: *hook,
		WebhookHeaders: headers.body(), WebhookEvents: events.body(), DeliveryNode: optFlag(*node)})
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	h := r.JSON201
	fmt.Fprintf(c.out, "host:           %s\nname:           %s\nwebhook url:    %s\n%stoken:          %s\nwebhook secret: %s\n\nThe token and secret are shown only now.\n",
		h.HostId, h.Name, h.WebhookUrl, webhookLines(h.WebhookHeaderNames, h.WebhookEvents), h.Token, h.WebhookSecret)
	return nil
}

// hostsSetWebhook changes a host's webhook.
func (c *cli) hostsSetWebhook(args []string) error {
	fs := newFlags("hosts set-webhook")
	hook := fs.String("url", "", "http(s) URL that receives signed webhooks")
	headers, events := webhookFlags(fs)
	node := fs.String("delivery-node", "", "in a fleet, the one node that delivers this host's webhooks (needed for a loopback URL)")
	if len(args) < 2 || strings.HasPrefix(args[1], "-") {
		return errors.New("usage: akk hosts set-webhook HOST_ID --url URL [--header 'Name: value' ...] [--event TYPE ...]")
	}
	if err := parseFlags(fs, args[2:]); err != nil {
		return err
	}
	if *hook == "" || fs.NArg() > 0 {
		return errors.New("usage: akk hosts set-webhook HOST_ID --url URL [--header 'Name: value' ...] [--event TYPE ...]")
	}
	r, err := c.api.SetHostWebhookWithResponse(c.ctx, args[1], client.HostWebhook{WebhookUrl: *hook,
		WebhookHeaders: headers.body(), WebhookEvents: events.body(), DeliveryNode: optFlag(*node)})
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	h := r.JSON200
	fmt.Fprintf(c.out, "host:           %s\nwebhook url:    %s\n%s", h.HostId, h.WebhookUrl, webhookLines(h.WebhookHeaderNames, h.WebhookEvents))
	return nil
}

// hostsPing queues a host.ping webhook.
func (c *cli) hostsPing(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: akk hosts ping HOST_ID")
	}
	r, err := c.api.PingHostWithResponse(c.ctx, args[1])
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	fmt.Fprintf(c.out, "queued %s (%s); follow it with: akk notifications\n", r.JSON202.NotificationId, r.JSON202.Type)
	return nil
}

// hostsRotateSecret makes a host's new webhook secret.
func (c *cli) hostsRotateSecret(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: akk hosts rotate-secret HOST_ID")
	}
	r, err := c.api.RotateHostSecretWithResponse(c.ctx, args[1])
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	fmt.Fprintf(c.out, "new webhook secret for %s: %s\n", r.JSON200.HostId, r.JSON200.WebhookSecret)
	return nil
}

// hostsRotateToken makes a host's new token.
func (c *cli) hostsRotateToken(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: akk hosts rotate-token HOST_ID")
	}
	r, err := c.api.RotateHostTokenWithResponse(c.ctx, args[1])
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	fmt.Fprintf(c.out, "new token for %s: %s\nThe old token is refused from now on; the new one is shown only now.\n", r.JSON200.HostId, r.JSON200.Token)
	return nil
}

// hostsDelete removes a host.
func (c *cli) hostsDelete(args []string) error {
	if len(args) != 2 {
		return errors.New("usage: akk hosts delete HOST_ID")
	}
	r, err := c.api.DeleteHostWithResponse(c.ctx, args[1])
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if !c.json {
		fmt.Fprintf(c.out, "removed %s: its token is refused and its Turns no longer call back\n", args[1])
	}
	return nil
}

// headerFlags gathers repeated --header 'Name: value' flags.
type headerFlags map[string]string

func (h headerFlags) body() *client.WebhookHeaders {
	if len(h) == 0 {
		return nil
	}
	out := client.WebhookHeaders(h)
	return &out
}

type eventFlags []string

func (e *eventFlags) body() *client.WebhookEvents {
	if len(*e) == 0 {
		return nil
	}
	out := client.WebhookEvents(*e)
	return &out
}

// optFlag is a string flag as an optional field: nil when not given.
func optFlag(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// webhookFlags defines --header and --event on fs.
func webhookFlags(fs *pflag.FlagSet) (headerFlags, *eventFlags) {
	headers, events := headerFlags{}, &eventFlags{}
	fs.Func("header", "'Name: value' added to every delivery, such as a receiver's token (repeat for more)", func(v string) error {
		name, value, ok := strings.Cut(v, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return errors.New("want 'Name: value'")
		}
		headers[name] = value
		return nil
	})
	fs.Func("event", "a webhook event type to deliver (repeat for more; none: all)", func(v string) error {
		*events = append(*events, v)
		return nil
	})
	return headers, events
}

// webhookLines shows a host's header names (never values) and subscription.
func webhookLines(names, events []string) string {
	out := ""
	if len(names) > 0 {
		out += "headers:        " + strings.Join(names, ", ") + "\n"
	}
	if len(events) > 0 {
		out += "events:         " + strings.Join(events, ", ") + "\n"
	} else {
		out += "events:         all\n"
	}
	return out
}

// approvalPolicy shows a host's exact-command auto-approval rules, or with
// --rule (repeated; one command of plain words each) or --off replaces them.
func (c *cli) approvalPolicy(args []string) error {
	fs := newFlags("hosts approval-policy")
	var rules []client.ApprovalRule
	fs.Func("rule", "a command AKK may approve once, exactly (repeat for more)", func(v string) error {
		rules = append(rules, client.ApprovalRule{Argv: strings.Fields(v)})
		return nil
	})
	off := fs.Bool("off", false, "remove every rule (auto-approval off)")
	if len(args) == 0 {
		return errors.New("usage: akk hosts approval-policy HOST_ID [--rule 'CMD ARGS' ...|--off]")
	}
	host := args[0]
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	var body []byte
	var status *http.Response
	var out *client.ApprovalPolicy
	if len(rules) > 0 || *off {
		if rules == nil {
			rules = []client.ApprovalRule{}
		}
		r, err := c.api.SetApprovalPolicyWithResponse(c.ctx, host, client.ApprovalPolicy{Rules: rules})
		if err != nil {
			return err
		}
		body, status, out = r.Body, r.HTTPResponse, r.JSON200
	} else {
		r, err := c.api.GetApprovalPolicyWithResponse(c.ctx, host)
		if err != nil {
			return err
		}
		body, status, out = r.Body, r.HTTPResponse, r.JSON200
	}
	if err := check(status, body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(body)
	}
	if len(out.Rules) == 0 {
		fmt.Fprintf(c.out, "auto-approval is off for %s\n", host)
		return nil
	}
	var rows [][]string
	for _, r := range out.Rules {
		agent, project := "any", "any"
		if r.Agent != nil {
			agent = string(*r.Agent)
		}
		if r.Project != nil {
			project = *r.Project
		}
		rows = append(rows, []string{strings.Join(r.Argv, " "), agent, project})
	}
	c.table("COMMAND\tAGENT\tPROJECT", rows)
	return nil
}

func (c *cli) notifications(args []string) error {
	if len(args) >= 1 && args[0] == "retry" {
		if len(args) != 2 {
			return errors.New("usage: akk notifications retry NOTIFICATION_ID")
		}
		r, err := c.api.RetryNotificationWithResponse(c.ctx, args[1])
		if err != nil {
			return err
		}
		if err := check(r.HTTPResponse, r.Body, nil); err != nil {
			return err
		}
		if c.json {
			return c.printJSON(r.Body)
		}
		fmt.Fprintf(c.out, "queued %s again\n", r.JSON202.NotificationId)
		return nil
	}
	fs := newFlags("notifications")
	state := fs.String("state", "", "pending, delivered or failed")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	params := &client.ListNotificationsParams{}
	if *state != "" {
		s := client.NotificationState(*state)
		params.State = &s
	}
	r, err := c.api.ListNotificationsWithResponse(c.ctx, params)
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
	for _, n := range r.JSON200.Notifications {
		last := ""
		if n.LastError != nil {
			last = *n.LastError
		}
		rows = append(rows, []string{n.NotificationId, n.Type, string(n.State), fmt.Sprint(n.Attempts), n.HostId, last})
	}
	c.table("NOTIFICATION\tTYPE\tSTATE\tATTEMPTS\tHOST\tLAST ERROR", rows)
	return nil
}
