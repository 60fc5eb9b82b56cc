package content

import (
	"net/http"
	"path"
	"strings"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// Handler serves report sites on their content origins.
type Handler struct {
	o        *Origins
	sites    Sites
	cfg      Config
	csp      string
	manifest *manifestCache
	variants *variantCache
	objects  *objectCache // nil: no cache
	// Header values every response carries, made once.
	cspV []string
}

// New is the content origin's handler over sites.
func New(o *Origins, sites Sites) *Handler {
	anc := []string{"'self'"}
	for _, a := range o.cfg.FrameAncestors {
		if a = strings.TrimRight(strings.TrimSpace(a), "/"); a != "" && !strings.ContainsAny(a, " ;,'") {
			anc = append(anc, a)
		}
	}
	h := &Handler{o: o, sites: sites, cfg: o.cfg, csp: "frame-ancestors " + strings.Join(anc, " "),
		manifest: newManifestCache(sites, o.cfg.ManifestTTL, o.cfg.Now),
		variants: newVariantCache(sites, o.cfg.Now)}
	h.cspV = []string{h.csp}
	if o.cfg.CacheBytes > 0 {
		h.objects = newObjectCache(o.cfg.CacheObjectMax, o.cfg.CacheBytes)
	}
	return h
}

// Header values shared by every response (never modified in place:
// Header.Set and Add replace or append to a new slice).
var (
	nosniffV       = []string{"nosniff"}
	noReferrerV    = []string{"no-referrer"}
	sameOriginV    = []string{"same-origin"}
	acceptRangesV  = []string{"bytes"}
	immutableV     = []string{"public, max-age=31536000, immutable"}
	immutablePrivV = []string{"private, max-age=31536000, immutable"}
	noStoreV       = []string{"no-store"}
	varyEncodingV  = []string{"Accept-Encoding"}
	// typeV are the Content-Type values of site.ContentTypes.
	typeV = func() map[string][]string {
		m := map[string][]string{}
		for _, t := range site.ContentTypes() {
			m[t] = []string{t}
		}
		return m
	}()
)

// contentType is the Content-Type header value of type t: made once for
// the built-in types (every manifest's, site.ContentType), per request
// for any other.
func contentType(t string) []string {
	if v, ok := typeV[t]; ok {
		return v
	}
	return []string{t}
}

// Origins is the handler's origin map (Origins.URL signs links).
func (h *Handler) Origins() *Origins { return h.o }

// ServeHTTP resolves the report from Host (or /r/{id}/), checks access,
// and serves the file.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd["Content-Security-Policy"] = h.cspV
	hd["X-Content-Type-Options"] = nosniffV
	hd["Referrer-Policy"] = noReferrerV
	hd["Cross-Origin-Resource-Policy"] = sameOriginV
	if h.notTheAPI(w, r) {
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		page(w, r, http.StatusMethodNotAllowed, "Method not allowed", "The content origin only serves GET and HEAD requests.")
		return
	}
	p := r.URL.Path
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if strings.ContainsAny(p, "\x00\\") {
		page(w, r, http.StatusNotFound, "Not found", "No such file in this report.")
		return
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	id, rest, slash, ok := h.o.Resolve(r.Host, clean)
	if !ok {
		if h.o.shared {
			page(w, r, http.StatusNotFound, "Not a report", "This is reportd's content origin: reports are served below /r/{id}/ on "+h.o.origin(0)+".")
		} else {
			page(w, r, http.StatusNotFound, "Not a report origin", "This host is not a report origin of this reportd server (reports are served at "+h.o.cfg.URL+").")
		}
		return
	}
	if slash {
		redirect(w, r, site.EscapePath(clean)+"/", http.StatusMovedPermanently)
		return
	}
	if h.cfg.Protected() && !h.authorize(w, r, id, clean) {
		return
	}
	v, err := h.manifest.get(r.Context(), id)
	if err != nil {
		if report.IsKind(err, report.NotFound) {
			page(w, r, http.StatusNotFound, "No such report", "There is no report with this id here, or it is not a site or an HTML report.")
			return
		}
		h.cfg.Log.Error("content origin: cannot load the site", "id", id, "err", err)
		page(w, r, http.StatusServiceUnavailable, "Report unavailable", "The report cannot be read right now; try again later.")
		return
	}
	h.serveSite(w, r, id, v, rest)
}

// serveSite maps rest (the path inside the site) to a file: the entry at
// the root, index.html in folders, then 200.html and 404.html.
func (h *Handler) serveSite(w http.ResponseWriter, r *http.Request, id int64, v site.View, rest string) {
	m := v.Manifest
	name := rest
	switch {
	case name == "" && m.Entry == "":
		listing(w, r, m)
		return
	case name == "" && strings.Contains(m.Entry, "/"):
		// An entry in a folder is opened there, so its relative links work.
		redirect(w, r, h.o.base(id)+site.EscapePath(m.Entry), http.StatusFound)
		return
	case name == "":
		name = m.Entry
	case strings.HasSuffix(name, "/"):
		name += "index.html"
	}
	if f, ok := m.Lookup(name); ok {
		h.serveFile(w, r, id, v, f, http.StatusOK)
		return
	}
	if !strings.HasSuffix(rest, "/") {
		if _, ok := m.Lookup(name + "/index.html"); ok {
			redirect(w, r, h.o.base(id)+site.EscapePath(name)+"/", http.StatusMovedPermanently)
			return
		}
	}
	if navigation(name) {
		if f, ok := m.Lookup("200.html"); ok {
			h.serveFile(w, r, id, v, f, http.StatusOK)
			return
		}
	}
	if f, ok := m.Lookup("404.html"); ok {
		h.serveFile(w, r, id, v, f, http.StatusNotFound)
		return
	}
	page(w, r, http.StatusNotFound, "Not found", "This report has no file "+rest+".")
}

// navigation tells whether a missing path looks like a page (no
// extension, or .html) rather than an asset: only pages fall back to a
// single-page app's 200.html; a missing script or image stays a 404.
func navigation(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == "" || ext == ".html" || ext == ".htm"
}

// redirect answers code with Location target (a path) and the request's
// query kept.
func redirect(w http.ResponseWriter, r *http.Request, target string, code int) {
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	w.Header().Set("Location", target)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
}
