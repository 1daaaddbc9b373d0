package main

import (
	"errors"
	"fmt"
)

// threads lists the native threads of a pane's agent in its project.
func (c *cli) threads(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: akk threads TERMINAL_ID")
	}
	r, err := c.api.ListThreadsWithResponse(c.ctx, args[0])
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	l := r.JSON200
	fmt.Fprintf(c.out, "%s %s in %s (snapshot %s, until %s)\n", l.Agent.Kind, l.Agent.Version, l.Project, l.SnapshotId,
		l.ExpiresAt.Local().Format("15:04:05"))
	var rows [][]string
	for _, t := range l.Threads {
		cur := ""
		if t.Current {
			cur = "*"
		}
		rows = append(rows, []string{fmt.Sprint(t.Number), cur, t.ShortId, t.UpdatedAt.Local().Format("2006-01-02 15:04"), t.Title, t.NativeThreadId})
	}
	c.table("#\tNOW\tSHORT\tUPDATED\tFIRST REQUEST\tNATIVE THREAD", rows)
	return nil
}
