package screen

import (
	"strings"
	"testing"
)

// BenchmarkRedactScreen redacts a screenful of ordinary agent output (about
// 5 KB, no secret in it): what a progress line or a prompt read costs at most.
func BenchmarkRedactScreen(b *testing.B) {
	rows := []string{
		"● I'll run the tests and then fix the failing assertion in handlers/ui.go.",
		"  ⎿  Ran go test ./handlers -run TestUISessions -count=1 (exit 0)",
		"     ok  	akk/handlers	0.412s",
		"  export PATH=$HOME/go/bin:$PATH && make generate && git diff --stat",
		"  if password == nil { return errors.New(\"no password\") } // max_tokens: 1000",
		"  curl -sS http://127.0.0.1:7788/v1/health | jq .status",
	}
	var sb strings.Builder
	for sb.Len() < 5000 {
		for _, r := range rows {
			sb.WriteString(r)
			sb.WriteByte('\n')
		}
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Redact(text)
	}
}
