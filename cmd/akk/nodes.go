package main

import (
	"fmt"
	"time"
)

// nodes lists the fleet's nodes, or removes one that is gone for good.
func (c *cli) nodes(args []string) error {
	if len(args) >= 1 && args[0] == "remove" {
		if len(args) != 2 {
			return usageErr("usage: akk nodes remove NAME")
		}
		r, err := c.api.RemoveNodeWithResponse(c.ctx, args[1])
		if err != nil {
			return err
		}
		if err := check(r.HTTPResponse, r.Body, nil); err != nil {
			return err
		}
		if !c.json {
			fmt.Fprintf(c.out, "removed node %s: it is no longer listed and its operator token opens nothing\n", args[1])
		}
		return nil
	}
	if len(args) != 0 {
		return usageErr(fmt.Sprintf("unknown nodes command %q (akk nodes, or akk nodes remove NAME)", args[0]))
	}
	r, err := c.api.ListNodesWithResponse(c.ctx)
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
	for _, n := range r.JSON200.Nodes {
		rows = append(rows, []string{n.Name, string(n.State), n.Version, n.AdvertiseUrl, n.LastSeen.Local().Format(time.DateTime)})
	}
	c.table("NODE\tSTATE\tVERSION\tADVERTISE URL\tLAST SEEN", rows)
	return nil
}
