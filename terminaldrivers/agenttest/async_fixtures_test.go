package agenttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agent"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// CaptureAsyncEnv recaptures the async question screens
// (terminaldrivers/testdata/async/<version>/<case>.{txt,ansi}) that the
// Codex grammar's unit tests read: make fixtures-async.
const CaptureAsyncEnv = "AKK_CAPTURE_ASYNC"

// TestCaptureAsyncFixtures captures, on every pinned Codex version that asks
// request_user_input_async questions, two questions collapsed above the
// composer, opened (first of two), the second option highlighted, the
// free-text row highlighted and with text typed on it, and one answer
// queued above the next question. Each agent runs in its own tmux server in
// a 120x40 pane in the neutral fixture folder, one version after another.
func TestCaptureAsyncFixtures(t *testing.T) {
	if os.Getenv(CaptureAsyncEnv) != "1" {
		t.Skipf("set %s=1 to recapture the async question screens", CaptureAsyncEnv)
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(FixtureProjectDir, 0o755); err != nil {
		t.Fatalf("%s: %v (another capture running, or an old one left it)", FixtureProjectDir, err)
	}
	t.Cleanup(func() { os.RemoveAll(FixtureProjectDir) })
	first, _ := agent.ParseVersion("0.154.0")
	agents, async := RequireAgents(t, KindCodex), filepath.Join(root, "terminaldrivers", "testdata", "async")
	if one := os.Getenv(CaptureAgentEnv); one != "" {
		// make profile-new: one release, into a folder of candidates.
		agents = []Agent{{Kind: KindCodex, Version: strings.TrimPrefix(one, KindCodex+"@"), Dir: filepath.Join(AgentsDir(), one)}}
		if dir := os.Getenv(CaptureDirEnv); dir != "" {
			async = filepath.Join(dir, "async")
		}
	}
	for _, a := range agents {
		if v, ok := agent.ParseVersion(a.Version); !ok || v.Less(first) {
			continue
		}
		t.Run(a.Name(), func(t *testing.T) {
			dir := filepath.Join(async, a.Version)
			os.RemoveAll(dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			save := func(e *Env, name string) {
				t.Helper()
				e.Settle()
				if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(e.Capture()), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name+".ansi"), []byte(e.CaptureANSI()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e := fixtureEnv(t, a, Options{AsyncQuestions: true})
			e.StartReady()
			e.Submit("Ask while working " + fakemodel.Marker(fakemodel.ScenarioAskAsync, "questions", "2", "secs", "120"))
			e.WaitFor("the collapsed questions", captureTimeout, func(s string) bool { return strings.Contains(s, "? 2 questions") })
			save(e, "collapsed")
			e.Press("S-Left")
			e.WaitForText(10*time.Second, "1 of 2")
			save(e, "open")
			e.Press("Down")
			e.WaitFor("the second option highlighted", 10*time.Second, func(s string) bool { return strings.Contains(s, "› 2. Blue") })
			save(e, "open_second")
			e.Press("Down")
			e.WaitFor("the free-text row highlighted", 10*time.Second, func(s string) bool { return strings.Contains(s, "› 3. Other") })
			save(e, "open_other")
			e.Type("Teal")
			e.WaitForText(10*time.Second, "› 3. Teal")
			save(e, "open_other_text")
			e.Press("Tab")
			e.WaitFor("the answer queued", 10*time.Second, func(s string) bool { return strings.Contains(s, "↳") && !strings.Contains(s, "› 3. Teal") })
			save(e, "queued_next")
		})
	}
}
