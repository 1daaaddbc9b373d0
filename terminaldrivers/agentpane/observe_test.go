package agentpane

import (
	"context"
	"testing"
	"time"

	"akk/domain"
)

// screenNotifierFake is a paneSource that counts change-report arms.
type screenNotifierFake struct {
	paneSource
	arms int
}

func (f *screenNotifierFake) ScreenChanged(context.Context, string) (<-chan struct{}, func(), bool) {
	f.arms++
	return make(chan struct{}), func() {}, true
}

// TestScreenWatchQuietOnTheRecord: while the record says quiet, no change
// report is armed (one armed is released) and the screen is looked at, and
// the record read, every QuietLook; the record showing a pending tool call
// makes the next look due at once and arms reports again.
func TestScreenWatchQuietOnTheRecord(t *testing.T) {
	f := &screenNotifierFake{}
	cfg := domain.TurnConfig{}.WithDefaults()
	var w screenWatch
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	if !w.lookNow(context.Background(), f, cfg, "term_1", false, time.Time{}, now) || f.arms != 1 || w.ch == nil {
		t.Fatalf("first look: arms %d", f.arms)
	}
	w.setQuiet(true)
	if w.ch != nil {
		t.Fatal("quiet kept the change report armed")
	}
	last := now
	if w.lookNow(context.Background(), f, cfg, "term_1", true, last, now.Add(cfg.QuietLook-time.Millisecond)) {
		t.Fatal("a quiet screen was looked at before QuietLook")
	}
	if !w.lookNow(context.Background(), f, cfg, "term_1", true, last, now.Add(cfg.QuietLook)) || f.arms != 1 {
		t.Fatalf("quiet: look at QuietLook without arming (arms %d)", f.arms)
	}
	last = now.Add(cfg.QuietLook)
	if d := w.wait(cfg, true, true, last, last); d != cfg.QuietLook {
		t.Fatalf("quiet wait %s, want QuietLook %s", d, cfg.QuietLook)
	}
	// Quiet looks fall on the QuietLook grid, whenever the last look was:
	// every quiet monitor looks at the same moment.
	if d := w.wait(cfg, true, true, last.Add(3*time.Second), last.Add(3*time.Second)); d != cfg.QuietLook-3*time.Second {
		t.Fatalf("quiet wait after an off-grid look %s, want %s", d, cfg.QuietLook-3*time.Second)
	}
	// A prompt read on a quiet look is believed on a second look only.
	if w.confirm(domain.Terminal{ID: "term_1", ScreenState: domain.ScreenWorking}, domain.Terminal{ID: "term_1", ScreenState: domain.ScreenAwaitingApproval}) {
		t.Fatal("a prompt read on one quiet look was believed")
	}
	w.confirming, w.dirty, w.pending = false, false, ""
	w.setQuiet(false)
	if d := w.wait(cfg, true, true, last, last); d != time.Millisecond {
		t.Fatalf("leaving quiet: next round in %s, want at once", d)
	}
	if !w.lookNow(context.Background(), f, cfg, "term_1", true, last, last) || f.arms != 2 || w.ch == nil {
		t.Fatalf("leaving quiet: a look at once with reports armed (arms %d)", f.arms)
	}
}

// TestScreenWatchExpectsAForetoldPrompt: a tool call just opened, or just
// ended (Codex's async question ends its call as it asks), or the agent
// saying it waits, makes a prompt expected until one is believed: a write
// is looked at at once (not ScreenGap after the last look), a prompt read
// once is confirmed ScreenConfirm later, and without writes the screen is
// looked at every ScreenGap; a tool call open longer than ScreenExpect is
// watched as before.
func TestScreenWatchExpectsAForetoldPrompt(t *testing.T) {
	cfg := domain.TurnConfig{}.WithDefaults()
	var w screenWatch
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	w.foretold(now, true, true, false, false)
	if !w.expect || w.every(cfg) != cfg.ScreenGap {
		t.Fatalf("a tool call just opened: expect %v, every %s", w.expect, w.every(cfg))
	}
	w.dirty = true
	if w.every(cfg) != 0 {
		t.Fatalf("a write while a prompt is expected: every %s, want at once", w.every(cfg))
	}
	if w.confirming = true; w.every(cfg) != cfg.ScreenConfirm {
		t.Fatalf("a prompt to confirm while one is expected: every %s, want %s", w.every(cfg), cfg.ScreenConfirm)
	}
	w.confirming, w.dirty = false, false
	// A look at a write while a prompt is expected is followed by one
	// ScreenConfirm later (the drawing may end with writes too small to be
	// reported), then by one every ScreenGap.
	f := &screenNotifierFake{}
	w.dirty = true
	if !w.lookNow(context.Background(), f, cfg, "term_1", true, now, now) || w.every(cfg) != cfg.ScreenConfirm {
		t.Fatalf("after a look at a write while a prompt is expected: every %s, want %s", w.every(cfg), cfg.ScreenConfirm)
	}
	if !w.lookNow(context.Background(), f, cfg, "term_1", true, now, now.Add(cfg.ScreenConfirm)) || w.every(cfg) != cfg.ScreenGap {
		t.Fatalf("after a look on the clock while a prompt is expected: every %s, want %s", w.every(cfg), cfg.ScreenGap)
	}
	w.release()
	if w.foretold(now.Add(ScreenExpect), true, false, false, false); w.expect {
		t.Fatal("a tool call open for ScreenExpect still expects a prompt")
	}
	if w.foretold(now.Add(time.Hour), true, false, true, false); !w.expect {
		t.Fatal("the agent says it waits, and no prompt is expected")
	}
	if w.foretold(now.Add(time.Hour), true, false, true, true); w.expect {
		t.Fatal("a prompt is believed, and one is still expected")
	}
	if w.foretold(now.Add(time.Hour), false, false, false, false); w.expect {
		t.Fatal("no tool call open, nothing changed, and a prompt is expected")
	}
	if w.foretold(now.Add(2*time.Hour), false, true, false, false); !w.expect {
		t.Fatal("a tool call that ended as it asked does not expect its question")
	}
	if w.foretold(now.Add(3*time.Hour), true, true, false, false); !w.expect {
		t.Fatal("a new tool call does not expect its prompt")
	}
}
