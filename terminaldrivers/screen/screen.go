// Package screen holds what every agent profile needs from a captured pane:
// escape stripping, line styles, the bottom-most region, a fingerprint of a
// region and redaction of secret-looking strings in excerpts.
package screen

import (
	"strings"
	"unicode/utf8"
)

// Line is one screen row: its text and, per rune, whether it was drawn dim
// (SGR 2). Agents draw placeholders dim, so dimness tells an empty composer
// from typed text that reads the same.
type Line struct {
	Text string
	dim  []bool
	// bg: per rune, whether a background colour was set (SGR 4x, 10x,
	// 48): how a TUI marks the active tab of a row of tabs.
	bg []bool
}

// Background reports whether the rune at byte offset at of Text was drawn
// on a background colour.
func (l Line) Background(at int) bool {
	i := 0
	for off := range l.Text {
		if off == at {
			return i < len(l.bg) && l.bg[i]
		}
		i++
	}
	return false
}

// Dim reports whether every non-blank rune of s[from:] is dim. from is a
// byte offset into Text.
func (l Line) Dim(from int) bool {
	i, seen := 0, false
	for off, r := range l.Text {
		if off >= from && r != ' ' && r != '\u00a0' {
			if i >= len(l.dim) || !l.dim[i] {
				return false
			}
			seen = true
		}
		i++
	}
	return seen
}

// Capture is one capture of a pane, taken with escapes (tmux capture-pane
// -e), and the pane's title when known: some agents show activity there only.
type Capture struct {
	Lines []Line
	Title string
}

// Parse reads a capture taken with escape sequences. Only SGR dim state is
// kept; every other escape sequence is dropped.
func Parse(ansi string) Capture {
	rows := strings.Split(strings.TrimSuffix(ansi, "\n"), "\n")
	out := make([]Line, 0, len(rows))
	dim, bg := false, false
	for _, row := range rows {
		var text strings.Builder
		var dims, bgs []bool
		for i := 0; i < len(row); {
			if row[i] == 0x1b {
				n, params, final := escape(row[i:])
				if final == 'm' {
					dim = applySGR(dim, params)
					bg = applyBackground(bg, params)
				}
				i += n
				continue
			}
			r, size := utf8.DecodeRuneInString(row[i:])
			if r == '\r' {
				i += size
				continue
			}
			text.WriteRune(r)
			dims = append(dims, dim)
			bgs = append(bgs, bg)
			i += size
		}
		out = append(out, Line{Text: text.String(), dim: dims, bg: bgs})
	}
	return Capture{Lines: out}
}

// Strip removes escape sequences from a capture, leaving what capture-pane
// without -e prints.
func Strip(ansi string) string {
	var b strings.Builder
	for i := 0; i < len(ansi); {
		if ansi[i] == 0x1b {
			n, _, _ := escape(ansi[i:])
			i += n
			continue
		}
		b.WriteByte(ansi[i])
		i++
	}
	return b.String()
}

// escape measures the escape sequence at the start of s and returns its
// length, its parameters (for CSI) and its final byte.
func escape(s string) (n int, params string, final byte) {
	if len(s) < 2 {
		return len(s), "", 0
	}
	switch s[1] {
	case '[': // CSI: parameters and intermediates, then a final byte 0x40-0x7e
		for j := 2; j < len(s); j++ {
			if s[j] >= 0x40 && s[j] <= 0x7e {
				return j + 1, s[2:j], s[j]
			}
		}
		return len(s), "", 0
	case ']', 'P', '_', '^': // OSC, DCS, APC, PM: until BEL or ST
		for j := 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1, "", 0
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2, "", 0
			}
		}
		return len(s), "", 0
	default:
		return 2, "", s[1]
	}
}

// applySGR returns the dim state after one SGR sequence.
func applySGR(dim bool, params string) bool {
	if params == "" {
		return false
	}
	parts := strings.Split(params, ";")
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "0", "":
			dim = false
		case "2":
			dim = true
		case "22":
			dim = false
		case "38", "48", "58": // extended colour: skip its arguments
			if i+1 < len(parts) && parts[i+1] == "5" {
				i += 2
			} else if i+1 < len(parts) && parts[i+1] == "2" {
				i += 4
			}
		}
	}
	return dim
}

// applyBackground returns whether a background colour is set after one SGR
// sequence.
func applyBackground(bg bool, params string) bool {
	if params == "" {
		return false
	}
	parts := strings.Split(params, ";")
	for i := 0; i < len(parts); i++ {
		switch p := parts[i]; {
		case p == "0" || p == "" || p == "49":
			bg = false
		case p == "48":
			bg = true
			if i+1 < len(parts) && parts[i+1] == "5" {
				i += 2
			} else if i+1 < len(parts) && parts[i+1] == "2" {
				i += 4
			}
		case p == "38" || p == "58":
			if i+1 < len(parts) && parts[i+1] == "5" {
				i += 2
			} else if i+1 < len(parts) && parts[i+1] == "2" {
				i += 4
			}
		case len(p) == 2 && p[0] == '4' && p[1] >= '0' && p[1] <= '7',
			len(p) == 3 && p[:2] == "10" && p[2] >= '0' && p[2] <= '7':
			bg = true
		}
	}
	return bg
}

// Text returns the capture's rows as plain text, one per line.
func (c Capture) Text() []string {
	out := make([]string, len(c.Lines))
	for i, l := range c.Lines {
		out[i] = l.Text
	}
	return out
}

// Bottom returns the index one past the last row that is not blank: the
// bottom of what the agent drew.
func (c Capture) Bottom() int {
	n := len(c.Lines)
	for n > 0 && Blank(c.Lines[n-1].Text) {
		n--
	}
	return n
}

// Blank reports whether s holds only spaces (including no-break spaces).
func Blank(s string) bool {
	return strings.TrimFunc(s, func(r rune) bool { return r == ' ' || r == '\u00a0' || r == '\t' }) == ""
}

// Trim trims spaces, including no-break spaces, from both ends of s.
func Trim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r == ' ' || r == '\u00a0' || r == '\t' })
}

// IsRule reports whether s is a horizontal rule drawn with r (at least
// min runes of r and nothing else but spaces).
func IsRule(s string, r rune, min int) bool {
	t := Trim(s)
	if utf8.RuneCountInString(t) < min {
		return false
	}
	for _, c := range t {
		if c != r {
			return false
		}
	}
	return true
}

// LastIndex returns the index of the last row in [from, to) for which match
// is true, or -1.
func (c Capture) LastIndex(from, to int, match func(string) bool) int {
	for i := to - 1; i >= from && i >= 0; i-- {
		if i < len(c.Lines) && match(c.Lines[i].Text) {
			return i
		}
	}
	return -1
}
