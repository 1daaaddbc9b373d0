// Package web is the dashboard: plain HTML, CSS and JavaScript with no
// build step, embedded in akkd and served at / and /ui/. It holds no
// authority of its own: the page signs in with POST /v1/ui/session and then
// calls the same REST routes any host calls.
package web

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed ui
var files embed.FS

// Handler serves the dashboard: / is the page, /ui/… its files.
func Handler() http.Handler {
	sub, _ := fs.Sub(files, "ui")
	static := http.StripPrefix("/ui/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
			"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		if r.URL.Path == "/" {
			h.Set("Cache-Control", "no-cache")
			b, err := files.ReadFile("ui/index.html")
			if err != nil {
				http.Error(w, "the dashboard is not built in", http.StatusNotFound)
				return
			}
			h.Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(b)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		static.ServeHTTP(w, r)
	})
}
