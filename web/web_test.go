package web

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestServiceWorkerKeepsTheWholeShell: the worker's list names every file
// of the page (a file it names that is not there would fail its install,
// one it misses would not open offline), and nothing under /v1/.
func TestServiceWorkerKeepsTheWholeShell(t *testing.T) {
	sw, err := files.ReadFile("ui/sw.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)const SHELL = \[(.*?)\];`).FindSubmatch(sw)
	if m == nil {
		t.Fatal("sw.js has no SHELL list")
	}
	listed := map[string]bool{}
	for _, q := range regexp.MustCompile(`"([^"]+)"`).FindAllSubmatch(m[1], -1) {
		listed[string(q[1])] = true
	}
	want := map[string]bool{"/": true}
	_ = fs.WalkDir(files, "ui", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == "ui/sw.js" || p == "ui/index.html" {
			return err
		}
		if strings.HasSuffix(p, "LICENSE") || strings.HasSuffix(p, "VENDOR") {
			return nil
		}
		want["/"+p] = true
		return nil
	})
	for p := range want {
		if !listed[p] {
			t.Errorf("sw.js does not keep %s", p)
		}
	}
	for p := range listed {
		if !want[p] {
			t.Errorf("sw.js keeps %s, which is not a file of the page", p)
		}
	}
}

// TestPagePolicy: the page, its files and the worker are served under the
// strict policy, whose only inline script is the import map (by its hash).
func TestPagePolicy(t *testing.T) {
	h := Handler()
	for path, ctype := range map[string]string{"/": "text/html", "/sw.js": "text/javascript", "/ui/app.js": "text/javascript",
		"/ui/vendor/preact/preact.mjs": "text/javascript", "/ui/manifest.webmanifest": "application/manifest+json"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != 200 {
			t.Errorf("%s: %d", path, rec.Code)
			continue
		}
		if got := rec.Header().Get("Content-Type"); !strings.HasPrefix(got, ctype) {
			t.Errorf("%s: Content-Type %q, want %s", path, got, ctype)
		}
		csp := rec.Header().Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self' 'sha256-") || strings.Contains(csp, "unsafe") {
			t.Errorf("%s: policy %q", path, csp)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ui/vendor/", nil))
	if rec.Code != 404 {
		t.Errorf("a folder: %d, want 404", rec.Code)
	}
}
