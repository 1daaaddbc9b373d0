package screen

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// Rows as Codex 0.169.0 drew them: a dim placeholder, then a typed line.
const codexRows = "\x1b[1m\u203a\x1b[0m\x1b[39m\x1b[49m \x1b[2mAsk Codex to do anything\x1b[0m\n" +
	"\x1b[1m\u203a \x1b[0m\x1b[39m\x1b[49mAsk Codex to do anything\n" +
	"  \x1b[38;5;246mgpt-fake default \u00b7 /tmp/p\x1b[39m\n" +
	"\x1b]0;title\x07plain\x1b[2;38;2;1;2;3mdim\x1b[22mlit\n\n\n"

func TestParseKeepsDimness(t *testing.T) {
	c := Parse(codexRows)
	want := []string{"\u203a Ask Codex to do anything", "\u203a Ask Codex to do anything", "  gpt-fake default \u00b7 /tmp/p", "plaindimlit", "", ""}
	if got := c.Text(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("text:\n%q\nwant\n%q", got, want)
	}
	from := len("\u203a ")
	if !c.Lines[0].Dim(from) {
		t.Error("placeholder row: not dim")
	}
	if c.Lines[1].Dim(from) {
		t.Error("typed row: dim")
	}
	if c.Lines[2].Dim(0) {
		t.Error("coloured row: dim")
	}
	if got := c.Lines[3].dim; len(got) != 11 || got[4] || !got[5] || !got[7] || got[8] {
		t.Errorf("mixed row dims %v: want only \"dim\" dim", got)
	}
	if !(Line{Text: "ab", dim: []bool{false, true}}).Dim(1) {
		t.Error("tail of a row: not dim")
	}
	if (Line{Text: "   "}).Dim(0) {
		t.Error("blank row counts as dim placeholder")
	}
	if got := c.Bottom(); got != 4 {
		t.Errorf("Bottom = %d, want 4", got)
	}
}

func TestStripMatchesPlainCapture(t *testing.T) {
	got := Strip(codexRows)
	want := "\u203a Ask Codex to do anything\n\u203a Ask Codex to do anything\n  gpt-fake default \u00b7 /tmp/p\nplaindimlit\n\n\n"
	if got != want {
		t.Fatalf("Strip:\n%q\nwant\n%q", got, want)
	}
}

func TestRules(t *testing.T) {
	cases := []struct {
		s    string
		want bool
	}{
		{strings.Repeat("─", 40), true},
		{"  " + strings.Repeat("─", 12) + "  ", true},
		{strings.Repeat("─", 5), false},
		{strings.Repeat("─", 20) + "x", false},
		{strings.Repeat("╌", 20), false},
		{"", false},
	}
	for _, c := range cases {
		if got := IsRule(c.s, '─', 10); got != c.want {
			t.Errorf("IsRule(%q) = %v", c.s, got)
		}
	}
}

func TestFingerprint(t *testing.T) {
	r := Region{Lines: []string{"Do you want to proceed?", "❯ 1. Yes   "}}
	fp := Fingerprint("term_1/claude-2.1.328/approval", r)
	if !strings.HasPrefix(fp, "sha256:") || len(fp) != len("sha256:")+64 {
		t.Fatalf("fingerprint %q", fp)
	}
	same := Region{Start: 9, End: 11, Lines: []string{"Do you want to proceed?", "❯ 1. Yes"}}
	if Fingerprint("term_1/claude-2.1.328/approval", same) != fp {
		t.Error("trailing spaces or position changed the fingerprint")
	}
	changed := Region{Lines: []string{"Do you want to proceed?", "❯ 1. Yes!"}}
	if Fingerprint("term_1/claude-2.1.328/approval", changed) == fp {
		t.Error("changed text kept the fingerprint")
	}
	if Fingerprint("term_2/claude-2.1.328/approval", r) == fp {
		t.Error("another identity kept the fingerprint")
	}
}

func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"key sk-ant-api03-AKKFAKEKEY000000000000000000-AKKFAKEAA here", "key [REDACTED] here"},
		{"export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234", "export OPENAI_API_KEY=[REDACTED]"},
		{"aws AKIAAKKFAKE000000000 id", "aws [REDACTED] id"},
		// Cut short, as a screen read while a person types it shows it.
		{"typed AKIAAKKFAKE000", "typed [REDACTED]"},
		{"ASIA is a continent; AKIA alone is a word", "ASIA is a continent; AKIA alone is a word"},
		{"Authorization: Bearer eyJhbGciOi.J9abc-def_ghi", "Authorization: [REDACTED]"},
		{"secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "secret [REDACTED]"},
		{"token ghp_0123456789abcdefghijABCDEFGHIJ", "token [REDACTED]"},
		{"password: hunter22hunter", "password: [REDACTED]"},
		{"-----BEGIN RSA PRIVATE KEY-----", "[REDACTED]"},
		{"ANTHROPIC_API_KEY: sk-ant-...-fake-key-0000000000", "ANTHROPIC_API_KEY: [REDACTED]"},
		{"run touch approved-marker in /tmp/sk-x", "run touch approved-marker in /tmp/sk-x"},
		{"task-list and desk-lamp", "task-list and desk-lamp"},
	}
	for _, c := range cases {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	r := Region{Lines: []string{"one", "two sk-ant-api03-0123456789abcdefXYZ  ", "three", "  ", ""}}
	// A secret that ends a row takes the next row's first word with it:
	// without the pane's width that looks just like a wrapped secret, and
	// AKK errs toward hiding.
	if got, want := Excerpt(r, 2), "two [REDACTED]\n[REDACTED]"; got != want {
		t.Fatalf("Excerpt = %q, want %q", got, want)
	}
	if got := Excerpt(r, 0); strings.Count(got, "\n") != 2 {
		t.Fatalf("Excerpt unbounded = %q", got)
	}
}

// Claude Code marks the active tab of its questionnaire header with a
// background colour.
func TestParseKeepsBackground(t *testing.T) {
	c := Parse("\u2190 \x1b[38;5;16m\x1b[48;5;153m \u2610 Color \x1b[39m\x1b[49m \u2610 Size\n")
	l := c.Lines[0]
	at := strings.Index(l.Text, "Color")
	if !l.Background(at) {
		t.Error("active tab: no background")
	}
	if l.Background(strings.Index(l.Text, "Size")) || l.Background(0) {
		t.Error("plain text: background")
	}
}

// Every secret shape AKK knows, in the middle of other text.
func TestRedactEveryShape(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"akk operator token", "cat gave akk_op_Zm9vYmFyYmF6cXV4cXV1eGZvb2Jhcg-_x ok", "cat gave [REDACTED] ok"},
		{"akk host token", "akk_h_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "[REDACTED]"},
		{"aws secret key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [REDACTED]"},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[REDACTED]"},
		{"gitlab", "glpat-abcdefghij0123456789", "[REDACTED]"},
		{"stripe live", "sk_live_abcdefghijklmnop1234", "[REDACTED]"},
		{"stripe restricted", "rk_test_abcdefghijklmnop1234", "[REDACTED]"},
		{"google", "key AIzaSyA-abcdefghijklmnopqrstuvwxyz012345 end", "key [REDACTED] end"},
		{"npm", "npm_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED]"},
		{"hugging face", "hf_abcdefghijklmnopqrstuvwxyzABCDEF", "[REDACTED]"},
		{"jwt", "got eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.SflKxwRJSMeKKF2QT4fwpMeJf36 done", "got [REDACTED] done"},
		{"url password", "git clone https://deploy:s3cr3tpassw0rd@example.com/repo.git", "git clone https://deploy:[REDACTED]@example.com/repo.git"},
		{"url password keeps the host", "psql postgres://user:pw@db.internal:5432/app", "psql postgres://user:[REDACTED]@db.internal:5432/app"},
		{"password flag", "mysql --password hunter2hunter2 -h db", "mysql --password [REDACTED] -h db"},
		{"token flag", "gh auth login --token abcdef0123456789abcdef", "gh auth login --token [REDACTED]"},
		{"short key flag", "tool --api-key k3y --verbose", "tool --api-key [REDACTED] --verbose"},
		{"mysql -p", "mysql -u root -p s3cr3t mydb", "mysql -u root -p [REDACTED] mydb"},
		{"mysql -p joined", "mysql -uroot -ps3cr3t mydb", "mysql -uroot -p[REDACTED] mydb"},
		{"basic auth header", `curl -H "Authorization: Basic dXNlcjpwYXNzd29yZA==" x`, `curl -H "Authorization: Basic [REDACTED]" x`},
		{"curl -u", "curl -u admin:hunter2 https://api.example.com", "curl -u admin:[REDACTED] https://api.example.com"},
		{"curl --user", "curl -s --user 'admin:p4ss' https://api.example.com", "curl -s --user 'admin:[REDACTED]' https://api.example.com"},
		{"azure account key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4+/Zm9vYmFy==;EndpointSuffix=core.windows.net",
			"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED];EndpointSuffix=core.windows.net"},
		{"sendgrid", "key 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 end", "key [REDACTED] end"},
		{"slack webhook", "post to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX now", "post to https://hooks.slack.com/services/[REDACTED] now"},
		{"bare aws secret key", "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "[REDACTED] [REDACTED]"},
		{"bare aws secret key first", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\nid AKIAIOSFODNN7EXAMPLE", "[REDACTED]\nid [REDACTED]"},
		{"short password", "password: hunter2", "password: [REDACTED]"},
		{"quoted password with spaces", `password: "correct horse battery"`, `password: "[REDACTED]"`},
		{"a commit id near an access key stays", "AKIAIOSFODNN7EXAMPLE in 0123456789abcdef0123456789abcdef01234567", "[REDACTED] in 0123456789abcdef0123456789abcdef01234567"},
		{"40 characters alone stay", "ref wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "ref wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		{"token counts stay", "max_tokens: 1000 and token_count=42", "max_tokens: 1000 and token_count=42"},
		{"comparisons stay", "if password == nil { return }", "if password == nil { return }"},
		{"flags in prose stay", "pass the --token flag, or the --password option", "pass the --token flag, or the --password option"},
		{"token file flag stays", "gh --token-file /etc/gh/token.txt", "gh --token-file /etc/gh/token.txt"},
		{"other -u and -p stay", "sort -u names.txt; docker run -u 1000:1000 img; psql -p 5432; git push -u origin main", "sort -u names.txt; docker run -u 1000:1000 img; psql -p 5432; git push -u origin main"},
		{"shell PWD stays", "PWD=/home/me/project", "PWD=/home/me/project"},
		{"password prompt stays", "Password: Enter it below", "Password: Enter it below"},
		{"quoted json secret", `{"client_secret": "abcdefgh12345678", "name": "x"}`, `{"client_secret": "[REDACTED]", "name": "x"}`},
		{"private key block", "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nafter", "key:\n[REDACTED]\nafter"},
		{"private key cut off", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "[REDACTED]"},
		{"plain words stay", "the token bucket and a secret garden", "the token bucket and a secret garden"},
		{"addresses stay", "http://127.0.0.1:7788/v1/health", "http://127.0.0.1:7788/v1/health"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("%s: Redact(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// A secret the terminal wrapped across two rows goes from both; a private
// key over several rows goes whole; row count is kept.
func TestRedactRows(t *testing.T) {
	rows := []string{"key is sk-ant-api03-AKKFAKE0000", "  11112222333344445555 and more", "plain row"}
	got := RedactRows(rows)
	if len(got) != 3 || strings.Contains(strings.Join(got, ""), "AKKFAKE") || strings.Contains(strings.Join(got, ""), "1111222233334444") ||
		!strings.HasPrefix(got[0], "key is ") || !strings.HasSuffix(got[1], " and more") || got[2] != "plain row" {
		t.Fatalf("wrapped: %q", got)
	}
	aws := []string{"aws_access_key_id AKIAIOSFODNN7EXAMPLE", "secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "done"}
	if got = RedactRows(aws); !slices.Equal(got, []string{"aws_access_key_id [REDACTED]", "secret [REDACTED]", "done"}) {
		t.Fatalf("aws key pair: %q", got)
	}
	key := []string{"cat id_rsa", "-----BEGIN RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA1234567890abcdef", "abcdefABCDEF0123456789", "-----END RSA PRIVATE KEY-----", "$ "}
	got = RedactRows(key)
	if len(got) != len(key) || strings.Contains(strings.Join(got, ""), "MIIE") || strings.Contains(strings.Join(got, ""), "abcdefABCDEF") || got[0] != "cat id_rsa" || got[5] != "$ " {
		t.Fatalf("key block: %q", got)
	}
}

// secretShapes put a secret where each known shape carries one.
var secretShapes = []func(secret string) string{
	func(s string) string { return "password: " + s },
	func(s string) string { return `{"password": "` + s + `", "user": "x"}` },
	func(s string) string { return `password: "` + s + ` horse battery"` },
	func(s string) string { return "export API_KEY=" + s },
	func(s string) string { return "mysql --password " + s + " -h db" },
	func(s string) string { return "gh auth login --token " + s },
	func(s string) string { return "mysql -u root -p " + s + " app" },
	func(s string) string { return "mysql -uroot -p" + s },
	func(s string) string { return `curl -H "Authorization: Basic ` + s + `"` },
	func(s string) string { return "curl -u admin:" + s + " https://x.example" },
	func(s string) string { return "AccountName=a;AccountKey=" + s + "==;EndpointSuffix=core.windows.net" },
	func(s string) string { return "https://hooks.slack.com/services/T0/B0/" + s },
	func(s string) string { return "postgres://user:" + s + "@db.internal/app" },
	func(s string) string { return "Authorization: Bearer " + s },
	func(s string) string { return "AKIAIOSFODNN7EXAMPLE " + (s + strings.Repeat("Ab9", 14))[:40] },
}

// FuzzRedactSecrets: redacting twice is redacting once; the output grows by
// at most the marker per redaction; and a secret planted in a known shape
// never survives, in Redact or in RedactRows.
func FuzzRedactSecrets(f *testing.F) {
	for i, seed := range []string{"hunter2hunter2", "s3cr3t", "abc", "Zm9vYmFy+/Zm9v", "correct horse", "[REDACTED]", "xoxb-1-2"} {
		f.Add("password: hunter2 and --token "+seed+" @host", uint8(i), seed)
	}
	f.Add(`password: "a" b" c"`, uint8(2), "q")
	f.Add("curl -u a:b https://u:p@h x", uint8(9), "zz")
	f.Fuzz(func(t *testing.T, text string, shape uint8, raw string) {
		once := Redact(text)
		if twice := Redact(once); twice != once {
			t.Fatalf("Redact(%q) = %q, but redacted again %q", text, once, twice)
		}
		if n := strings.Count(once, Redacted); len(once) > len(text)+n*len(Redacted) {
			t.Fatalf("Redact(%q) = %q: %d bytes from %d with %d redactions", text, once, len(once), len(text), n)
		}
		// The secret: letters and digits, with a digit and an upper-case
		// letter, at least 8 long, as generated secrets are.
		secret := strings.Map(func(r rune) rune {
			if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return r
			}
			return -1
		}, raw)
		secret = "Q" + secret[:min(len(secret), 30)] + "7xY"
		for len(secret) < 8 {
			secret += "k"
		}
		in := secretShapes[int(shape)%len(secretShapes)](secret)
		if out := Redact(in); strings.Contains(out, secret) {
			t.Fatalf("Redact(%q) = %q keeps the secret", in, out)
		}
		if out := strings.Join(RedactRows(strings.Split(in, "\n")), "\n"); strings.Contains(out, secret) {
			t.Fatalf("RedactRows(%q) = %q keeps the secret", in, out)
		}
	})
}
