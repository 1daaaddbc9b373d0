package codexappserver

import (
	"encoding/json"
	"testing"

	"akk/domain"
)

// TestFileChanges reads a fileChange item as the daemon sends it: a file
// added (its content), one updated (its diff) and one moved, named from
// the thread's folder, in path order.
func TestFileChanges(t *testing.T) {
	raw := `{"type":"fileChange","id":"call_1","status":"completed","changes":[
		{"path":"/srv/p/b.txt","kind":{"type":"update","move_path":null},"diff":"@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"},
		{"path":"/srv/p/a.txt","kind":{"type":"add"},"diff":"alpha\nbeta\n"},
		{"path":"/srv/p/c.txt","kind":{"type":"update","move_path":"/srv/p/d.txt"},"diff":"@@ -1 +1 @@\n-x\n+y\n"},
		{"path":"/srv/p/e.txt","kind":{"type":"somethingNew"},"diff":"?"}]}`
	var it Item
	if err := json.Unmarshal([]byte(raw), &it); err != nil {
		t.Fatal(err)
	}
	got := it.FileChanges("/srv/p")
	want := []domain.FileChange{
		{Path: "a.txt", Op: domain.FileCreated, Diff: "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n+alpha\n+beta\n"},
		{Path: "b.txt", Op: domain.FileUpdated, Diff: "--- a/b.txt\n+++ b/b.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"},
		{Path: "c.txt", Op: domain.FileMoved, Diff: "--- a/c.txt\n+++ b/d.txt\n@@ -1 +1 @@\n-x\n+y\n"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d changes: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change %d:\n got  %+v\n want %+v", i, got[i], want[i])
		}
	}
}
