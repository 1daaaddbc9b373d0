package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestHooksInstallRemoveRestoresTheFileByteForByte(t *testing.T) {
	for name, orig := range map[string]string{
		"none":      "",
		"own hooks": "{\n    \"permissions\": {\"defaultMode\": \"default\"},\n    \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}]},\n    \"z\": 1.50\n}\n",
		"compact":   `{"model":"x"}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".claude", "settings.json")
			if orig != "" {
				os.MkdirAll(filepath.Dir(path), 0o700)
				if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < 2; i++ { // idempotent
				changed, err := installClaudeHooks(path, "http://127.0.0.1:7788"+hookPath, "akk_hook_secret")
				if err != nil || changed != (i == 0) {
					t.Fatalf("install %d: changed %v err %v", i, changed, err)
				}
			}
			st, err := claudeHookStatus(path, t.TempDir())
			if err != nil || !st.Installed || len(st.Events) != len(hookEvents) {
				t.Fatalf("status %+v %v", st, err)
			}
			got, _, _ := readSettings(path)
			if orig != "" {
				var want map[string]any
				json.Unmarshal([]byte(orig), &want)
				rest, _ := withoutAKK(got)
				a, _ := json.Marshal(rest)
				b, _ := json.Marshal(want)
				if !bytes.Equal(a, b) {
					t.Fatalf("other settings changed:\n%s\n%s", a, b)
				}
			}
			if removed, err := removeClaudeHooks(path); err != nil || !removed {
				t.Fatalf("remove: %v %v", removed, err)
			}
			after, err := os.ReadFile(path)
			if orig == "" {
				if !os.IsNotExist(err) {
					t.Fatalf("a file AKK created is still there: %q %v", after, err)
				}
				return
			}
			if string(after) != orig {
				t.Fatalf("after remove:\n%q\nwant\n%q", after, orig)
			}
			if _, err := os.Stat(path + hookBackupSuffix); !os.IsNotExist(err) {
				t.Fatalf("backup left behind: %v", err)
			}
		})
	}
}

func TestHooksRemoveKeepsWhatThePersonAddedSince(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(path, []byte(`{"a":1}`), 0o600)
	if _, err := installClaudeHooks(path, "http://x"+hookPath, "t"); err != nil {
		t.Fatal(err)
	}
	m, _, _ := readSettings(path)
	m["b"] = 2.0
	out, _ := json.Marshal(m)
	os.WriteFile(path, out, 0o600)
	if _, err := removeClaudeHooks(path); err != nil {
		t.Fatal(err)
	}
	m, _, _ = readSettings(path)
	if _, hooked := m["hooks"]; hooked || m["a"] != 1.0 || m["b"] != 2.0 {
		t.Fatalf("after remove: %v", m)
	}
}
