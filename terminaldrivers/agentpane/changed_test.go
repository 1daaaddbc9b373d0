package agentpane

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestChanged(t *testing.T) {
	x := testTerminal(t)
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.jsonl")
	if err := os.WriteFile(existing, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := filepath.Join(dir, "later.jsonl")
	// A record in a folder not made yet: the folder's creation wakes.
	deeper := filepath.Join(dir, "projects", "-tmp-new", "first.jsonl")
	for _, tc := range []struct {
		name  string
		files []fileMark
		write func()
	}{
		{"append", []fileMark{{Path: existing, Off: 3}}, func() {
			f, _ := os.OpenFile(existing, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("{}\n")
			f.Close()
		}},
		{"create", []fileMark{{Path: later}}, func() { os.WriteFile(later, []byte("{}\n"), 0o644) }},
		{"create in a new folder", []fileMark{{Path: deeper}}, func() { os.MkdirAll(filepath.Dir(deeper), 0o755) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &markState{V: markVersion, Files: tc.files}
			dm, _ := m.encode()
			ch, stop, err := x.Changed(dm)
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			select {
			case <-ch:
				t.Fatal("woke before any write")
			case <-time.After(50 * time.Millisecond):
			}
			start := time.Now()
			tc.write()
			select {
			case <-ch:
				t.Logf("woke %s after the write", time.Since(start))
			case <-time.After(2 * time.Second):
				t.Fatal("no wake after a write")
			}
		})
	}
	// stop without an event ends the watch.
	m := &markState{V: markVersion, Files: []fileMark{{Path: existing}}}
	dm, _ := m.encode()
	ch, stop, err := x.Changed(dm)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	select {
	case <-ch:
	case <-time.After(2 * time.Second):
		t.Fatal("stop did not end the watch")
	}
}
