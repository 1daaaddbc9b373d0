package screen

import (
	"reflect"
	"testing"
)

func TestStyled(t *testing.T) {
	in := "\x1b[1mBold\x1b[0m plain \x1b[38;2;215;119;87m●\x1b[39m x\n" +
		"\x1b[48;5;237m\x1b[38;5;231m> \x1b[2mdim\x1b[22m\x1b[0m\n" +
		"\x1b[31mred\x1b[53mover\x1b[0m\n" + // 53 (overline): not known, the row goes plain
		"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b[7mrev\x1b[27m\n"
	got := Styled(in)
	want := []StyledRow{
		{Text: "Bold plain ● x", Spans: []Span{{0, 4, Style{Bold: true}}, {11, 12, Style{FG: "#d77757"}}}},
		{Text: "> dim", Spans: []Span{{0, 2, Style{FG: "#ffffff", BG: "#3a3a3a"}}, {2, 5, Style{FG: "#ffffff", BG: "#3a3a3a", Dim: true}}}},
		{Text: "redover"},
		{Text: "link rev", Spans: []Span{{5, 8, Style{Inverse: true}}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
	for i, r := range Parse(in).Text() {
		if r != got[i].Text {
			t.Errorf("row %d: %q, Parse reads %q", i, got[i].Text, r)
		}
	}
}
