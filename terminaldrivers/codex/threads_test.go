package codex

import (
	"os"
	"path/filepath"
	"testing"

	"akk/terminaldrivers/agent"
)

func TestThreadsFromRollouts(t *testing.T) {
	home := t.TempDir()
	day := filepath.Join(home, "sessions", "2026", "12", "01")
	os.MkdirAll(day, 0o755)
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(day, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := "01a23212-b236-7163-affd-df87c40736b2"
	b := "01a23212-b236-7163-affd-df87c40736b3"
	c := "01a23212-b236-7163-affd-df87c40736b4"
	write("rollout-2026-12-01T14-46-55-"+a+".jsonl", `{"type":"session_meta","payload":{"id":"`+a+`","cwd":"/work/proj"}}
{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n</environment_context>"}]}}
{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the parser"}]}}
`)
	write("rollout-2026-12-01T14-47-55-"+b+".jsonl", `{"type":"session_meta","payload":{"id":"`+b+`","cwd":"/work/other"}}
{"type":"event_msg","payload":{"type":"user_message","message":"not this project"}}
`)
	write("rollout-2026-12-01T14-48-55-"+c+".jsonl", `{"type":"session_meta","payload":{"id":"`+c+`","cwd":"/work/proj"}}
{"type":"event_msg","payload":{"type":"user_message","message":"an older format"}}
`)
	ths, err := Driver{}.Threads(agent.Process{Cwd: "/work/proj", Env: map[string]string{"CODEX_HOME": home}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, th := range ths {
		got[th.NativeThreadID] = th.Title
	}
	if len(ths) != 2 || got[a] != "fix the parser" || got[c] != "an older format" {
		t.Fatalf("threads %+v", ths)
	}
	// No sessions folder yet: no threads, no error.
	if ths, err := (Driver{}).Threads(agent.Process{Cwd: "/work/proj", Env: map[string]string{"CODEX_HOME": t.TempDir()}}); err != nil || len(ths) != 0 {
		t.Fatalf("empty home: %+v %v", ths, err)
	}
}
