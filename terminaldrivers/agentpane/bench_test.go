package agentpane

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"akk/terminaldrivers/proc"
	"time"
)

// BenchmarkProgressUnchanged is the call the domain makes every ~50 ms
// while nothing new is written: a mark decode and a stat. "waiting" is a
// Codex mark before acceptance, which also lists its holder's open files
// (this process's here).
func BenchmarkProgressUnchanged(b *testing.B) {
	x := testTerminal(&testing.T{})
	var c recorded
	for _, rc := range recordedCases(&testing.T{}) {
		if rc.name == "codex@0.169.0/plain" {
			c = rc
		}
	}
	path := filepath.Join(b.TempDir(), "record.jsonl")
	// Everything but the end: accepted, still running.
	if err := os.WriteFile(path, bytes.Join(c.lines[:len(c.lines)-1], nil), 0o644); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	p, err := x.Progress(ctx, c.term, markFor(&testing.T{}, path, c.meta.ThreadID, time.Time{}), c.meta.Request)
	if err != nil || !p.Accepted || p.Ended() {
		b.Fatalf("%+v %v", p, err)
	}
	b.Run("accepted", func(b *testing.B) {
		for b.Loop() {
			if _, err := x.Progress(ctx, c.term, p.Mark, c.meta.Request); err != nil {
				b.Fatal(err)
			}
		}
	})
	self, err := proc.FS{}.Stat(os.Getpid())
	if err != nil {
		b.Fatal(err)
	}
	m := &markState{V: markVersion, Files: []fileMark{{Path: path, Off: int64(len(bytes.Join(c.lines, nil)))}}, Holder: self.PID, HolderStart: self.StartTicks}
	waiting, _ := m.encode()
	b.Run("waiting", func(b *testing.B) {
		for b.Loop() {
			if _, err := x.Progress(ctx, c.term, waiting, c.meta.Request); err != nil {
				b.Fatal(err)
			}
		}
	})
}
