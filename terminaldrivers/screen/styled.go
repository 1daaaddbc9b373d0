package screen

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Style is how a run of a row is drawn: colours as "#rrggbb" ("" for the
// terminal's default) and the attributes a web page can show.
type Style struct {
	FG, BG                                string
	Bold, Dim, Italic, Underline, Inverse bool
}

// Span is a run of a row's runes [From, To) drawn in one Style.
type Span struct {
	From, To int
	Style
}

// StyledRow is one row as plain text and the styled runs of it (runs in
// the default style are left out).
type StyledRow struct {
	Text  string
	Spans []Span
}

// Styled reads a capture taken with escapes (tmux capture-pane -e) into
// rows of text and their SGR styles. Escapes other than SGR are dropped,
// as Parse drops them. ok is false for a row whose styles cannot be read
// (an SGR sequence it does not know): its spans are left out.
func Styled(ansi string) []StyledRow {
	rows := strings.Split(strings.TrimSuffix(ansi, "\n"), "\n")
	out := make([]StyledRow, 0, len(rows))
	var cur Style
	for _, row := range rows {
		var text strings.Builder
		var spans []Span
		n, known := 0, true
		for i := 0; i < len(row); {
			if row[i] == 0x1b {
				size, params, final := escape(row[i:])
				if final == 'm' {
					var ok bool
					if cur, ok = applyStyle(cur, params); !ok {
						known = false
					}
				}
				i += size
				continue
			}
			r, size := utf8.DecodeRuneInString(row[i:])
			i += size
			if r == '\r' {
				continue
			}
			text.WriteRune(r)
			if cur != (Style{}) {
				if k := len(spans) - 1; k >= 0 && spans[k].To == n && spans[k].Style == cur {
					spans[k].To++
				} else {
					spans = append(spans, Span{From: n, To: n + 1, Style: cur})
				}
			}
			n++
		}
		if !known {
			spans = nil
		}
		out = append(out, StyledRow{Text: text.String(), Spans: spans})
	}
	return out
}

// applyStyle applies one SGR sequence; ok is false when it holds a
// parameter this reader does not know.
func applyStyle(s Style, params string) (Style, bool) {
	if params == "" {
		return Style{}, true
	}
	parts := strings.Split(params, ";")
	ok := true
	for i := 0; i < len(parts); i++ {
		p, err := strconv.Atoi(parts[i])
		if parts[i] == "" {
			p, err = 0, nil
		}
		if err != nil {
			return s, false
		}
		switch {
		case p == 0:
			s = Style{}
		case p == 1:
			s.Bold = true
		case p == 2:
			s.Dim = true
		case p == 3:
			s.Italic = true
		case p == 4:
			s.Underline = true
		case p == 7:
			s.Inverse = true
		case p == 22:
			s.Bold, s.Dim = false, false
		case p == 23:
			s.Italic = false
		case p == 24:
			s.Underline = false
		case p == 27:
			s.Inverse = false
		case p >= 30 && p <= 37:
			s.FG = palette(p - 30)
		case p >= 90 && p <= 97:
			s.FG = palette(p - 90 + 8)
		case p == 39:
			s.FG = ""
		case p >= 40 && p <= 47:
			s.BG = palette(p - 40)
		case p >= 100 && p <= 107:
			s.BG = palette(p - 100 + 8)
		case p == 49:
			s.BG = ""
		case p == 38 || p == 48 || p == 58:
			c, used := extended(parts[i+1:])
			if used == 0 {
				return s, false
			}
			i += used
			if p == 38 {
				s.FG = c
			} else if p == 48 {
				s.BG = c
			}
		case p == 5 || p == 6 || p == 8 || p == 9 || p == 25 || p == 28 || p == 29 || p == 59:
			// blink, hidden, struck out and their ends: not shown
		default:
			ok = false
		}
	}
	return s, ok
}

// extended reads "5;n" or "2;r;g;b" after 38/48/58: the colour and how
// many parameters it took (0: not readable).
func extended(parts []string) (string, int) {
	num := func(s string) (int, bool) {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 0 && n <= 255
	}
	switch {
	case len(parts) >= 2 && parts[0] == "5":
		if n, ok := num(parts[1]); ok {
			return palette(n), 2
		}
	case len(parts) >= 4 && parts[0] == "2":
		r, ok1 := num(parts[1])
		g, ok2 := num(parts[2])
		b, ok3 := num(parts[3])
		if ok1 && ok2 && ok3 {
			return fmt.Sprintf("#%02x%02x%02x", r, g, b), 4
		}
	}
	return "", 0
}

// base16 is xterm's default palette for colours 0-15.
var base16 = [16]string{"#000000", "#cd0000", "#00cd00", "#cdcd00", "#0000ee", "#cd00cd", "#00cdcd", "#e5e5e5",
	"#7f7f7f", "#ff0000", "#00ff00", "#ffff00", "#5c5cff", "#ff00ff", "#00ffff", "#ffffff"}

// palette is colour n of the 256-colour palette as "#rrggbb".
func palette(n int) string {
	switch {
	case n < 16:
		return base16[n]
	case n < 232:
		n -= 16
		level := func(v int) int {
			if v == 0 {
				return 0
			}
			return 55 + 40*v
		}
		return fmt.Sprintf("#%02x%02x%02x", level(n/36), level(n/6%6), level(n%6))
	}
	g := 8 + 10*(n-232)
	return fmt.Sprintf("#%02x%02x%02x", g, g, g)
}
