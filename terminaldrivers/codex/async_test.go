package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"akk/domain"
	"akk/terminaldrivers/screen"
)

// TestAsyncPanelFixtures reads the captured async question screens of every
// version with the panel (make fixtures-async) through that version's
// profile.
func TestAsyncPanelFixtures(t *testing.T) {
	type want struct {
		collapsed   bool
		total, idx  int
		prompt      string
		cursor      int
		editor      bool
		editorText  string
		answerable  bool
		screenState domain.ScreenState
	}
	color, size := "Which color should the widget be?", "Which size should the widget be?"
	cases := map[string]want{
		"collapsed":       {collapsed: true, total: 2, prompt: "2 questions", answerable: true},
		"open":            {total: 2, idx: 1, prompt: color, cursor: 0, answerable: true, screenState: domain.ScreenWorking},
		"open_second":     {total: 2, idx: 1, prompt: color, cursor: 1, answerable: true, screenState: domain.ScreenWorking},
		"open_other":      {total: 2, idx: 1, prompt: color, cursor: 2, editor: true, answerable: true, screenState: domain.ScreenWorking},
		"open_other_text": {total: 2, idx: 1, prompt: color, cursor: 2, editor: true, editorText: "Teal", screenState: domain.ScreenWorking},
		"queued_next":     {total: 1, idx: 1, prompt: size, cursor: 0, answerable: true, screenState: domain.ScreenWorking},
	}
	n := 0
	for _, p := range Profiles {
		if p.Questions.Async == nil {
			continue
		}
		dir := filepath.Join("..", "testdata", "async", p.Version)
		for name, w := range cases {
			b, err := os.ReadFile(filepath.Join(dir, name+".ansi"))
			if err != nil {
				t.Errorf("%s: %v (make fixtures-async)", p.Version, err)
				continue
			}
			n++
			c := screen.Parse(string(b))
			r := p.Questions.ReadStep(c)
			tag := p.Version + "/" + name
			if !r.Found || !r.Async || r.Collapsed != w.collapsed || r.Answerable != w.answerable || r.Prompt != w.prompt {
				t.Errorf("%s: found=%v async=%v collapsed=%v answerable=%v (%s) prompt=%q", tag, r.Found, r.Async, r.Collapsed, r.Answerable, r.Reason, r.Prompt)
				continue
			}
			if w.collapsed {
				if r.Total != w.total || len(r.Options) != 1 || r.ResponseKind != domain.Confirmation {
					t.Errorf("%s: %+v", tag, r)
				}
				if cl := p.Classify(c); !cl.AsyncQuestion || cl.State == domain.ScreenAwaitingInteraction {
					t.Errorf("%s: classified %s, async %v", tag, cl.State, cl.AsyncQuestion)
				}
				continue
			}
			labels := []string{}
			for _, o := range r.Options {
				labels = append(labels, o.Label)
			}
			if r.Index != w.idx || r.Total != w.total || r.Cursor != w.cursor || r.Editor != w.editor || r.EditorText != w.editorText ||
				len(r.Options) != 3 || !r.Options[2].TakesText || strings.Join(labels, ",") != strings.Join(labels[:2], ",")+",Other" {
				t.Errorf("%s: index %d/%d cursor %d editor %v %q options %v", tag, r.Index, r.Total, r.Cursor, r.Editor, r.EditorText, labels)
			}
			if cl := p.Classify(c); cl.State != w.screenState || !cl.AsyncQuestion {
				t.Errorf("%s: classified %s, async %v", tag, cl.State, cl.AsyncQuestion)
			}
			// The same region (fingerprint) whatever redraws above it.
			if r.Region.Start < 1 || !strings.HasPrefix(c.Lines[r.Region.Start].Text, "• Queued follow-up inputs") {
				t.Errorf("%s: region starts at %q", tag, c.Lines[r.Region.Start].Text)
			}
		}
	}
	if n == 0 {
		t.Fatal("no async fixtures read")
	}
}

// TestAsyncPanelRefusesUnknownShapes: a draft in the composer keeps the
// collapsed block with the person; a footer of another version is not read.
func TestAsyncPanelRefusesUnknownShapes(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "async", "0.171.0", "collapsed.ansi"))
	if err != nil {
		t.Fatal(err)
	}
	draft := strings.Replace(string(b), "\x1b[2mAsk Codex to do anything", "my own draft", 1)
	c := screen.Parse(draft)
	if r := asyncPanel169.Collapsed(c); !r.Found || r.Answerable {
		t.Errorf("a draft in the composer: found %v answerable %v (%s)", r.Found, r.Answerable, r.Reason)
	}
	open, err := os.ReadFile(filepath.Join("..", "testdata", "async", "0.171.0", "open.ansi"))
	if err != nil {
		t.Fatal(err)
	}
	oc := screen.Parse(string(open))
	if r := asyncPanel154.ReadOpen(oc, oc.Bottom()); r.Found {
		t.Error("0.154's grammar read 0.171's panel")
	}
}
