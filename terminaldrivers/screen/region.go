package screen

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// Region is a run of rows a profile isolated from the bottom of a capture
// (an approval prompt, a composer, a dialog). Start and End index the
// capture's rows, End exclusive.
type Region struct {
	Start, End int
	Lines      []string
}

// Slice returns the rows [start, end) of c as a Region.
func (c Capture) Slice(start, end int) Region {
	if start < 0 {
		start = 0
	}
	if end > len(c.Lines) {
		end = len(c.Lines)
	}
	r := Region{Start: start, End: end}
	for i := start; i < end; i++ {
		r.Lines = append(r.Lines, c.Lines[i].Text)
	}
	return r
}

// Contains reports whether any row of r contains s.
func (r Region) Contains(s string) bool {
	for _, l := range r.Lines {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// Fingerprint is the sha256 of the exact, unredacted region text bound to an
// identity (terminal id, profile, prompt kind): the same prompt in another
// terminal or under another profile has another fingerprint, and any change
// inside the region changes it.
func Fingerprint(identity string, r Region) string {
	h := sha256.New()
	h.Write([]byte(identity))
	h.Write([]byte{0})
	for _, l := range r.Lines {
		h.Write([]byte(strings.TrimRight(l, " ")))
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Redacted is what a secret-looking string is replaced with.
const Redacted = "[REDACTED]"

var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`sk-[A-Za-z0-9][A-Za-z0-9_\-]{15,}`),                              // OpenAI / Anthropic API keys
	regexp.MustCompile(`(?:AKIA|ASIA)[0-9A-Z]{16}`),                                      // AWS access key ids
	regexp.MustCompile(`(?i)bearer\s+[A-Za-z0-9\-._~+/]{8,}=*`),                          // bearer tokens
	regexp.MustCompile(`whsec_[A-Za-z0-9+/=]{8,}`),                                       // Standard Webhooks secrets
	regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{20,}`),                                     // GitHub tokens
	regexp.MustCompile(`xox[abprs]-[A-Za-z0-9\-]{10,}`),                                  // Slack tokens
	regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`),                             // PEM private keys
	regexp.MustCompile(`(?i)(api[_-]?key|secret|password|token)(\s*[:=]\s*)[^\s'"]{8,}`), // key=value
}

// Redact replaces secret-looking strings in s. It is for excerpts shown to
// people and hosts; fingerprints are always taken over the unredacted text.
func Redact(s string) string {
	for i, re := range secretPatterns {
		if i == len(secretPatterns)-1 {
			s = re.ReplaceAllString(s, "${1}${2}"+Redacted)
			continue
		}
		s = re.ReplaceAllString(s, Redacted)
	}
	return s
}

// Excerpt returns the region's rows, redacted, trailing blanks removed, at
// most maxRows of them from the bottom.
func Excerpt(r Region, maxRows int) string {
	lines := r.Lines
	for len(lines) > 0 && Blank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	if maxRows > 0 && len(lines) > maxRows {
		lines = lines[len(lines)-maxRows:]
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = Redact(strings.TrimRight(l, " "))
	}
	return strings.Join(out, "\n")
}
