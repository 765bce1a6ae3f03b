package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Prefix is the path the console is served under.
const Prefix = "/ui"

// contentSecurityPolicy allows the page nothing but its own files and the API of the worker that
// served it: no inline script, no other origin.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// file is one embedded file with what its responses need.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// Handler serves the console: Prefix itself is the page, Prefix+"/<name>" its files. Everything
// else is a 404. Files are revalidated on every load (ETag), so a worker upgrade shows at once.
func Handler() http.Handler {
	files := map[string]file{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		files[strings.TrimPrefix(p, "static/")] = file{b, ct, `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("ui: reading the embedded files: " + err.Error()) // cannot happen: they are compiled in
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := "index.html"
		if r.URL.Path != Prefix {
			name = strings.TrimPrefix(r.URL.Path, Prefix+"/")
		}
		f, found := files[name]
		if !found || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.contentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", f.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("Referrer-Policy", "no-referrer")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	})
}
