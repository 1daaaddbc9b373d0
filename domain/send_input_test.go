package domain_test

import (
	"testing"

	"akk/domain"
)

// Zero-width and bidirectional controls are refused anywhere in a request:
// the pane would show text other than what was sent, and one before a
// slash command hid it from the first-line rule.
func TestCheckRequestTextRefusesInvisibleControls(t *testing.T) {
	var invisible []rune
	for _, span := range [][2]rune{{0x200B, 0x200F}, {0x202A, 0x202E}, {0x2066, 0x2069}, {0xFEFF, 0xFEFF}} {
		for r := span[0]; r <= span[1]; r++ {
			invisible = append(invisible, r)
		}
	}
	for _, r := range invisible {
		for _, req := range []string{string(r) + "/clear", "fix the" + string(r) + " tests", "two\nlines" + string(r)} {
			if f := domain.CheckRequestText(req, false); f != domain.FaultInvisible {
				t.Errorf("%q: fault %q, want %q", req, f, domain.FaultInvisible)
			}
		}
	}
	for _, ok := range []string{"fix the tests", "très vert, 緑", "שלום עולם", "emoji 🙂 fine", "a → b"} {
		if f := domain.CheckRequestText(ok, false); f != domain.FaultNone {
			t.Errorf("%q: fault %q", ok, f)
		}
	}
}
