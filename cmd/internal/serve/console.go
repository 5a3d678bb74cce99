package serve

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// The operator console: a page of plain HTML, CSS and JavaScript that
// reads the operator API with the token the operator types in
// (docs/OPERATIONS.md). Everything it needs is embedded here.
//
//go:embed console
var consoleFiles embed.FS

// consoleCSP is the console's Content-Security-Policy: scripts, styles,
// images and requests from this server only, no inline script or style,
// no frames, no form posts. The token the page holds can then go nowhere
// but to this server's operator API. Media from blob: only: the past
// calls' player plays a recording the page fetched with the token (an
// <audio> src cannot carry it).
const consoleCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"media-src blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// consolePage is the page's file; the others are its assets.
const consolePage = "index.html"

// mountConsole serves the console: the page at GET /operator/ and its
// assets under GET /operator/console/. Neither needs the token (the page
// holds no data; it asks for the token and sends it with each API
// request), and both carry consoleCSP. Called by EnableOperator.
func (s *Server) mountConsole() {
	files, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		panic(err) // the embed's own directory: cannot happen
	}
	s.mux.HandleFunc("GET /operator/{$}", func(w http.ResponseWriter, r *http.Request) {
		consoleHeaders(w)
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFileFS(w, r, files, consolePage)
	})
	s.mux.HandleFunc("GET /operator/console/", func(w http.ResponseWriter, r *http.Request) {
		consoleHeaders(w)
		name := strings.TrimPrefix(r.URL.Path, "/operator/console/")
		// Only the assets themselves: no directory listing, no second
		// copy of the page under another path.
		if name == consolePage || !fs.ValidPath(name) || strings.Contains(name, "/") {
			http.NotFound(w, r)
			return
		}
		if st, err := fs.Stat(files, name); err != nil || !st.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, files, name)
	})
}

// consoleHeaders sets what every answer of the console carries.
func consoleHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", consoleCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}
