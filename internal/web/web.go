// Package web serves reportd's browser dashboard: a static single page,
// embedded in the binary, that talks only to the public API under /api.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var staticFS embed.FS

// policy is the dashboard's own CSP. Report previews are framed from our
// origin ('self'), as blob: URLs of PDFs the page fetched, or from the
// content origin(s) where report sites run (frameSources); covers come
// from /uploads or are data: previews of a file being chosen.
func policy(frameSources []string) string {
	frame := "'self' blob:"
	for _, s := range frameSources {
		frame += " " + s
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; " +
		"img-src 'self' data: blob:; connect-src 'self'; frame-src " + frame + "; " +
		"manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// Options configure the dashboard.
type Options struct {
	// FrameSources are CSP source expressions of the content origin(s)
	// whose pages the reader frames (FrameSource derives one from the
	// content.url template); none: report sites cannot be framed.
	FrameSources []string
}

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	etag        string
	contentType string
	cache       string
}

// contentTypes is fixed here rather than taken from the system's mime
// tables, which differ between hosts (a wrong .js type breaks modules).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".json": "application/json",
}

// Handler serves the dashboard at "/" (index.html and its assets) without
// a content origin to frame (New with no options).
func Handler() http.Handler { return New(Options{}) }

// New serves the dashboard at "/" (index.html and its assets). Any other
// path is 404: the page uses hash routes, so the server needs none.
func New(o Options) http.Handler {
	assets, err := load()
	if err != nil {
		// The files are compiled in; failing here is a build defect.
		panic(err)
	}
	return &handler{assets: assets, csp: policy(o.FrameSources)}
}

func load() (map[string]*asset, error) {
	root, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	assets := map[string]*asset{}
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			ct = "application/octet-stream"
		}
		a := &asset{
			body:        body,
			etag:        `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`,
			contentType: ct,
			// Assets revalidate by ETag, so an upgraded binary is picked
			// up at once while unchanged files cost a 304.
			cache: "no-cache",
		}
		if p == "index.html" {
			a.cache = "no-cache, no-store"
		}
		assets["/"+p] = a
		return nil
	})
	return assets, err
}

type handler struct {
	assets map[string]*asset
	csp    string
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if p == "/" {
		p = "/index.html"
	}
	a, ok := h.assets[p]
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	if !ok || strings.Contains(p, "..") {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Content-Type", a.contentType)
	hd.Set("Cache-Control", a.cache)
	hd.Set("ETag", a.etag)
	// ServeContent answers If-None-Match with 304 and handles HEAD/ranges.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
