package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// mergedRow is a row of the list with both halves a row may have.
type mergedRow struct {
	ConversationID string `json:"conversation_id"`
	Project        string `json:"project"`
	Transport      string `json:"transport"`
	Terminal       *struct {
		TerminalID          string `json:"terminal_id"`
		NativeIdentityState string `json:"native_identity_state"`
	} `json:"terminal"`
	Backend *struct {
		NativeThreadID string `json:"native_thread_id"`
		ThreadStatus   string `json:"thread_status"`
	} `json:"backend"`
	Warnings         []string         `json:"warnings"`
	AvailableActions []map[string]any `json:"available_actions"`
}

func (r mergedRow) actions(name string) []map[string]any {
	var out []map[string]any
	for _, a := range r.AvailableActions {
		if a["action"] == name {
			out = append(out, a)
		}
	}
	return out
}

// rowsOf waits until the rows in project that name terminal termID or
// thread ("" names any) satisfy ok.
func rowsOf(t *testing.T, url, token, project, termID, thread string, ok func([]mergedRow) bool) []mergedRow {
	t.Helper()
	real, _ := filepath.EvalSymlinks(project)
	deadline := time.Now().Add(agenttest.Patient(60 * time.Second))
	for {
		var list struct{ Conversations []mergedRow }
		call(t, "GET", url+"/v1/conversations", token, "", &list)
		var rows []mergedRow
		for _, c := range list.Conversations {
			if c.Project != project && c.Project != real {
				continue
			}
			if termID == "" || (c.Terminal != nil && c.Terminal.TerminalID == termID) || (c.Backend != nil && c.Backend.NativeThreadID == thread) {
				rows = append(rows, c)
			}
		}
		if ok(rows) {
			return rows
		}
		if time.Now().After(deadline) {
			t.Fatalf("rows of %s / %s never matched; last %+v", termID, thread, rows)
		}
		time.Sleep(listEvery)
	}
}

// TestE2ECodexBackendMergedWithPane: a Codex (each pinned version that
// hands its threads to a managed daemon) whose pane title names its thread
// ([tui] terminal_title = ["thread-id"]) is proven to show that thread, so
// the list shows one row for the two: the thread's exact id with the pane,
// the thread's send, the pane's own controls. The row answers to both
// conversation ids; a Send through it completes in the daemon and shows in
// the pane. When the person starts a new thread in the pane, the row
// follows the pane to it.
func TestE2ECodexBackendMergedWithPane(t *testing.T) {
	t.Parallel() // beside the other capability tests, -parallel at a time (TESTING.md)
	daemonBinary(t)
	for _, a := range daemonAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			t.Parallel()
			e := agenttest.New(t, a, agenttest.Options{ThreadTitle: true})
			model := e.Model
			e.StartReady()
			rec := newReceiver(t, "")
			d := startProc(t, t.TempDir(), "AKK_TMUX_SOCKETS="+e.SocketPath())
			op := d.token()
			var host hostCreds
			call(t, "POST", d.url+"/v1/hosts", op, `{"name":"h","webhook_url":"http://`+rec.addr+`/h"}`, &host)

			first := "Say hello to the person first"
			e.Submit(first)
			e.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken(first))
			e.WaitIdle(agenttest.TurnTimeout)
			rollouts := e.TranscriptPaths()
			if len(rollouts) != 1 {
				t.Fatalf("rollouts %v", rollouts)
			}
			rows := rowsOf(t, d.url, host.Token, e.ProjectDir, "", "", func(rs []mergedRow) bool {
				return len(rs) == 1 && rs[0].Backend != nil && rs[0].Terminal != nil && len(rs[0].actions("send")) == 1
			})
			m := rows[0]
			thread, termID := m.Backend.NativeThreadID, m.Terminal.TerminalID
			if !strings.Contains(rollouts[0], thread) || m.ConversationID != "conv_cx_"+thread || m.Transport != "codex_backend" ||
				m.Terminal.NativeIdentityState != "resolved" {
				t.Fatalf("merged row %+v (rollout %s)", m, rollouts[0])
			}
			if s := m.actions("send")[0]; s["body"].(map[string]any)["conversation_id"] != m.ConversationID {
				t.Fatalf("the merged row's send is not the thread's: %v", s)
			}
			if len(m.actions("threads")) != 1 || len(m.actions("watch")) != 0 || len(m.actions("identify_foreground")) != 0 {
				t.Fatalf("merged row actions %v", m.AvailableActions)
			}
			for _, w := range m.Warnings {
				if strings.Contains(w, "not proven") {
					t.Fatalf("merged row warns %q", w)
				}
			}
			// The row answers to the pane's conversation id and the thread's.
			for _, id := range []string{"conv_" + strings.TrimPrefix(termID, "term_"), m.ConversationID} {
				var got mergedRow
				if code := call(t, "GET", d.url+"/v1/conversations/"+id, host.Token, "", &got); code != 200 || got.ConversationID != m.ConversationID {
					t.Fatalf("GET %s: %d %+v", id, code, got)
				}
			}

			// A Send through the merged row goes through the daemon.
			text := "Say hello through the merged row for " + a.Name()
			var s sendAnswer
			body := `{"conversation_id":"` + m.ConversationID + `","request":"` + text + `"}`
			if code := call(t, "POST", d.url+"/v1/turns", host.Token, body, &s); code != 202 || s.DeliveryPath != "codex_backend" {
				t.Fatalf("send: %d %+v", code, s)
			}
			done := rec.waitTurn(t, s.TurnID, "turn.completed", 90*time.Second)
			if got, want := done.Data["final_message"], fakemodel.DefaultReply(text); got != want {
				t.Fatalf("final message %q, want %q", got, want)
			}
			if n := userRequests(model, text); n != 1 {
				t.Fatalf("the model saw the request %d times", n)
			}
			e.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken(text))
			e.WaitIdle(agenttest.TurnTimeout)

			// The person starts a new thread in the pane: the row follows
			// the pane to the thread it shows now; the old thread is no
			// longer this pane's.
			e.Submit("/new")
			rows = rowsOf(t, d.url, host.Token, e.ProjectDir, termID, thread, func(rs []mergedRow) bool {
				for _, r := range rs {
					if r.Terminal != nil && r.Backend != nil && r.Backend.NativeThreadID == thread {
						return false
					}
				}
				return slices.ContainsFunc(rs, func(r mergedRow) bool { return r.Terminal != nil && r.Terminal.TerminalID == termID })
			})
			for _, r := range rows {
				if r.Terminal != nil && r.Backend != nil && !strings.HasPrefix(r.Backend.NativeThreadID, strings.TrimSuffix(e.PaneTitle(), "...")) {
					t.Fatalf("after /new the pane (title %q) is merged with %+v", e.PaneTitle(), r.Backend)
				}
			}
		})
	}
}
