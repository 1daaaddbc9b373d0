package domain_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"akk/domain"
)

type fakeScreens struct {
	rows []string
	gone bool
}

func (f *fakeScreens) Screen(_ context.Context, id string) (domain.PaneScreen, error) {
	if f.gone || id != "term_a" {
		return domain.PaneScreen{}, domain.ErrTerminalGone
	}
	return domain.PaneScreen{Rows: f.rows, Columns: 80, Lines: 24}, nil
}

// rowRedactor hides "SECRET" and, as a row redactor, the row after a row
// that ends with "KEY=" (a secret wrapped onto the next row).
type rowRedactor struct{}

func (rowRedactor) Redact(s string) string { return strings.ReplaceAll(s, "SECRET", "[R]") }
func (r rowRedactor) RedactRows(rows []string) []string {
	out := make([]string, len(rows))
	for i, x := range rows {
		out[i] = r.Redact(x)
		if i > 0 && strings.HasSuffix(rows[i-1], "KEY=") {
			out[i] = "[R]"
		}
	}
	return out
}

// A screen is read redacted (rows together), trailing spaces cut; a pane
// that went is terminal_not_found; a host may not read a pane another
// host's Turn holds, while that host and the operator may.
func TestScreenRedactedAndHeldPanes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ft := &fakeTerm{term: idleTerminal()}
		w := newWorldRedacting(t, "", ft, rowRedactor{})
		screens := &fakeScreens{rows: []string{"> hello SECRET   ", "export KEY=", "wrapped-part", ""}}
		w.use(t, struct {
			panes
			*fakeScreens
		}{w.panes, screens})

		if _, err := w.svc.Screen(context.Background(), "term_a"); code(err) != domain.CodeUnauthorized {
			t.Fatalf("no principal: %v", err)
		}
		s, err := w.svc.Screen(w.host, "term_a")
		if err != nil || s.Text != "> hello [R]\nexport KEY=\n[R]\n" || s.Columns != 80 || s.Lines != 24 || s.ReadAt.IsZero() || s.TerminalID != "term_a" {
			t.Fatalf("screen %+v %v", s, err)
		}
		if screens.rows[0] != "> hello SECRET   " {
			t.Fatal("the reader's rows were changed in place")
		}
		if _, err := w.svc.Screen(w.host, "term_b"); code(err) != domain.CodeTerminalNotFound {
			t.Fatalf("a pane that went: %v", err)
		}

		if _, err := w.svc.Send(w.host, domain.SendInput{TerminalID: "term_a", Request: "a task"}); err != nil {
			t.Fatal(err)
		}
		if _, err := w.svc.Screen(w.other, "term_a"); code(err) != domain.CodeConflictActiveTurn {
			t.Fatalf("another host read a held pane: %v", err)
		}
		for _, who := range []context.Context{w.host, domain.WithPrincipal(context.Background(), domain.Principal{Operator: true})} {
			if _, err := w.svc.Screen(who, "term_a"); err != nil {
				t.Fatalf("the holder or the operator: %v", err)
			}
		}
	})
}
