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

// Claude Code 2.1.332's model list in an 80x24 pane, as captured: it
// scrolls three rows at a time.
func TestReadNumberedWindow(t *testing.T) {
	top := capture(
		"  Select model",
		"  Your pick is the default for new sessions. For other models, use --model.",
		"",
		"  ❯ 1. Default (recommended) ✔  Use the default model (currently Opus 5.5) ·",
		"                                $4/$20 per Mtok",
		"    2. Opus                     Opus 5.5 · Best for everyday, complex tasks ·",
		"                                $4/$20 per Mtok",
		"    3. Fable                    Fable 5.2 · Most capable for your hardest and",
		"                                longest-running tasks · $8/$40 per Mtok",
		"    ↓ 2 more",
		"",
		"  ◐ Medium effort (default) ←/→ to adjust",
		"",
		"  s to use this session only · Enter to save · Esc to cancel",
	)
	bottom := capture(
		"  Select model",
		"  Your pick is the default for new sessions. For other models, use --model.",
		"    ↑ 2 more",
		"    3. Fable                    Fable 5.2 · Most capable for your hardest and",
		"                                longest-running tasks · $8/$40 per Mtok",
		"    4. Sonnet                   Sonnet 5.5 · Efficient for routine tasks ·",
		"                                $2/$10 per Mtok",
		"  ❯ 5. Haiku                    Haiku 5.5 · Fastest for quick answers ·",
		"                                $0.10/$0.50 per Mtok ($0.50/$2.50 for prompts",
		"                                over 100k)",
		"",
		"  ◐ Medium effort (default) ←/→ to adjust",
		"",
		"  s to use this session only · Enter to save · Esc to cancel",
	)
	m, ok := ReadNumberedWindow(top, "Select model", "Esc to cancel")
	if !ok || strings.Join(m.Labels, "|") != "Default (recommended) ✔|Opus|Fable" || m.Selected != 0 || m.Above || !m.Below {
		t.Fatalf("top: %+v %v", m, ok)
	}
	m, ok = ReadNumberedWindow(bottom, "Select model", "Esc to cancel")
	if !ok || strings.Join(m.Labels, "|") != "Fable|Sonnet|Haiku" || m.Selected != 2 || !m.Above || m.Below {
		t.Fatalf("bottom: %+v %v", m, ok)
	}
	for name, c := range map[string]screen.Capture{"top": top, "bottom": bottom} {
		if _, ok := ReadNumberedMenu(c, "Select model", "Esc to cancel"); ok {
			t.Errorf("%s: a window that scrolls read as the whole menu", name)
		}
		if !MenuOpen(c, "Select model", "Esc to cancel") {
			t.Errorf("%s: not seen open", name)
		}
	}
	gap := capture("  Select model", "  ❯ 1. Default  x", "    3. Fable  y", "  Esc to cancel")
	if _, ok := ReadNumberedWindow(gap, "Select model", "Esc to cancel"); ok {
		t.Error("rows not numbered one after another")
	}
}
