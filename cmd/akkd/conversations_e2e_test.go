package main

import (
	"strings"
	"testing"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

type conversationRow struct {
	ConversationID string `json:"conversation_id"`
	Project        string `json:"project"`
	Transport      string `json:"transport"`
	Agent          struct {
		Kind, Version, Profile string
	} `json:"agent"`
	Terminal struct {
		TerminalID          string `json:"terminal_id"`
		Provider            string `json:"provider"`
		ScreenState         string `json:"screen_state"`
		NativeIdentityState string `json:"native_identity_state"`
		ComposerEmpty       bool   `json:"composer_empty"`
		Channels            struct {
			Permission string `json:"permission"`
			Question   string `json:"question"`
		} `json:"channels"`
	} `json:"terminal"`
	Managed struct {
		CurrentTurn *struct {
			TurnID string `json:"turn_id"`
			State  string `json:"state"`
		} `json:"current_turn"`
		HeldByOther bool `json:"held_by_other"`
	} `json:"managed"`
	Warnings         []string         `json:"warnings"`
	AvailableActions []map[string]any `json:"available_actions"`
	Node             string           `json:"node"`
	NodeState        string           `json:"node_state"`
}

// TestE2EConversationsAPI lists real panes of every pinned agent version,
// plus a plain shell, through the daemon's REST API and the doctor.
func TestE2EConversationsAPI(t *testing.T) {
	agents := agenttest.RequireAgents(t)
	model := fakemodel.New(fakemodel.Options{})
	if err := model.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { model.Close() })
	var envs []*agenttest.Env
	for _, a := range agents {
		e := agenttest.New(t, a, agenttest.Options{Model: model})
		e.Start()
		envs = append(envs, e)
	}
	var sockets []string
	byProject := map[string]*agenttest.Env{}
	for _, e := range envs {
		e.WaitReady(agenttest.StartTimeout)
		sockets = append(sockets, e.SocketPath())
		byProject[e.ProjectDir] = e
	}
	if _, err := envs[0].Tmux("new-window", "-d", "-n", "shell", "bash", "--noprofile", "--norc"); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, t.TempDir(), map[string]string{"AKK_TMUX_SOCKETS": strings.Join(sockets, ":")})
	defer d.stop()

	// Rows of other tests' panes may show too (they share the default socket
	// dir); only ours are checked, by their unique project folders.
	mine := func() map[string]conversationRow {
		var list struct{ Conversations []conversationRow }
		if code := call(t, "GET", d.url+"/v1/conversations", d.token, "", &list); code != 200 {
			t.Fatalf("list: %d", code)
		}
		out := map[string]conversationRow{}
		for _, c := range list.Conversations {
			if _, ok := byProject[c.Project]; ok && c.Transport == "terminal" {
				if _, dup := out[c.Project]; dup {
					t.Fatalf("project %s listed twice", c.Project)
				}
				out[c.Project] = c
			}
		}
		return out
	}
	rows := mine()
	if len(rows) != len(envs) {
		t.Fatalf("listed %d of our %d agent panes: %+v", len(rows), len(envs), rows)
	}
	for project, c := range rows {
		e := byProject[project]
		if c.Agent.Kind != e.Agent.Kind || c.Agent.Version != e.Agent.Version || c.Agent.Profile == "unprofiled" {
			t.Errorf("%s: agent %+v", e.Agent.Name(), c.Agent)
		}
		if c.Transport != "terminal" || c.Terminal.Provider != "tmux" || !strings.HasPrefix(c.Terminal.TerminalID, "term_") {
			t.Errorf("%s: row %+v", e.Agent.Name(), c)
		}
		if c.Terminal.ScreenState != "idle" && c.Terminal.ScreenState != "startup_dialog" {
			t.Errorf("%s: screen %s", e.Agent.Name(), c.Terminal.ScreenState)
		}
		var one conversationRow
		if code := call(t, "GET", d.url+"/v1/conversations/"+c.ConversationID, d.token, "", &one); code != 200 || one.Terminal.TerminalID != c.Terminal.TerminalID {
			t.Errorf("%s: get by id: %d %+v", e.Agent.Name(), code, one)
		}
	}
	var p struct{ Code string }
	if code := call(t, "GET", d.url+"/v1/conversations/conv_gone", d.token, "", &p); code != 404 || p.Code != "conversation_not_found" {
		t.Errorf("unknown conversation: %d %s", code, p.Code)
	}
	var doc struct {
		Status string
		Tmux   struct{ Found bool }
		Agents []struct {
			Kind, Version string
			Profiled      bool
		}
	}
	if code := call(t, "GET", d.url+"/v1/doctor", d.token, "", &doc); code != 200 || !doc.Tmux.Found {
		t.Fatalf("doctor: %d %+v", code, doc)
	}
	for _, e := range envs {
		found := false
		for _, a := range doc.Agents {
			if a.Kind == e.Agent.Kind && a.Version == e.Agent.Version && a.Profiled {
				found = true
			}
		}
		if !found {
			t.Errorf("doctor does not report %s as profiled: %+v", e.Agent.Name(), doc.Agents)
		}
	}
}
