package screen

import (
	"regexp"
	"strings"
)

// DialogQuestionLimit bounds what DialogQuestion returns, in code points.
const DialogQuestionLimit = 200

var (
	optionLine    = regexp.MustCompile(`^\s*(?:[❯›>]\s*)?\d+\.\s|^\s*[❯›]\s`)
	separatorLine = regexp.MustCompile(`^\s*[─━═-]{10,}\s*$`)
	sentenceEnd   = regexp.MustCompile(`[.:!?]\s`)
)

// DialogQuestion is what a start-up dialog on screen asks, for a person
// who must answer it in the pane: the sentence that ends in the dialog's
// last question mark above its options, or else the dialog's first line.
// It is redacted and bounded; "" when the screen shows no options.
func DialogQuestion(lines []string) string {
	rows := RedactRows(lines)
	opt := -1
	for i, l := range rows {
		if optionLine.MatchString(l) {
			opt = i
			break
		}
	}
	if opt < 0 {
		return ""
	}
	start := 0
	for i := opt - 1; i >= 0; i-- {
		if separatorLine.MatchString(rows[i]) {
			start = i + 1
			break
		}
	}
	block := rows[start:opt]
	q := -1
	for i, l := range block {
		if strings.Contains(l, "?") {
			q = i
		}
	}
	if q < 0 {
		for _, l := range block {
			if t := strings.TrimSpace(l); t != "" {
				out, _ := CutGraphemes(t, DialogQuestionLimit)
				return out
			}
		}
		return ""
	}
	// The paragraph up to that line: wrapped rows joined back.
	first := q
	for first > 0 && !Blank(block[first-1]) && !endsSentence(block[first-1]) {
		first--
	}
	var parts []string
	for _, l := range block[first : q+1] {
		parts = append(parts, strings.TrimSpace(l))
	}
	text := strings.Join(parts, " ")
	text = text[:strings.LastIndex(text, "?")+1]
	// The sentence that question mark ends.
	begin := 0
	for _, m := range sentenceEnd.FindAllStringIndex(text, -1) {
		if m[1] < len(text) {
			begin = m[1]
		}
	}
	out, _ := CutGraphemes(strings.TrimSpace(text[begin:]), DialogQuestionLimit)
	return out
}

// endsSentence reports whether row ends with . : ! or ?.
func endsSentence(row string) bool {
	row = strings.TrimSpace(row)
	return row != "" && strings.ContainsAny(row[len(row)-1:], ".:!?")
}
