package agent

import (
	"fmt"
	"strings"
)

// Hunk is one hunk of a unified diff: where it starts in the old and new
// file, how many lines it spans in each, and its lines (" ", "-" or "+"
// first).
type Hunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// UnifiedDiff writes the diff of one file from its hunks: "--- a/old",
// "+++ b/new" (/dev/null for a file created or deleted), then each hunk
// under its "@@ -l,s +l,s @@" line.
func UnifiedDiff(oldPath, newPath string, hunks []Hunk) string {
	var b strings.Builder
	header(&b, oldPath, newPath)
	for _, h := range hunks {
		fmt.Fprintf(&b, "@@ -%s +%s @@\n", span(h.OldStart, h.OldLines), span(h.NewStart, h.NewLines))
		for _, l := range h.Lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// DiffOfHunks puts the "---"/"+++" header on a diff body that starts at
// its first "@@" line (Codex records an update so).
func DiffOfHunks(oldPath, newPath, body string) string {
	var b strings.Builder
	header(&b, oldPath, newPath)
	b.WriteString(body)
	if body != "" && !strings.HasSuffix(body, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

// CreatedDiff is the diff of a file created with content; DeletedDiff of
// one deleted that held content.
func CreatedDiff(path, content string) string {
	return UnifiedDiff("", path, []Hunk{wholeHunk(content, '+')})
}

func DeletedDiff(path, content string) string {
	return UnifiedDiff(path, "", []Hunk{wholeHunk(content, '-')})
}

func wholeHunk(content string, sign byte) Hunk {
	var h Hunk
	if content == "" {
		return h
	}
	noEOL := !strings.HasSuffix(content, "\n")
	for l := range strings.SplitSeq(strings.TrimSuffix(content, "\n"), "\n") {
		h.Lines = append(h.Lines, string(sign)+l)
	}
	n := len(h.Lines)
	if noEOL {
		h.Lines = append(h.Lines, `\ No newline at end of file`)
	}
	if sign == '+' {
		h.NewStart, h.NewLines = 1, n
	} else {
		h.OldStart, h.OldLines = 1, n
	}
	return h
}

func header(b *strings.Builder, oldPath, newPath string) {
	name := func(prefix, p string) string {
		if p == "" {
			return "/dev/null"
		}
		return prefix + strings.TrimPrefix(p, "/")
	}
	fmt.Fprintf(b, "--- %s\n+++ %s\n", name("a/", oldPath), name("b/", newPath))
}

// span is a hunk's range as a unified diff writes it: "l,s", or "l" for
// one line.
func span(start, lines int) string {
	if lines == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, lines)
}
