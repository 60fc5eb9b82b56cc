package content

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/site"
)

// TestHeaderSet pins the whole header set of the content origin's file
// answers, names and values, for the first request of a file (read from
// storage) and the next ones (from memory): the security headers, the
// caching headers, Vary only where variants are wanted, the ETag and
// length of what is sent. Nothing more, nothing less (Date aside, which
// net/http adds).
func TestHeaderSet(t *testing.T) {
	s := newSites(t)
	css := strings.Repeat("body{margin:0}\n", 800) // wants variants
	m := s.add(t, 31, "",
		"style.css", css,
		"small.js", "let x = 1",
		"404.html", "<p>"+strings.Repeat("no such page ", 100)+"</p>",
	)
	s.makeVariants(t, m)
	g := start(t, s, Config{FrameAncestors: []string{dashboard}})
	security := map[string]string{
		"Content-Security-Policy":      "frame-ancestors 'self' " + dashboard,
		"X-Content-Type-Options":       "nosniff",
		"Referrer-Policy":              "no-referrer",
		"Cross-Origin-Resource-Policy": "same-origin",
	}
	want := func(f site.File, status int, enc string, length int) map[string]string {
		w := map[string]string{"Content-Type": f.ContentType, "Content-Length": itoa(length)}
		for k, v := range security {
			w[k] = v
		}
		w["Etag"] = `"` + f.SHA256 + `"`
		if enc != "" {
			w["Content-Encoding"] = enc
			w["Etag"] = `"` + f.SHA256 + "." + enc + `"`
		}
		if site.Wants(f) {
			w["Vary"] = "Accept-Encoding"
		}
		if status == http.StatusOK {
			w["Cache-Control"] = "public, max-age=31536000, immutable"
			w["Accept-Ranges"] = "bytes"
		} else {
			w["Cache-Control"] = "no-store"
		}
		return w
	}
	cssF, _ := m.Lookup("style.css")
	jsF, _ := m.Lookup("small.js")
	notF, _ := m.Lookup("404.html")
	if !site.Wants(cssF) || site.Wants(jsF) {
		t.Fatalf("fixture: style.css must want variants (%v), small.js not (%v)", site.Wants(cssF), site.Wants(jsF))
	}
	cases := []struct {
		path   string
		accept string
		f      site.File
		status int
		enc    string
	}{
		{"style.css", "", cssF, http.StatusOK, ""},
		{"style.css", "br, gzip", cssF, http.StatusOK, site.Brotli},
		{"style.css", "gzip", cssF, http.StatusOK, site.Gzip},
		{"small.js", "br, gzip", jsF, http.StatusOK, ""},
		{"missing.html", "", notF, http.StatusNotFound, ""},
		{"missing.html", "br", notF, http.StatusNotFound, site.Brotli},
	}
	for _, c := range cases {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			for round := range 2 { // from storage, then from memory
				var hdr []string
				if c.accept != "" {
					hdr = []string{"Accept-Encoding", c.accept}
				}
				r := g.do(method, g.o.URL(31, c.path), hdr...)
				what := method + " " + c.path + " (Accept-Encoding " + c.accept + ", round " + itoa(round+1) + ")"
				wantStatus(t, r, c.status)
				length := len(r.body)
				if method == http.MethodHead {
					get := g.get(g.o.URL(31, c.path), hdr...)
					length = len(get.body)
					if r.body != "" {
						t.Errorf("%s: a body", what)
					}
				}
				exp := want(c.f, c.status, c.enc, length)
				var got []string
				for k := range r.Header {
					if k != "Date" {
						got = append(got, k)
					}
				}
				var names []string
				for k := range exp {
					names = append(names, k)
				}
				slices.Sort(got)
				slices.Sort(names)
				if !slices.Equal(got, names) {
					t.Errorf("%s: header names %q, want %q", what, got, names)
					continue
				}
				for k, v := range exp {
					if !slices.Equal(r.Header[k], []string{v}) {
						t.Errorf("%s: %s = %q, want [%q]", what, k, r.Header[k], v)
					}
				}
				if len(r.Header["Date"]) != 1 {
					t.Errorf("%s: Date %q", what, r.Header["Date"])
				}
			}
		}
	}
}
