// Package agenttest runs the real Claude Code and Codex TUIs in isolated tmux
// servers against the fake model (package fakemodel), for end-to-end tests
// and for capturing screen fixtures.
//
// A test asks for the pinned agents it needs and gets an Env per agent:
//
//	for _, a := range agenttest.RequireAgents(t) { // or RequireAgents(t, agenttest.KindCodex)
//		t.Run(a.Name(), func(t *testing.T) {      // "claude@2.1.328", ...
//			t.Parallel()
//			e := agenttest.New(t, a, agenttest.Options{})
//			e.StartReady() // idle composer reached, start-up offers answered
//			e.Submit("Run it " + fakemodel.Marker(fakemodel.ScenarioBash))
//			e.WaitFor("approval", agenttest.TurnTimeout, func(s string) bool {
//				return agenttest.ApprovalPrompt(a.Kind, s)
//			})
//		})
//	}
//
// # Gate
//
// RequireAgents and RequireAgent skip the test, naming what is missing, when
// an agent version (or tmux) is not installed; with AKK_REQUIRE_AGENTS=1 they
// fail it instead. Pinned versions come from scripts/agents.txt (found by
// walking up to go.mod); installs are those of scripts/install-agents.sh, in
// $AKK_AGENTS_DIR or ${XDG_CACHE_HOME:-$HOME/.cache}/akk/agents
// (Agent.Entry is the npm entry point, Agent.Native the native binary).
//
// # Env
//
// Each Env has its own tmux server (tmux -L Env.SocketName; SocketPath is its
// socket file, for pointing the product's tmux driver at it; the agent's pane
// is Target, 120x40 by default), its own HOME in a temp dir (CODEX_HOME is
// $HOME/.codex; TMPDIR and the XDG dirs are inside it too) holding the
// configuration TESTING.md describes, a fake model on 127.0.0.1:0 (or a shared
// one, Options.Model) and a project folder (ProjectDir). Start runs the
// agent's npm entry point in the project folder with its environment on the
// tmux command line (AgentEnv), as a human would start it; the pane stays on
// screen if the agent exits, so a failure shows how it ended.
//
// Driving: Type (send-keys -l), Press (tmux key names: Enter, Escape, Down,
// BTab, C-u), Submit (type, wait for the text, Enter once), Choose (move a
// menu's cursor to a label, Enter), Settle (wait for a still screen before
// answering a prompt, as a human reads it first). Reading: Capture,
// CaptureANSI, WaitFor (fails with what was awaited and the last screen),
// WaitForText, WaitReady, WaitIdle, Idle, and the harness-only recognisers
// StartupDialog, ApprovalPrompt and Questionnaire (the product's screen
// grammar lives in terminaldrivers/claude and terminaldrivers/codex).
// Transcripts: TranscriptPaths (Claude:
// $HOME/.claude/projects/<cwd, non-alphanumerics as '-'>/<uuid>.jsonl; Codex:
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl), Transcript,
// WaitTranscript, TurnCompleted and WaitTurnCompleted. Model requests:
// Env.Requests and Env.WaitModelRequest list only this Env's agent's requests
// (each Env has its own fake API key, APIKey), also on a shared model; each
// fakemodel.Request says when its response finished (Finished), for
// detection latency. Env.WithT hands the Env to a subtest.
//
// # Cleanup
//
// t.Cleanup stops only what the test started, by pid: it kills the Env's tmux
// server, then every process of this user whose HOME or CODEX_HOME is the test
// home or whose executable or arguments are paths under it
// (ProcessesUnder; Codex 0.169.0's managed app-server daemon outlives the
// TUI), removes the socket file if tmux left it, then closes the fake model
// it owns.
//
// # Fixtures
//
// TestCaptureFixtures (only with AKK_CAPTURE_FIXTURES=1, `make fixtures`)
// writes terminaldrivers/testdata/screens/<kind>/<version>/<case>/ with
// screen.txt, screen.ansi and meta.json; see the README there.
// AKK_FAKEMODEL_DUMP=<dir> makes each Env's fake model write the raw request
// bodies it receives, to study a new agent version.
package agenttest
