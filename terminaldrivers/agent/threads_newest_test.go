package agent

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// NewestFiles keeps the most recently written files, whatever their names.
func TestNewestFiles(t *testing.T) {
	dir := t.TempDir()
	base := time.Now().Add(-time.Hour)
	var files []string
	// Names in the opposite order of their age: z oldest, a newest.
	for i, name := range []string{"z", "y", "x", "b", "a"} {
		p := filepath.Join(dir, name+".jsonl")
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		mod := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, mod, mod); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	slices.Sort(files) // as a glob returns them
	got := NewestFiles(files, 2)
	want := []string{filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "a.jsonl")}
	if !slices.Equal(got, want) {
		t.Fatalf("newest 2: %v, want %v", got, want)
	}
	if got := NewestFiles(files, 5); !slices.Equal(got, files) {
		t.Fatalf("no more than n: %v", got)
	}
}
