// Package agenttest runs the real Claude Code and Codex TUIs in isolated tmux
// servers against the fake model (package fakemodel), for end-to-end tests
// and for capturing screen fixtures.
//
// A test asks for the pinned agents it needs and gets an Env per agent:
//
//	for _, a := range agenttest.RequireAgents(t) { // skips, or fails when AKK_REQUIRE_AGENTS=1
//		t.Run(a.Name(), func(t *testing.T) {
//			t.Parallel()
//			e := agenttest.New(t, a, agenttest.Options{})
//			e.StartReady() // idle composer reached, start-up offers answered
//			e.Submit("hello")
//			e.WaitForText(agenttest.TurnTimeout, fakemodel.ReplyToken("hello"))
//		})
//	}
//
// Each Env has its own tmux server (tmux -L <SocketName>, socket file at
// SocketPath, pane at Target), its own HOME in a temp dir (CODEX_HOME is
// $HOME/.codex) holding the configuration TESTING.md describes, a fake model
// on 127.0.0.1:0 (or a shared one, Options.Model) and a project folder. The
// agent is started through its npm entry point in the project folder, with
// its environment passed on the command line, as a human would start it.
//
// Pinned versions come from scripts/agents.txt (found by walking up to
// go.mod); installs from scripts/install-agents.sh, in $AKK_AGENTS_DIR or
// ${XDG_CACHE_HOME:-$HOME/.cache}/akk/agents.
//
// Cleanup (t.Cleanup) stops only what the test started, by pid: it kills the
// Env's tmux server, then every process whose HOME or CODEX_HOME is the test
// home or whose executable or arguments are paths under it (Codex 0.169.0's
// managed app-server daemon outlives the TUI), then the fake model.
//
// Fixtures: TestCaptureFixtures (only with AKK_CAPTURE_FIXTURES=1) writes
// terminaldrivers/testdata/screens/<kind>/<version>/<case>/ with screen.txt,
// screen.ansi and meta.json; see fixtures_test.go.
package agenttest
