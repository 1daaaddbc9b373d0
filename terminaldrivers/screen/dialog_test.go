package screen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every start-up dialog captured from the pinned agents names what it asks.
func TestDialogQuestionOnEveryCapturedDialog(t *testing.T) {
	dirs, err := filepath.Glob("../testdata/screens/*/*/startup_*")
	if err != nil || len(dirs) < 10 {
		t.Fatalf("%d dialogs captured, %v", len(dirs), err)
	}
	want := map[string]string{
		"claude/2.1.332/startup_trust":          "Is this a project you created or one you trust?",
		"claude/2.1.332/startup_api_key":        "Do you want to use this API key?",
		"claude/2.1.332/startup_auto_mode":      "Make auto mode your default permission mode?",
		"codex/0.158.0/startup_trust":           "Trust this folder?",
		"codex/0.171.0/startup_model_migration": "Meet GPT-6 Sol",
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "screen.txt"))
		if err != nil {
			t.Fatal(err)
		}
		q := DialogQuestion(strings.Split(string(b), "\n"))
		name := strings.TrimPrefix(filepath.ToSlash(d), "../testdata/screens/")
		t.Logf("%s: %q", name, q)
		if q == "" || len([]rune(q)) > DialogQuestionLimit || strings.Contains(q, "sk-ant") {
			t.Errorf("%s: %q", name, q)
		}
		if w, ok := want[name]; ok && q != w {
			t.Errorf("%s: %q, want %q", name, q, w)
		}
	}
	if q := DialogQuestion([]string{"just some output", "no options here"}); q != "" {
		t.Errorf("no dialog: %q", q)
	}
}
