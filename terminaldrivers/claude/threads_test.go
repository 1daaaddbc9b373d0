package claude

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"akk/terminaldrivers/agent"
)

func TestThreadsFromTranscripts(t *testing.T) {
	home := t.TempDir()
	cwd := "/work/proj"
	dir := ProjectDir(filepath.Join(home, ".claude"), cwd)
	os.MkdirAll(dir, 0o755)
	write := func(id, body string) {
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := "11111111-1111-4111-8111-111111111111"
	b := "22222222-2222-4222-8222-222222222222"
	c := "33333333-3333-4333-8333-333333333333"
	write(a, `{"type":"mode","mode":"normal","sessionId":"`+a+`"}
{"type":"user","isMeta":true,"message":{"role":"user","content":"<local-command-caveat>Caveat</local-command-caveat>"},"cwd":"/work/proj"}
{"type":"user","message":{"role":"user","content":"<command-name>/model</command-name>"},"cwd":"/work/proj"}
{"type":"user","message":{"role":"user","content":"fix the parser"},"cwd":"/work/proj","uuid":"u1"}
`)
	write(b, `{"type":"user","message":{"role":"user","content":"another project's task"},"cwd":"/work/proj2"}
`)
	write(c, `{"type":"mode","mode":"normal"}
`)
	write("not-a-uuid", `{"type":"user","message":{"role":"user","content":"x"},"cwd":"/work/proj"}
`)
	ths, err := Driver{}.Threads(agent.Process{Cwd: cwd, Env: map[string]string{"HOME": home}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ths) != 1 || ths[0].NativeThreadID != a || ths[0].Title != "fix the parser" || ths[0].UpdatedAt.IsZero() {
		t.Fatalf("threads %+v", ths)
	}
	if _, err := (Driver{}).Threads(agent.Process{Cwd: cwd}); err == nil {
		t.Fatal("no HOME: no error")
	}
}

// Claude Code rewrites its session record in place: a record that stays
// half written is an error after its retries; a whole one reads.
func TestReadSessionRecordRetriesAHalfWrittenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "1.json")
	full := `{"pid":1,"sessionId":"11111111-1111-4111-8111-111111111111","cwd":"/p","procStart":"5","status":"busy"}`
	os.WriteFile(path, []byte("{"), 0o644)
	if _, err := readSessionRecord(path); !errors.Is(err, errSessionRecordJSON) {
		t.Fatalf("a broken record: %v", err)
	}
	os.WriteFile(path, []byte(full), 0o644)
	if rec, err := readSessionRecord(path); err != nil || rec.Status != "busy" {
		t.Fatalf("a whole record: %+v %v", rec, err)
	}
}
