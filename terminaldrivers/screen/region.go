package screen

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
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

// secretPatterns are the shapes of secrets. Each match is replaced with
// Redacted, except that a group named "keep" is kept before it (the name
// in name=value, the scheme and user of a URL) and one named "tail" after
// it (the "@" before a URL's host, a closing quote).
var secretPatterns = []*regexp.Regexp{
	// PEM private keys: the whole block, to its END line or the end of text.
	regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`),
	regexp.MustCompile(`\bakk_(?:op|h)_[A-Za-z0-9_\-]{16,}`),                                 // AKK's own operator and host tokens
	regexp.MustCompile(`sk-[A-Za-z0-9][A-Za-z0-9_\-]{15,}`),                                  // OpenAI / Anthropic API keys
	regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{4,16}\b`),                                    // AWS access key ids, also cut short (typed, or at a pane's edge)
	regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`),                             // Stripe keys
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`),                                     // GitHub fine-grained tokens
	regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`),                                       // GitHub tokens
	regexp.MustCompile(`\bglpat-[A-Za-z0-9_\-]{20,}`),                                        // GitLab tokens
	regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35,}`),                                          // Google API keys
	regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}\b`),                                            // npm tokens
	regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`),                                              // Hugging Face tokens
	regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9\-]{10,}`),                                    // Slack tokens
	regexp.MustCompile(`\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}`),                     // SendGrid keys
	regexp.MustCompile(`whsec_[A-Za-z0-9+/=]{8,}`),                                           // Standard Webhooks secrets
	regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`), // JWTs
	regexp.MustCompile(`(?i)bearer\s+[A-Za-z0-9\-._~+/]{8,}=*`),                              // bearer tokens
	// Slack webhook URLs: the path after services/ is the secret.
	regexp.MustCompile(`(?P<keep>\bhooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/\-]+`),
	// Basic and token credentials in an Authorization header.
	regexp.MustCompile(`(?i)(?P<keep>\bauthorization["']?\s*[:=]\s*["']?(?:basic|token)[ \t]+)[A-Za-z0-9+/=._~\-]+`),
	// curl's user:password.
	regexp.MustCompile(`(?P<keep>\bcurl\b[^\n]*?[ \t](?:-u|--user)[ \t]*["']?[^\s:'"]+:)[^\s'"]+`),
	// A MySQL (or sshpass) password after -p, joined or not.
	regexp.MustCompile(`(?P<keep>\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlsh|mariadb|sshpass)\b[^\n]*?[ \t]-p[ \t]*["']?)[^\s'"\-][^\s'"]*`),
	// Azure storage and service bus connection strings.
	regexp.MustCompile(`(?i)(?P<keep>\b(?:AccountKey|SharedAccessKey)=)[^;\s'"]+`),
	// A password in a URL: scheme://user:PASSWORD@host.
	regexp.MustCompile(`(?P<keep>\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:)[^\s@/]+(?P<tail>@)`),
	// A secret flag and its value after a space: --password VALUE,
	// --auth-token VALUE. The flag's name ends with the secret word (so
	// --token-file PATH stays); the value is 16 or more characters, or
	// holds a digit or a symbol (so "the --token flag" stays).
	regexp.MustCompile(`(?i)(?P<keep>(?:^|[\s"'=(])--?(?:[a-z0-9]+[_\-])*(?:password|passwd|passphrase|token|secret|api[_\-]?key|access[_\-]?key|credentials?)[ \t]+["']?)` + flagValue),
	// A quoted password or secret with spaces in it.
	regexp.MustCompile(`(?i)(?P<keep>\b[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|secret)[A-Za-z0-9_.\-]*["']?\s*[:=]\s*["'])[^"'\n]*[ \t][^"'\n]*(?P<tail>["'])`),
	// A short password: under 8 characters, holding a digit or a symbol.
	regexp.MustCompile(`(?i)(?P<keep>\b[A-Za-z0-9_.\-]*(?:password|passwd|passphrase)[A-Za-z0-9_.\-]*["']?\s*[:=]\s*["']?)` + shortValue),
	// name=value and "name": "value" where the name says secret.
	regexp.MustCompile(`(?i)(?P<keep>[A-Za-z0-9_.\-]*(?:api[_\-]?key|secret|password|passwd|token|credential|private[_\-]?key)[A-Za-z0-9_.\-]*["']?\s*[:=]\s*["']?)[^\s'",}]{8,}`),
}

const (
	// flagValue: a word not starting with "-" or "=", 16 or more long or
	// holding a digit or a symbol.
	flagValue = `(?:[^\s'"\-=][^\s'"]{15,}|[0-9!@#$%^&*+/~_][^\s'"]*|[^\s'"\-=][^\s'"]*[0-9!@#$%^&*+=/~_][^\s'"]*)`
	// shortValue: a value not starting with "=" that holds a digit or a
	// symbol (a plain word after "password:" is prose).
	shortValue = `(?:[0-9!@#$%^&*+/~_][^\s'",}]*|[^\s'",}=][^\s'",}]*[0-9!@#$%^&*+=/~_][^\s'",}]*)`
)

// Redact replaces secret-looking strings in s. It is for excerpts shown to
// people and hosts; fingerprints are always taken over the unredacted text.
func Redact(s string) string {
	s = redactAWSSecrets(s)
	for _, re := range secretPatterns {
		repl := Redacted
		if re.SubexpIndex("keep") >= 0 {
			repl = "${keep}" + repl
		}
		if re.SubexpIndex("tail") >= 0 {
			repl += "${tail}"
		}
		s = re.ReplaceAllString(s, repl)
	}
	return s
}

var (
	awsKeyID    = regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)
	base64Run   = regexp.MustCompile(`[A-Za-z0-9/+]+`)
	awsNear     = 200 // bytes between an access key id and its secret key
	hasUpper    = regexp.MustCompile(`[A-Z]`)
	hasLower    = regexp.MustCompile(`[a-z]`)
	hasDigitSym = regexp.MustCompile(`[0-9/+]`)
)

// redactAWSSecrets replaces a bare AWS secret access key: 40 characters of
// base64 (upper and lower case, and a digit, "/" or "+"; so no commit id)
// within awsNear bytes of an access key id.
func redactAWSSecrets(s string) string {
	ids := awsKeyID.FindAllStringIndex(s, -1)
	if ids == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range base64Run.FindAllStringIndex(s, -1) {
		run := s[m[0]:m[1]]
		if len(run) != 40 || !hasUpper.MatchString(run) || !hasLower.MatchString(run) || !hasDigitSym.MatchString(run) {
			continue
		}
		near := false
		for _, id := range ids {
			if m[0] < id[1]+awsNear && id[0] < m[1]+awsNear {
				near = true
				break
			}
		}
		if near {
			b.WriteString(s[last:m[0]])
			b.WriteString(Redacted)
			last = m[1]
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// RedactRows redacts rows of a screen, also where a secret was wrapped
// across two rows (the parts on both rows go) and inside a private key
// block spread over many rows. It keeps one row per row. Without the
// pane's width a secret that ends a row and a word that starts the next
// look like one wrapped secret: both go (AKK errs toward hiding).
func RedactRows(rows []string) []string {
	// An AWS secret key may sit a row away from its access key id.
	if joined := strings.Join(rows, "\n"); awsKeyID.MatchString(joined) {
		rows = strings.Split(redactAWSSecrets(joined), "\n")
	}
	out := redactBlocks(rows)
	cut := make([]int, len(out))  // redacted from this byte to the end; -1: none
	head := make([]int, len(out)) // redacted from its indent up to this byte; 0: none
	for i := range cut {
		cut[i] = -1
	}
	for i := 0; i+1 < len(out); i++ {
		a, b := out[i], out[i+1]
		bt := strings.TrimLeft(b, " ")
		indent := len(b) - len(bt)
		joined := a + bt
		for _, re := range secretPatterns {
			keep, tail := re.SubexpIndex("keep"), re.SubexpIndex("tail")
			for _, m := range re.FindAllStringSubmatchIndex(joined, -1) {
				s, e := m[0], m[1]
				if keep >= 0 && m[2*keep+1] > s {
					s = m[2*keep+1]
				}
				if tail >= 0 && m[2*tail] >= s {
					e = m[2*tail]
				}
				if s < len(a) && e > len(a) {
					if cut[i] < 0 || s < cut[i] {
						cut[i] = s
					}
					head[i+1] = max(head[i+1], indent+e-len(a))
				}
			}
		}
	}
	for i, r := range out {
		indent := len(r) - len(strings.TrimLeft(r, " "))
		switch {
		case cut[i] >= 0 && head[i] > 0 && cut[i] <= head[i]:
			r = r[:indent] + Redacted
		case cut[i] >= 0 && head[i] > 0:
			r = r[:indent] + Redacted + r[head[i]:cut[i]] + Redacted
		case cut[i] >= 0:
			r = r[:cut[i]] + Redacted
		case head[i] > 0:
			r = r[:indent] + Redacted + r[head[i]:]
		}
		out[i] = Redact(r)
	}
	return out
}

var (
	blockStart = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----`)
	blockEnd   = regexp.MustCompile(`-----END [A-Z0-9 ]*PRIVATE KEY-----`)
)

// redactBlocks replaces every row of a private key block.
func redactBlocks(rows []string) []string {
	out := make([]string, len(rows))
	in := false
	for i, r := range rows {
		switch {
		case !in && blockStart.MatchString(r):
			in = !blockEnd.MatchString(r[blockStart.FindStringIndex(r)[1]:])
			out[i] = r[:blockStart.FindStringIndex(r)[0]] + Redacted
		case in:
			out[i] = Redacted
			in = !blockEnd.MatchString(r)
		default:
			out[i] = r
		}
	}
	return out
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
	trimmed := make([]string, len(lines))
	for i, l := range lines {
		trimmed[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(RedactRows(trimmed), "\n")
}

// CutGraphemes keeps the longest prefix of s of whole grapheme clusters
// that is at most limit code points; cut says whether anything was left
// out.
func CutGraphemes(s string, limit int) (string, bool) {
	if utf8.RuneCountInString(s) <= limit {
		return s, false
	}
	n, end := 0, 0
	g := uniseg.NewGraphemes(s)
	for g.Next() {
		c := utf8.RuneCountInString(g.Str())
		if n+c > limit {
			break
		}
		n += c
		_, end = g.Positions()
	}
	return s[:end], true
}
