// Package web is the dashboard: static HTML, CSS and JavaScript modules
// with no build step, embedded in akkd and served at / and /ui/ (the
// service worker at /sw.js, so that it may serve the page). Its views are
// Preact components written with htm, both vendored unchanged from their
// npm packages under ui/vendor (see ui/vendor/VENDOR). It holds no
// authority of its own: the page signs in with POST /v1/ui/session and
// then calls the same REST routes any host calls.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"mime"
	"net/http"
	"strings"
)

//go:embed ui
var files embed.FS

func init() {
	_ = mime.AddExtensionType(".mjs", "text/javascript; charset=utf-8")
	_ = mime.AddExtensionType(".webmanifest", "application/manifest+json")
}

// importMapHash is the CSP source of the page's one inline script, its
// import map (the vendored hooks module imports "preact" by name): no
// other inline script runs.
var importMapHash = func() string {
	page, _ := files.ReadFile("ui/index.html")
	_, rest, ok := bytes.Cut(page, []byte(`<script type="importmap">`))
	body, _, ok2 := bytes.Cut(rest, []byte(`</script>`))
	if !ok || !ok2 {
		return ""
	}
	sum := sha256.Sum256(body)
	return " 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// CSP is the dashboard's Content-Security-Policy.
var CSP = "default-src 'self'; script-src 'self'" + importMapHash + "; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; worker-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// Handler serves the dashboard: / is the page, /sw.js its service worker,
// /ui/… its files.
func Handler() http.Handler {
	sub, _ := fs.Sub(files, "ui")
	static := http.StripPrefix("/ui/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		switch r.URL.Path {
		case "/", "/sw.js":
			name, ctype := "ui/index.html", "text/html; charset=utf-8"
			if r.URL.Path == "/sw.js" {
				name, ctype = "ui/sw.js", "text/javascript; charset=utf-8"
			}
			// Always asked again: a new daemon's page or worker replaces the old at once.
			h.Set("Cache-Control", "no-cache")
			b, err := files.ReadFile(name)
			if err != nil {
				http.Error(w, "the dashboard is not built in", http.StatusNotFound)
				return
			}
			h.Set("Content-Type", ctype)
			_, _ = w.Write(b)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		h.Set("Cache-Control", "no-cache")
		static.ServeHTTP(w, r)
	})
}
