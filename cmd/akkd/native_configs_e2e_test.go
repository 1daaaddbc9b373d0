package main

import (
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
)

// TestE2ENativeUserConfigs runs the model and permission controls on the
// configurations people run, on every pinned version: an 80x24 pane (the
// model list scrolls, descriptions wrap), and for Codex a custom
// provider's own model that no built-in catalogue lists, and a catalogue
// of fourteen models (model_catalog_json). Each read and
// each change either succeeds (a change read back, then undone) or answers
// manual_required; either way the pane is left at its idle empty composer
// with no menu on screen and no repair needed.
func TestE2ENativeUserConfigs(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	daemonBinary(t)
	type config struct {
		name string
		opts agenttest.Options
	}
	for _, a := range agenttest.RequireAgents(t) {
		// 80x24: the version's shared world, its pane resized as a person
		// resizes a terminal, and back at the end (an agent start saved).
		configs := []config{{"80x24", agenttest.Options{}}}
		if a.Kind == agenttest.KindCodex {
			configs = append(configs, config{"custom-model", agenttest.Options{ModelName: "acme-coder-34b-local"}},
				config{"long-catalog", agenttest.Options{LongCatalog: true}})
		}
		for _, cfg := range configs {
			t.Run(a.Name()+"/"+cfg.name, func(t *testing.T) {
				t.Parallel()
				var e *agenttest.Env
				var d *proc
				var host hostCreds
				if cfg.name == "80x24" {
					l := useWorld(t, a, worldSpec{})
					e, d, host = l.e, l.d, l.host
					e.Resize(80, 24)
					defer func() {
						if !t.Failed() {
							e.Resize(agenttest.DefaultWidth, agenttest.DefaultHeight)
						}
					}()
				} else {
					e = agenttest.New(t, a, cfg.opts)
					e.StartReady()
					rec := newReceiver(t, "")
					d = startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+e.SocketPath())
					call(t, "POST", d.url+"/v1/hosts", d.token(), `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)
				}
				row := findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool {
					return hasSend(c) && c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty && advertised(c, "model_options") != ""
				})
				modelsPath, setModelPath, permsPath := advertised(row, "model_options"), advertised(row, "set_model"), advertised(row, "permission_options")
				// ok: done (a change: changed), or manual_required having
				// backed out.
				ok := func(what string, code int, outcome, problem, detail string) bool {
					t.Helper()
					leftAsFound(t, e, d.url, host.Token, what)
					switch {
					case code == 200 && (outcome == "done" || outcome == "changed" || outcome == "already_effective"):
						return true
					case code == 409 && problem == "manual_required":
						t.Logf("%s: manual_required: %s", what, detail)
						return false
					}
					t.Fatalf("%s: %d %s %s %s", what, code, outcome, problem, detail)
					return false
				}

				var m modelsResult
				code := callConv(t, "GET", d.url+modelsPath, host.Token, "", "c1", &m)
				if code == 409 && m.Code == "terminal_not_idle" {
					// Refused before any key: the row was read before the
					// pane redrew at its new size (80x24 resizes a shared
					// pane just before), and the plan found no status line.
					// Once the row reads idle again, ask again.
					t.Logf("models: refused before any key (%s); asking again once the pane reads idle", m.Detail)
					findRow(t, d.url, host.Token, e.ProjectDir, 30*time.Second, func(c conversationRow) bool {
						return hasSend(c) && c.Terminal.ScreenState == "idle" && c.Terminal.ComposerEmpty && advertised(c, "model_options") != ""
					})
					m = modelsResult{}
					code = callConv(t, "GET", d.url+modelsPath, host.Token, "", "c1", &m)
				}
				if ok("models", code, m.Outcome, m.Code, m.Detail) {
					if m.Effective == nil || len(m.Models) == 0 {
						t.Fatalf("models: %+v", m)
					}
					t.Logf("models: %s %s of %d", m.Effective.Model, m.Effective.ReasoningEffort, len(m.Models))
					acme := 0
					for _, o := range m.Models {
						if strings.HasPrefix(o.Model, "acme_model") {
							acme++
						}
					}
					if cfg.name == "long-catalog" && acme > 0 && len(m.Models) != 14 {
						t.Fatalf("the long catalogue read as %d models: %+v", len(m.Models), m.Models)
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
					if target != "" {
						var p modelsResult
						code := callConv(t, "PUT", d.url+setModelPath, host.Token, `{"model":"`+before.Model+`","reasoning_effort":"`+target+`"}`, "c1", &p)
						if ok("set-model", code, p.Outcome, p.Code, p.Detail) {
							if p.Effective == nil || p.Effective.ReasoningEffort != target {
								t.Fatalf("set-model: %+v", p)
							}
							callConv(t, "GET", d.url+modelsPath, host.Token, "", "c1", &m)
							code := callConv(t, "PUT", d.url+setModelPath, host.Token, `{"model":"`+before.Model+`","reasoning_effort":"`+before.ReasoningEffort+`"}`, "c1", &p)
							ok("set-model back", code, p.Outcome, p.Code, p.Detail)
						}
					}
				} else if a.Kind == agenttest.KindCodex && cfg.name == "custom-model" && !strings.Contains(m.Detail, "model in effect") {
					t.Fatalf("models refused for another reason: %s", m.Detail)
				}

				if permsPath == "" {
					return
				}
				var perms permissionsResult
				code = call(t, "GET", d.url+permsPath, host.Token, "", &perms)
				if ok("permissions", code, perms.Outcome, perms.Code, perms.Detail) && perms.Current != nil {
					start := *perms.Current
					other := ""
					for _, md := range perms.Modes {
						if md.Mode != start && other == "" && !strings.Contains(md.Mode, "full") && md.Mode != "auto" {
							other = md.Mode
						}
					}
					if other == "" {
						return
					}
					var p permissionsResult
					code := call(t, "PUT", d.url+permsPath, host.Token, `{"mode":"`+other+`"}`, &p)
					if ok("set-permissions to "+other, code, p.Outcome, p.Code, p.Detail) {
						code := call(t, "PUT", d.url+permsPath, host.Token, `{"mode":"`+start+`"}`, &p)
						ok("set-permissions back to "+start, code, p.Outcome, p.Code, p.Detail)
					}
				}
			})
		}
	}
}
