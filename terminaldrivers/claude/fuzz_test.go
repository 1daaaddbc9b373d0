package claude

import (
	"testing"

	"akk/terminaldrivers/agent/screencases"
)

// FuzzScreen reads arbitrary screens with every profile (see
// screencases.FuzzScreens), seeded with every captured screen.
func FuzzScreen(f *testing.F) {
	screencases.FuzzScreens(f, Driver{}.Profiles(), "testdata/screens", "../testdata/screens/claude")
}

// FuzzRecordLine parses arbitrary record lines, seeded with the recorded ones.
func FuzzRecordLine(f *testing.F) {
	screencases.FuzzRecordLines(f, []byte(`{"type":"assistant","message":{"role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"hi"}]}}`), "../agentpane/testdata/records/claude@*/*.jsonl", ParseTranscriptLine, ParseTranscriptLineUnwrapping)
}
