package claude

import (
	"strings"
	"testing"

	"akk/terminaldrivers/screen"
)

func screenOf(r ...string) screen.Capture { return screen.Parse(strings.Join(r, "\n")) }

var rule = strings.Repeat("─", 60)

func TestStatusPanelAndFooter(t *testing.T) {
	panel := screenOf(
		"  Settings  Status   Config   Usage   Stats",
		"  Version:                    2.1.332",
		"  Session ID:                 2c9daa77-b43e-4a70-9c65-2c5778d73451",
		"  cwd:                        /tmp/akk-fixture-project",
		"  Model:                      Default (claude-opus-5-5)",
		"  ←/→ to switch · Esc to close",
	)
	c, ok := readStatusPanel(panel)
	if !ok || c.SessionID != "2c9daa77-b43e-4a70-9c65-2c5778d73451" || c.Version != "2.1.332" || c.Directory != "/tmp/akk-fixture-project" {
		t.Fatalf("%+v %v", c, ok)
	}
	if _, ok := readStatusPanel(screenOf(panel.Text()[1:]...)); ok {
		t.Error("fields without the panel's tab row")
	}
	for footer, want := range map[string]string{
		"  ⏸ manual mode on · ? for shortcuts":           "manual",
		"  ⏵⏵ accept edits on (shift+tab to cycle)":      "accept_edits",
		"  ⏸ plan mode on (shift+tab to cycle)":          "plan",
		"  ⏵⏵ auto mode on (shift+tab to cycle) · ← for": "auto",
	} {
		got, ok := V2_1_332().permissionMode(screenOf(rule, "❯ ", rule, footer))
		if !ok || got != want {
			t.Errorf("%q: %q %v, want %q", footer, got, ok, want)
		}
	}
	if e, ok := readEffort(screenOf("  ◉ xHigh effort ←/→ to adjust")); !ok || e != "xhigh" {
		t.Errorf("effort %q %v", e, ok)
	}
	typed := screenOf("  ❯ /clear   Start a new session", "    /code-review   Review", rule, "❯ /clear", rule, "  ⏸ manual mode on")
	if !V2_1_332().typedCommand(typed, "/clear") {
		t.Error("the typed /clear with its menu")
	}
}

// V2_1_332 is the newest profile.
func V2_1_332() Profile { return Profiles[len(Profiles)-1] }
