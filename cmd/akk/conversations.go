package main

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"akk/cmd/akk/client"
)

// terminalColumns are the STATE and CHANNELS of a row with a pane.
func terminalColumns(t client.TerminalInfo) (state, channels string) {
	state, channels = string(t.ScreenState), "-"
	if t.Channels != nil {
		channels = string(t.Channels.Permission) + "/" + string(t.Channels.Question)
	}
	return state, channels
}

// transportColumns are the STATE and CHANNELS of a row with no pane, by
// the transport whose object the contract gives it.
var transportColumns = map[client.ConversationTransport]func(client.Conversation) (state, channels string){
	client.ConversationTransportCodexBackend: func(cv client.Conversation) (string, string) {
		var status client.BackendInfoThreadStatus
		if b := cv.Backend; b != nil {
			status = b.ThreadStatus
		}
		return "backend " + string(status), "app_server/app_server"
	},
}

func (c *cli) list(args []string) error {
	fs := newFlags("list")
	wide := fs.Bool("wide", false, "every column whole (default: rows fit 100 columns)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("usage: akk list [--wide]")
	}
	r, err := c.api.ListConversationsWithResponse(c.ctx)
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
	for _, cv := range r.JSON200.Conversations {
		acts := actionNames(cv.AvailableActions)
		version := cv.Agent.Version
		if cv.Agent.Profile == "unprofiled" {
			version += " (unprofiled)"
		}
		state, channels := "", "-"
		if cv.Terminal != nil {
			// A pane's row, or a thread's merged with the pane showing it.
			state, channels = terminalColumns(*cv.Terminal)
		} else if columns, ok := transportColumns[cv.Transport]; ok {
			state, channels = columns(cv)
		}
		row := []string{cv.ConversationId, string(cv.Agent.Kind), version, cv.Project,
			state, channels, strings.Join(acts, ","), strings.Join(cv.Warnings, "; ")}
		rows = append(rows, row)
	}
	const header = "CONVERSATION\tAGENT\tVERSION\tPROJECT\tSTATE\tCHANNELS\tACTIONS\tWARNINGS"
	if !*wide {
		// The id stays whole (akk send takes it); the project keeps its
		// end, the state, actions and warnings their start.
		fitColumns(strings.Split(header, "\t"), rows, listWidth, map[int]bool{3: true, 4: false, 6: false, 7: false})
	}
	if len(rows) == 0 {
		msg := "no Claude Code or Codex panes found"
		if d, err := c.api.GetDoctorWithResponse(c.ctx); err == nil && d.JSON200 != nil {
			if d.JSON200.TmuxSearched != nil {
				msg += fmt.Sprintf(" in %d tmux server(s); searched %s", len(d.JSON200.TmuxServers), strings.Join(*d.JSON200.TmuxSearched, ", "))
			}
			if !d.JSON200.Tmux.Found {
				msg += "; tmux itself is not usable (akk doctor says why)"
			}
		}
		fmt.Fprintln(c.out, msg+".\nStart Claude Code or Codex in a tmux pane as this user, or point akkd at another server with --tmux-sockets.")
		return nil
	}
	// CHANNELS: how AKK answers a permission prompt / a question there.
	c.table(header, rows)
	return nil
}

func (c *cli) doctor() error {
	r, err := c.api.GetDoctorWithResponse(c.ctx)
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	d := r.JSON200
	fmt.Fprintf(c.out, "status: %s\n", d.Status)
	tmux := "not found"
	if d.Tmux.Found {
		tmux = "found"
		if d.Tmux.Version != nil {
			tmux += " (" + *d.Tmux.Version + ")"
		}
	}
	fmt.Fprintf(c.out, "tmux:   %s, %d server(s)\n", tmux, len(d.TmuxServers))
	if d.TmuxSearched != nil {
		fmt.Fprintf(c.out, "searched: %s\n", strings.Join(*d.TmuxSearched, ", "))
	}
	for _, a := range d.Agents {
		fmt.Fprintf(c.out, "agent:  %s %s in %d pane(s), profile %s\n", a.Kind, a.Version, a.Panes, a.Profile)
	}
	var sup []string
	for _, a := range d.Supported {
		sup = append(sup, string(a.Kind)+" "+a.Version)
	}
	fmt.Fprintf(c.out, "supported: %s\n", strings.Join(sup, ", "))
	fmt.Fprintf(c.out, "store:  writable=%v\nhosts:  %d\n", d.Store.Writable, d.Hosts.Count)
	for _, why := range d.Reasons {
		fmt.Fprintf(c.out, "- %s\n", why)
	}
	return nil
}

// actionNames are a row's actions, each once (a row offers status for its
// Turn and for its Watch, say), in the order offered.
func actionNames(as []client.Action) []string {
	var out []string
	for _, a := range as {
		if !slices.Contains(out, a.Action) {
			out = append(out, a.Action)
		}
	}
	return out
}

// cutEnd keeps s's first n code points, with … for the rest.
// listWidth is the columns akk list's rows fit in (without --wide).
const listWidth = 100

// fitColumns cuts the cells of rows so that each row, its columns two
// apart as table prints them, fits width: the widest of the columns named
// in cut (true: keep a cell's end, false: its start) loses a code point at
// a time, down to its header's width. The other columns stay whole.
func fitColumns(header []string, rows [][]string, width int, cut map[int]bool) {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := func() int {
		n := 2 * (len(widths) - 1)
		for _, w := range widths {
			n += w
		}
		return n
	}
	for total() > width {
		widest := -1
		for i := range widths {
			if _, ok := cut[i]; ok && widths[i] > utf8.RuneCountInString(header[i]) && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break // as narrow as the headers allow
		}
		widths[widest]--
	}
	for _, r := range rows {
		for i, keepEnd := range cut {
			if keepEnd {
				r[i] = cutStart(r[i], widths[i])
			} else {
				r[i] = cutEnd(r[i], widths[i])
			}
		}
	}
}

func cutEnd(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// cutStart keeps s's last n code points, with … for the rest.
func cutStart(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return "…" + string(r[len(r)-n+1:])
	}
	return s
}
