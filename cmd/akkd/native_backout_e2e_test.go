package main

import (
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

// nativeSurfaces are the titles of the native menus and panels the model,
// permission and status controls open: none may stay on screen.
var nativeSurfaces = []string{"Select Model and Effort", "Select model", "Select Reasoning Level", "Update Model Permissions",
	"Select Approval Mode", "Select Permissions", "Esc to cancel", "esc back", "Press enter to confirm or esc to go back"}

// leftAsFound waits for the pane's row to show its idle empty composer
// with send offered and no repair, and the screen to show no native menu.
func leftAsFound(t *testing.T, e *agenttest.Env, url, token, what string) {
	t.Helper()
	row := findRow(t, url, token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool {
		return hasSend(c) && c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty
	})
	if p := advertised(row, "repair_model_control"); p != "" {
		t.Fatalf("%s: the row offers a repair of a pane left as found: %+v", what, row.AvailableActions)
	}
	screen := e.Capture()
	for _, s := range nativeSurfaces {
		if strings.Contains(screen, s) {
			t.Fatalf("%s: %q is still on screen:\n%s", what, s, screen)
		}
	}
}

// TestE2ENativeBackOut forces each native control to fail right after the
// surface it opened (a test build's injected failure at "models.opened",
// "set_model.opened", "permissions.opened", "set_permissions.opened",
// "status.opened": the next frame taken as unreadable) on every pinned
// version: each answers manual_required, having backed out with Escape,
// and the pane is at its idle empty composer with send offered, no repair
// and no menu on screen; nothing changed (the model, effort and mode read
// after are those read before).
func TestE2ENativeBackOut(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	bin := failpointBinary(t)
	for _, a := range agenttest.RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			// A world's pane, driven by an akkd of the test's own (a failpoint
			// build): the world's akkd only lists it meanwhile.
			e := useWorld(t, a, worldSpec{}).e
			rec := newReceiver(t, "")
			d := &proc{t: t, bin: bin, dir: t.TempDir(), env: []string{"AKK_TMUX_SOCKETS=" + e.SocketPath(), "AKK_FAILERR=set_model.opened,set_permissions.opened"}}
			d.start()
			t.Cleanup(d.kill)
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
			ready := func(c conversationRow) bool {
				return hasSend(c) && c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty &&
					advertised(c, "model_options") != "" && advertised(c, "permission_options") != ""
			}
			row := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, ready)
			modelsPath, setModelPath := advertised(row, "model_options"), advertised(row, "set_model")
			permsPath := advertised(row, "permission_options")
			manual := func(what string, code int, p modelsResult) {
				t.Helper()
				if code != 409 || p.Code != "manual_required" || !strings.Contains(p.Detail, "back at its idle empty composer") {
					t.Fatalf("%s: %d %+v, want 409 manual_required backed out", what, code, p)
				}
				leftAsFound(t, e, d.url, host.Token, what)
			}

			// set-model and set-permissions fail once their menu opened.
			var m modelsResult
			if code := callConv(t, "GET", d.url+modelsPath, host.Token, "", "c1", &m); code != 200 || m.Outcome != "done" || m.Effective == nil {
				t.Fatalf("models: %d %+v", code, m)
			}
			before := *m.Effective
			target := ""
			for _, o := range m.Models {
				for _, ef := range o.ReasoningEfforts {
					if o.Model == before.Model && ef != before.ReasoningEffort && target == "" {
						target = ef
					}
				}
			}
			if target == "" {
				t.Fatalf("no other effort to choose in %+v", m)
			}
			leftAsFound(t, e, d.url, host.Token, "models")
			var p modelsResult
			code := callConv(t, "PUT", d.url+setModelPath, host.Token, `{"model":"`+before.Model+`","reasoning_effort":"`+target+`"}`, "c1", &p)
			manual("set-model", code, p)

			var perms permissionsResult
			if code := call(t, "GET", d.url+permsPath, host.Token, "", &perms); code != 200 || perms.Outcome != "done" || perms.Current == nil {
				t.Fatalf("permissions: %d %+v", code, perms)
			}
			startMode := *perms.Current
			leftAsFound(t, e, d.url, host.Token, "permissions")
			if a.Kind == agenttest.KindCodex { // Claude Code cycles its modes with a key: no menu to open
				other := ""
				for _, md := range perms.Modes {
					if md.Mode != startMode && other == "" && !strings.Contains(md.Mode, "full") {
						other = md.Mode
					}
				}
				code := call(t, "PUT", d.url+permsPath, host.Token, `{"mode":"`+other+`"}`, &p)
				manual("set-permissions to "+other, code, p)
			}

			// The reads fail once their surface opened.
			d.kill()
			d.env = []string{"AKK_TMUX_SOCKETS=" + e.SocketPath(), "AKK_FAILERR=models.opened,permissions.opened,status.opened"}
			d.start()
			row = findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, ready)
			code = callConv(t, "GET", d.url+modelsPath, host.Token, "", "c1", &p)
			manual("models", code, p)
			if a.Kind == agenttest.KindCodex {
				code = call(t, "GET", d.url+permsPath, host.Token, "", &p)
				manual("permissions", code, p)
			}
			if path := advertised(row, "native_inspect"); path != "" {
				code = call(t, "POST", d.url+path, host.Token, `{"inspection":"status"}`, &p)
				manual("inspect", code, p)
			}

			// Nothing changed.
			d.kill()
			d.env = []string{"AKK_TMUX_SOCKETS=" + e.SocketPath()}
			d.start()
			findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, ready)
			if code := callConv(t, "GET", d.url+modelsPath, host.Token, "", "c1", &m); code != 200 || m.Effective == nil || *m.Effective != before {
				t.Fatalf("models after: %d %+v, want %+v", code, m.Effective, before)
			}
			leftAsFound(t, e, d.url, host.Token, "models after")
			if code := call(t, "GET", d.url+permsPath, host.Token, "", &perms); code != 200 || perms.Current == nil || *perms.Current != startMode {
				t.Fatalf("permissions after: %d %+v, want %s", code, perms, startMode)
			}
		})
	}
}
