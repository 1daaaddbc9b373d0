package codex

import (
	"testing"

	"akk/terminaldrivers/agent/screencases"
)

// FuzzScreen reads arbitrary screens with every profile (see
// screencases.FuzzScreens), seeded with every captured screen.
func FuzzScreen(f *testing.F) {
	screencases.FuzzScreens(f, Driver{}.Profiles(), "testdata/screens", "../testdata/screens/codex")
}

// FuzzRecordLine parses arbitrary record lines, seeded with the recorded ones.
func FuzzRecordLine(f *testing.F) {
	screencases.FuzzRecordLines(f, []byte(`{"type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","last_agent_message":"hi"}}`), "../agentpane/testdata/records/codex@*/*.jsonl", ParseRolloutLine)
}
