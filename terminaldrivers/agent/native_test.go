package agent

import (
	"strings"
	"testing"

	"akk/terminaldrivers/screen"
)

func capture(rows ...string) screen.Capture { return screen.Parse(strings.Join(rows, "\n")) }

func TestFirstMenuEntry(t *testing.T) {
	for _, c := range []struct {
		name string
		rows []string
		want bool
	}{
		{"first and marked", []string{"  ❯ /status      Show status", "    /statusline  Set up the status line"}, true},
		{"first, no glyph", []string{"  /status      show status", "  /statusline  configure it"}, true},
		{"another first", []string{"  /statusline  configure it", "  /status      show status"}, false},
		{"glyph on another", []string{"    /status      show status", "  ❯ /statusline  configure it"}, false},
		{"no menu", []string{"› /status"}, false},
	} {
		if got := FirstMenuEntry(capture(c.rows...), 0, len(c.rows), "/status"); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	// A command with an argument: no menu may be open.
	if !MenuSelects(capture("› /resume 0123"), 0, 1, "/resume 0123") {
		t.Error("no menu: Enter runs the typed text")
	}
	if MenuSelects(capture("  ❯ /resume   Resume a session", "› /resume 0123"), 0, 2, "/resume 0123") {
		t.Error("an open menu could complete an entry in place of the typed text")
	}
}

func TestReadNumberedMenu(t *testing.T) {
	c := capture(
		"  Update Model Permissions",
		"› 1. Ask for approval (current)  Read and edit files",
		"                                 and run commands",
		"  2. Approve for me              Only ask when unsafe",
		"  3. Full Access                 Use with caution",
		"  enter select · esc back",
	)
	m, ok := ReadNumberedMenu(c, "Update Model Permissions", "esc back")
	if !ok || strings.Join(m.Labels, "|") != "Ask for approval|Approve for me|Full Access" || m.Selected != 0 || m.Current != 0 {
		t.Fatalf("%+v %v", m, ok)
	}
	if _, ok := ReadNumberedMenu(capture(c.Text()[:4]...), "Update Model Permissions", "esc back"); ok {
		t.Error("a menu without its hint row is not whole")
	}
	two := capture("  Select Reasoning Level for gpt-5.5", "› 1. Low  fast", "› 2. High  deep", "  esc back")
	if _, ok := ReadNumberedMenu(two, "Select Reasoning Level for *", "esc back"); ok {
		t.Error("two selected options")
	}
	if got := LabelID("Default (recommended) ✔"); got != "default" {
		t.Errorf("LabelID %q", got)
	}
	if got := LabelID("Extra high"); got != "extra_high" {
		t.Errorf("LabelID %q", got)
	}
	if v, ok := Field("│  Session:   01a232b8-0e4c-7a53-935a-9875469f4b51   │", "Session"); !ok || !IsUUID(v) {
		t.Errorf("Field %q %v", v, ok)
	}
}
