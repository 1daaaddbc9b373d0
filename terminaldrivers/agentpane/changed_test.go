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
	// The state file's folder is shared (every Claude Code writes its
	// session record there, by a rename): another agent's record wakes
	// nobody, the agent's own does.
	sessions := filepath.Join(dir, "sessions")
	os.MkdirAll(sessions, 0o755)
	own, other := filepath.Join(sessions, "1.json"), filepath.Join(sessions, "2.json")
	rewrite := func(path string) {
		os.WriteFile(path+".tmp", []byte("{}"), 0o600)
		os.Rename(path+".tmp", path)
	}
	rewrite(own)
	sm := &markState{V: markVersion, Files: []fileMark{{Path: existing}}, State: own}
	sdm, _ := sm.encode()
	sch, sstop, err := x.Changed(sdm)
	if err != nil {
		t.Fatal(err)
	}
	defer sstop()
	rewrite(other)
	select {
	case <-sch:
		t.Fatal("another agent's session record woke the watch")
	case <-time.After(50 * time.Millisecond):
	}
	rewrite(own)
	select {
	case <-sch:
	case <-time.After(2 * time.Second):
		t.Fatal("the agent's own session record did not wake the watch")
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
