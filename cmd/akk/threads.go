package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"akk/cmd/akk/client"
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

// native runs one of a pane's native controls: akk new-thread | clear-thread
// | inspect | identify TERMINAL_ID. Each prints what the daemon answered;
// an uncertain outcome says do_not_retry, and is never repeated here.
// It is long because it is one flat table of commands, flags and routes;
// split, the table would be read in pieces.
func (c *cli) native(name string, args []string) error {
	if name == "set-model" {
		if len(args) != 3 {
			return errors.New("usage: akk set-model TERMINAL_ID MODEL REASONING_EFFORT (both from akk models, in the same conversation)")
		}
	} else if name == "resume-thread" || name == "set-permissions" {
		if len(args) != 2 {
			if name == "set-permissions" {
				return errors.New("usage: akk set-permissions TERMINAL_ID MODE (a mode id from akk permissions)")
			}
			return errors.New("usage: akk resume-thread TERMINAL_ID NATIVE_THREAD_ID|--previous (the complete id from akk threads)")
		}
	} else if len(args) != 1 {
		return fmt.Errorf("usage: akk %s TERMINAL_ID", name)
	}
	cmds := map[string]func(name string, args []string) ([]byte, error){"repair-model-control": c.nativeRepairModel,
		"models": c.nativeModels, "set-model": c.nativeSetModel, "permissions": c.nativePermissions, "set-permissions": c.nativePermissions,
		"resume-thread": c.nativeResumeThread, "new-thread": c.nativeNewThread, "clear-thread": c.nativeNewThread,
		"inspect": c.nativeInspect, "identify": c.nativeIdentify}
	run, ok := cmds[name]
	if !ok {
		return fmt.Errorf("unknown command %q", name)
	}
	// Each prints its answer for people (nil body) or returns it for --json.
	body, err := run(name, args)
	if err != nil || body == nil {
		return err
	}
	return c.printResult(body)
}

// nativeRepairModel repairs the model control.
func (c *cli) nativeRepairModel(name string, args []string) ([]byte, error) {
	r, err := c.api.RepairModelControlWithResponse(c.ctx, args[0])
	if err != nil {
		return nil, err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return nil, err
	}
	if c.json {
		return r.Body, nil
	}
	fmt.Fprintf(c.out, "%s\n", r.JSON200.Outcome)
	return nil, c.uncertain(r.JSON200.DoNotRetry, r.JSON200.Detail)
}

// nativeModels reads the pane's models.
func (c *cli) nativeModels(name string, args []string) ([]byte, error) {
	r, err := c.api.GetModelsWithResponse(c.ctx, args[0], &client.GetModelsParams{})
	if err != nil {
		return nil, err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return nil, err
	}
	if c.json {
		return r.Body, nil
	}
	x := r.JSON200
	if e := x.Effective; e != nil {
		fmt.Fprintf(c.out, "%s: %s with %s effort (%s; the catalogue holds until %s)\n", x.Outcome, e.Model, e.ReasoningEffort, x.Scope, x.ExpiresAt.Local().Format("15:04:05"))
	}
	var rows [][]string
	for _, m := range x.Models {
		rows = append(rows, []string{m.Model, m.Label, strings.Join(m.ReasoningEfforts, " ")})
	}
	c.table("MODEL\tLABEL\tEFFORTS", rows)
	return nil, c.uncertain(x.DoNotRetry, x.Detail)
}

// nativeSetModel sets the pane's model.
func (c *cli) nativeSetModel(name string, args []string) ([]byte, error) {
	r, err := c.api.SetModelWithResponse(c.ctx, args[0], &client.SetModelParams{}, client.SetModelJSONRequestBody{Model: args[1], ReasoningEffort: args[2]})
	if err != nil {
		return nil, err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return nil, err
	}
	if c.json {
		return r.Body, nil
	}
	x := r.JSON200
	fmt.Fprintf(c.out, "%s (%s)\n", x.Outcome, x.Scope)
	return nil, c.uncertain(x.DoNotRetry, x.Detail)
}

// nativePermissions reads or sets the pane's permission mode.
func (c *cli) nativePermissions(name string, args []string) ([]byte, error) {
	var resp *http.Response
	var raw []byte
	var out *client.PermissionsResult
	if name == "permissions" {
		r, err := c.api.GetPermissionsWithResponse(c.ctx, args[0])
		if err != nil {
			return nil, err
		}
		resp, raw, out = r.HTTPResponse, r.Body, r.JSON200
	} else {
		r, err := c.api.SetPermissionsWithResponse(c.ctx, args[0], &client.SetPermissionsParams{}, client.SetPermissionsJSONRequestBody{Mode: args[1]})
		if err != nil {
			return nil, err
		}
		resp, raw, out = r.HTTPResponse, r.Body, r.JSON200
	}
	if err := check(resp, raw, nil); err != nil {
		return nil, err
	}
	if c.json {
		return raw, nil
	}
	fmt.Fprintf(c.out, "%s: mode %s (was %s, already effective %v)\n", out.Outcome, deref(out.Current), deref(out.Previous), out.AlreadyEffective)
	var rows [][]string
	for _, m := range out.Modes {
		rows = append(rows, []string{m.Mode, m.Label})
	}
	c.table("MODE\tLABEL", rows)
	return nil, c.uncertain(out.DoNotRetry, out.Detail)
}

// nativeResumeThread resumes a thread.
func (c *cli) nativeResumeThread(name string, args []string) ([]byte, error) {
	r, err := c.api.ResumeThreadWithResponse(c.ctx, args[0], &client.ResumeThreadParams{}, resumeBody(args[1]))
	if err != nil {
		return nil, err
	}
	return c.threadChanged("resumed", r.HTTPResponse, r.Body, r.JSON200)
}

// nativeNewThread starts a new thread.
func (c *cli) nativeNewThread(name string, args []string) ([]byte, error) {
	r, err := c.api.NewThreadWithResponse(c.ctx, args[0], &client.NewThreadParams{})
	if err != nil {
		return nil, err
	}
	return c.threadChanged("new", r.HTTPResponse, r.Body, r.JSON200)
}

// threadChanged prints what a resume or a new thread did.
func (c *cli) threadChanged(what string, resp *http.Response, body []byte, x *client.NewThreadResult) ([]byte, error) {
	if err := check(resp, body, nil); err != nil {
		return nil, err
	}
	if c.json {
		return body, nil
	}
	fmt.Fprintf(c.out, "%s: %s thread %s (session %s, %s; was %s)\n", x.Outcome, what, deref(x.NativeThreadId), deref(x.SessionId), x.Binding, deref(x.PreviousNativeThreadId))
	return nil, c.uncertain(x.DoNotRetry, x.Detail)
}

// nativeInspect inspects the pane.
func (c *cli) nativeInspect(name string, args []string) ([]byte, error) {
	r, err := c.api.InspectTerminalWithResponse(c.ctx, args[0], client.InspectTerminalJSONRequestBody{Inspection: client.InspectRequestInspectionStatus})
	if err != nil {
		return nil, err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return nil, err
	}
	if c.json {
		return r.Body, nil
	}
	x := r.JSON200
	fmt.Fprintf(c.out, "%s\n", x.Outcome)
	if st := x.Status; st != nil {
		c.table("FIELD\tVALUE", [][]string{{"thread", st.NativeThreadId}, {"matches record", fmt.Sprint(x.IdentityMatchesRecord)},
			{"version", st.AgentVersion}, {"model", st.Model}, {"directory", st.Directory}, {"permissions", deref(st.Permissions)}})
	}
	return nil, c.uncertain(x.DoNotRetry, x.Detail)
}

// nativeIdentify identifies the pane's foreground thread.
func (c *cli) nativeIdentify(name string, args []string) ([]byte, error) {
	r, err := c.api.IdentifyForegroundWithResponse(c.ctx, args[0])
	if err != nil {
		return nil, err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return nil, err
	}
	if c.json {
		return r.Body, nil
	}
	x := r.JSON200
	fmt.Fprintf(c.out, "%s: foreground thread %s (record present %v; a diagnostic until %s, authorizes nothing)\n", x.Outcome,
		deref(x.NativeThreadId), x.RecordPresent, x.ExpiresAt.Local().Format("15:04:05"))
	return nil, c.uncertain(x.DoNotRetry, x.Detail)
}

// resumeBody is the resume request for "--previous" or a complete id.
func resumeBody(arg string) client.ResumeThreadJSONRequestBody {
	if arg == "--previous" {
		t := true
		return client.ResumeThreadJSONRequestBody{Previous: &t}
	}
	return client.ResumeThreadJSONRequestBody{NativeThreadId: &arg}
}

// uncertain prints why an outcome is not done and that it must not be repeated.
func (c *cli) uncertain(doNotRetry bool, detail *string) error {
	if doNotRetry {
		fmt.Fprintf(c.out, "do_not_retry: keys may have reached the pane (%s); look at it before anything else\n", deref(detail))
		return uncertainErr
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

// screen prints a pane's screen as the agent shows it, redacted: akk
// screen TERMINAL_ID. It sends the pane nothing.
func (c *cli) screen(args []string) error {
	if len(args) != 1 {
		return usageErr("usage: akk screen TERMINAL_ID")
	}
	r, err := c.api.GetTerminalScreenWithResponse(c.ctx, args[0])
	if err != nil {
		return err
	}
	if err := check(r.HTTPResponse, r.Body, nil); err != nil {
		return err
	}
	if c.json {
		return c.printJSON(r.Body)
	}
	x := r.JSON200
	fmt.Fprintf(c.out, "%s\n-- %s, %d×%d, read %s (redacted)\n", x.Text, x.TerminalId, x.Columns, x.Lines, x.ReadAt.Local().Format("15:04:05"))
	return nil
}
