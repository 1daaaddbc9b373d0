package agentpane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"akk/terminaldrivers/agenttest"
	"akk/terminaldrivers/agenttest/fakemodel"
)

// TestCaptureWrappedPrompts recaptures testdata/screens/<kind>/<version>/
// permission_narrow on every pinned version (only with
// AKK_CAPTURE_FIXTURES=1): a long shell command in a narrow pane, so the
// command and the persistent options wrap.
func TestCaptureWrappedPrompts(t *testing.T) {
	if os.Getenv("AKK_CAPTURE_FIXTURES") != "1" {
		t.Skip("set AKK_CAPTURE_FIXTURES=1 to recapture the fixtures")
	}
	const width = 64
	cmd := "touch akk-a-very-long-file-name-that-goes-on-and-on-and-on-for-a-while-longer && echo akk-approved-1 with some more words to wrap the line"
	for _, a := range agenttest.RequireAgents(t) {
		t.Run(a.Name(), func(t *testing.T) {
			// In sequence: the Envs share the neutral project folder.
			e := agenttest.New(t, a, agenttest.Options{Width: width, ProjectDir: "/tmp/akk-fixture-project"})
			e.StartReady()
			e.Submit("Run it " + fakemodel.Marker(fakemodel.ScenarioBash, "cmd", cmd))
			e.WaitFor("the permission prompt", agenttest.TurnTimeout, func(s string) bool { return agenttest.ApprovalPrompt(a.Kind, s) })
			time.Sleep(time.Second)
			e.Settle()
			dir := filepath.Join("testdata", "screens", a.Kind, a.Version, "permission_narrow")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			meta := strings.NewReplacer("KIND", a.Kind, "VERSION", a.Version).Replace(`{
  "agent": "KIND",
  "version": "VERSION",
  "case": "permission_narrow",
  "width": 64,
  "height": 40,
  "expected_state": "awaiting_approval",
  "description": "a long shell command in a narrow pane: the command and the persistent options wrap",
  "project_dir": "/tmp/akk-fixture-project"
}
`)
			for name, data := range map[string]string{"screen.ansi": e.CaptureANSI(), "screen.txt": e.Capture(), "meta.json": meta} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
