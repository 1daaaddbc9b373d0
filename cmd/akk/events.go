package main

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/r3labs/sse/v2"
	"gopkg.in/cenkalti/backoff.v1"
)

// events follows the SSE stream. The r3labs client reconnects by itself and
// sends Last-Event-ID, so the daemon replays whatever was missed.
func (c *cli) events(args []string) error {
	fs := newFlags("events")
	fs.Bool("follow", true, "keep streaming until interrupted (the only mode)")
	since := fs.Int64("since", -1, "replay events after this id first")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	url := c.url + "/v1/events"
	if *since >= 0 {
		url += "?since=" + strconv.FormatInt(*since, 10)
	}
	sc := sse.NewClient(url)
	sc.Headers["Authorization"] = "Bearer " + c.token
	// Reconnect with backoff, but stop as soon as the command is interrupted.
	sc.ReconnectStrategy = backoff.WithContext(backoff.NewExponentialBackOff(), c.ctx)
	sc.ResponseValidator = func(_ *sse.Client, resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("events: HTTP %d", resp.StatusCode)
		}
		return nil
	}
	err := sc.SubscribeRawWithContext(c.ctx, func(e *sse.Event) {
		if len(e.Data) == 0 {
			return
		}
		if c.json {
			fmt.Fprintf(c.out, "%s\n", e.Data)
			return
		}
		fmt.Fprintf(c.out, "%s\t%s\t%s\n", e.ID, e.Event, e.Data)
	})
	if c.ctx.Err() != nil {
		return nil
	}
	return err
}
