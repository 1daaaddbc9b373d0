package codexappserver

import (
	"reflect"
	"testing"

	"akk/domain"
)

func TestTitleThread(t *testing.T) {
	for _, c := range []struct {
		title string
		id    string
		whole bool
	}{
		{"01a23b87-ac74-7391-b92f-4d226...", "01a23b87-ac74-7391-b92f-4d226", false}, // Codex's "thread-id" item, measured
		{"01a23b87-ac74-7391-b92f-4d226…", "01a23b87-ac74-7391-b92f-4d226", false},
		{"01a23b87-ac74-7391-b92f-4d2261877c8e", "01a23b87-ac74-7391-b92f-4d2261877c8e", true},
		{"akk-project | 01a23b87-ac74-7391-b92f-4d226... | Working", "01a23b87-ac74-7391-b92f-4d226", false},
		{"akk-project", "", false},
		{"", "", false},
		{"01a23b87-ac74-7391-b92f-...", "", false},           // too short to say
		{"01a23b87-ac74-7391-b92f-4d226", "", false},         // cut with no ellipsis: not an id
		{"01a23b87-ac74-7391-b92f-4d2261877c8e0", "", false}, // longer than an id
		{"x01a23b87-ac74-7391-b92f-4d2261877c8e", "01a23b87-ac74-7391-b92f-4d2261877c8e", true}, // a letter before is a boundary
		{"01a23b87-ac74-7391-b92f-4d226... 01a23b88-ac74-7391-b92f-4d226...", "", false},        // two: nothing proven
		{"a01a23b87-ac74-7391-b92f-4d2261877c8e", "", false},                                    // part of a longer hex run
	} {
		id, whole := TitleThread(c.title)
		if id != c.id || whole != c.whole {
			t.Errorf("TitleThread(%q) = %q, %v; want %q, %v", c.title, id, whole, c.id, c.whole)
		}
	}
}

func TestPaneThreads(t *testing.T) {
	pane := func(id, title string) domain.Terminal { return domain.Terminal{ID: id, Title: title} }
	loaded := []string{"01a23b87-ac74-7391-b92f-4d2261877c8e", "01a23b87-bb50-70f0-829a-8c95a1877c8e", "01a23b87-bb50-70f0-829a-8c95b0000000"}
	got := paneThreads([]domain.Terminal{
		pane("term_a", "01a23b87-ac74-7391-b92f-4d226..."),     // one loaded thread starts so: proven
		pane("term_b", "01a23b87-bb50-70f0-829a-8c95..."),      // two do: nothing
		pane("term_c", "akk-project"),                          // no id shown
		pane("term_d", "01a23b99-0000-7000-8000-000000000000"), // not loaded here
	}, loaded)
	if want := map[string]string{"01a23b87-ac74-7391-b92f-4d2261877c8e": "term_a"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("paneThreads = %v, want %v", got, want)
	}
	// Two panes showing one thread: neither is proven to be its pane.
	got = paneThreads([]domain.Terminal{pane("term_a", "01a23b87-ac74-7391-b92f-4d226..."), pane("term_e", "01a23b87-ac74-7391-b92f-4d2261877c8e")}, loaded)
	if len(got) != 0 {
		t.Fatalf("two panes on one thread: %v, want none", got)
	}
}
