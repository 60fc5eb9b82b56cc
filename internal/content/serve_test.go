package content

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/site"
	"github.com/reportd/reportd/internal/testfixture"
)

const dashboard = "http://127.0.0.1:8080"

var bigHTML = "<!DOCTYPE html><title>cov</title>\n" + strings.Repeat("<tr><td class=\"covered\">line</td><td>42</td></tr>\n", 200)

// coverageSite adds a small coverage-like site as report id, its
// precompressed variants made.
func coverageSite(t *testing.T, s *storeSites, id int64) site.Manifest {
	m := coverageFiles(t, s, id)
	s.makeVariants(t, m)
	return m
}

func coverageFiles(t *testing.T, s *storeSites, id int64) site.Manifest {
	return s.add(t, id, "",
		"index.html", bigHTML,
		"style.css", "body{margin:0}",
		"coverage_html.js", strings.Repeat("function sort(a){return a.sort()}\n", 100),
		"data/tests.json", `{"tests":[1,2,3]}`,
		"favicon.png", "\x89PNG\r\n\x1a\nnot really",
		"fonts/a.woff2", "wOF2",
		"trace.zip", "PK\x03\x04",
		"notes.unknownext", "plain?",
		"a b/ü.html", "<p>spaces</p>",
		"css/index.html", "<p>css folder</p>",
		"CaseSensitive.html", "<p>case</p>",
	)
}

// TestHeaders: every response carries the content origin's headers: no
// sandbox, frame-ancestors limited to the dashboard and the report, nosniff,
// no referrer, same-origin resources, no CORS; types from the built-in table.
func TestHeaders(t *testing.T) {
	s := newSites(t)
	m := coverageSite(t, s, 12)
	g := start(t, s, Config{FrameAncestors: []string{dashboard, "https://reports.example.com/"}})
	check := func(r resp) {
		t.Helper()
		h := r.Header
		if got := h.Get("Content-Security-Policy"); got != "frame-ancestors 'self' "+dashboard+" https://reports.example.com" {
			t.Errorf("%s: CSP %q", r.Request.URL, got)
		}
		if strings.Contains(strings.ToLower(h.Get("Content-Security-Policy")), "sandbox") {
			t.Errorf("sandbox on the content origin")
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
			"Cross-Origin-Resource-Policy": "same-origin", "Access-Control-Allow-Origin": ""} {
			if h.Get(k) != v {
				t.Errorf("%s: %s = %q, want %q", r.Request.URL, k, h.Get(k), v)
			}
		}
	}
	for _, f := range m.Files {
		r := g.get(g.o.URL(12, f.Path))
		wantStatus(t, r, http.StatusOK)
		check(r)
		if ct := r.Header.Get("Content-Type"); ct != site.ContentType(f.Path) || ct != f.ContentType {
			t.Errorf("%s: Content-Type %q, want %q", f.Path, ct, site.ContentType(f.Path))
		}
		if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", f.Path, cc)
		}
	}
	if ct := g.get(g.o.URL(12, "notes.unknownext")).Header.Get("Content-Type"); ct != "application/octet-stream" {
		t.Errorf("unknown extension served as %q, want application/octet-stream (never the OS table)", ct)
	}
	// Errors carry them too.
	check(g.get(g.o.URL(12, "missing.png")))
	check(g.get("http://localhost:8081/"))
	check(g.do(http.MethodPost, g.o.URL(12, "")))
}

// TestETagAndRange: the ETag is the file's sha256 (strong); If-None-Match
// answers 304; ranges are of the identity bytes even where a variant is
// preferred.
func TestETagAndRange(t *testing.T) {
	s := newSites(t)
	m := coverageSite(t, s, 3)
	g := start(t, s, Config{})
	css, _ := m.Lookup("style.css")
	r := g.get(g.o.URL(3, "style.css"))
	if r.Header.Get("ETag") != `"`+css.SHA256+`"` {
		t.Errorf("ETag %q, want the quoted sha256 %s", r.Header.Get("ETag"), css.SHA256)
	}
	r = g.get(g.o.URL(3, "style.css"), "If-None-Match", `"`+css.SHA256+`"`)
	wantStatus(t, r, http.StatusNotModified)
	if r.body != "" {
		t.Errorf("304 with a body")
	}
	r = g.get(g.o.URL(3, "style.css"), "If-None-Match", `"other"`)
	wantStatus(t, r, http.StatusOK)

	ix, _ := m.Lookup("index.html")
	if v, err := site.LookupVariants(context.Background(), s.store, ix.SHA256); err != nil || v.Size(site.Gzip) == 0 || v.Size(site.Brotli) == 0 {
		t.Fatalf("index.html has no variants: %+v, %v", v, err)
	}
	r = g.get(g.o.URL(3, "index.html"), "Range", "bytes=2-14", "Accept-Encoding", "br, gzip")
	wantStatus(t, r, http.StatusPartialContent)
	if r.body != bigHTML[2:15] || r.Header.Get("Content-Encoding") != "" {
		t.Errorf("range body %q (encoding %q), want identity %q", r.body, r.Header.Get("Content-Encoding"), bigHTML[2:15])
	}
	if r.Header.Get("Content-Range") != "bytes 2-14/"+itoa(len(bigHTML)) {
		t.Errorf("Content-Range %q", r.Header.Get("Content-Range"))
	}
	r = g.get(g.o.URL(3, "index.html"), "Range", "bytes=99999999-")
	wantStatus(t, r, http.StatusRequestedRangeNotSatisfiable)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestEncodings: br > gzip > identity by Accept-Encoding with q-values;
// bodies decode to the file; Vary and a distinct ETag per encoding.
func TestEncodings(t *testing.T) {
	s := newSites(t)
	m := coverageSite(t, s, 4)
	g := start(t, s, Config{})
	ix, _ := m.Lookup("index.html")
	v, err := site.LookupVariants(context.Background(), s.store, ix.SHA256)
	if err != nil || v.Size(site.Gzip) == 0 || v.Size(site.Brotli) == 0 {
		t.Fatalf("index.html has no variants: %+v, %v", v, err)
	}
	gzTag, brTag := ix.SHA256+".gzip", ix.SHA256+".br"
	cases := []struct{ accept, want, etag string }{
		{"gzip, deflate, br, zstd", "br", brTag},
		{"gzip", "gzip", gzTag},
		{"br;q=0.5, gzip", "gzip", gzTag},
		{"br;q=0.8, gzip;q=0.8", "br", brTag},
		{"identity", "", ix.SHA256},
		{"", "", ix.SHA256},
		{"*", "br", brTag},
		{"*;q=0.5, identity", "", ix.SHA256},
		{"gzip;q=0, br;q=0", "", ix.SHA256},
		{"GZIP;Q=1.0", "gzip", gzTag},
		{"zstd", "", ix.SHA256},
	}
	for _, c := range cases {
		var hdr []string
		if c.accept != "" {
			hdr = []string{"Accept-Encoding", c.accept}
		}
		r := g.get(g.o.URL(4, "index.html"), hdr...)
		wantStatus(t, r, http.StatusOK)
		if got := r.Header.Get("Content-Encoding"); got != c.want {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", c.accept, got, c.want)
			continue
		}
		if r.Header.Get("ETag") != `"`+c.etag+`"` {
			t.Errorf("Accept-Encoding %q: ETag %q, want %q", c.accept, r.Header.Get("ETag"), c.etag)
		}
		if r.Header.Get("Vary") != "Accept-Encoding" {
			t.Errorf("Vary %q", r.Header.Get("Vary"))
		}
		if got := testfixture.Decode(t, c.want, r.body); got != bigHTML {
			t.Errorf("Accept-Encoding %q: body decodes to %d bytes, want the %d of the file", c.accept, len(got), len(bigHTML))
		}
		if r.Header.Get("Content-Length") != itoa(len(r.body)) {
			t.Errorf("Content-Length %q for %d bytes", r.Header.Get("Content-Length"), len(r.body))
		}
	}
	// 304 per encoding.
	r := g.get(g.o.URL(4, "index.html"), "Accept-Encoding", "gzip", "If-None-Match", `"`+gzTag+`"`)
	wantStatus(t, r, http.StatusNotModified)
	r = g.get(g.o.URL(4, "index.html"), "Accept-Encoding", "br", "If-None-Match", `"`+gzTag+`"`)
	wantStatus(t, r, http.StatusOK)
	// HEAD: headers of the chosen variant, no body.
	r = g.do(http.MethodHead, g.o.URL(4, "index.html"), "Accept-Encoding", "br")
	if r.Header.Get("Content-Encoding") != "br" || r.body != "" || r.Header.Get("Content-Length") != itoa(int(v.Size(site.Brotli))) {
		t.Errorf("HEAD: encoding %q length %q body %d", r.Header.Get("Content-Encoding"), r.Header.Get("Content-Length"), len(r.body))
	}
	// Files without variants: no Vary, no encoding.
	r = g.get(g.o.URL(4, "style.css"), "Accept-Encoding", "br, gzip")
	if r.Header.Get("Content-Encoding") != "" || r.Header.Get("Vary") != "" || r.body != "body{margin:0}" {
		t.Errorf("small file: encoding %q vary %q body %q", r.Header.Get("Content-Encoding"), r.Header.Get("Vary"), r.body)
	}
}

func TestNegotiate(t *testing.T) {
	for _, c := range []struct {
		accept []string
		br, gz bool
		want   string
	}{
		{[]string{"gzip, br"}, true, true, "br"},
		{[]string{"gzip, br"}, false, true, "gzip"},
		{[]string{"gzip", "br"}, true, true, "br"},
		{[]string{"br"}, false, true, ""},
		{[]string{"br;q=0.1, identity;q=0.5"}, true, true, ""},
		{[]string{"br;q=bogus"}, true, true, ""},
		{[]string{"br;q=2"}, true, true, ""},
		{[]string{"*;q=0"}, true, false, ""},
		{[]string{" br ; q=1 "}, true, false, "br"},
	} {
		var v site.Variants
		if c.br {
			v.Sizes = map[string]int64{site.Brotli: 1}
		}
		if c.gz {
			if v.Sizes == nil {
				v.Sizes = map[string]int64{}
			}
			v.Sizes[site.Gzip] = 1
		}
		if got := negotiate(c.accept, v); got != c.want {
			t.Errorf("negotiate(%q, br %v, gzip %v) = %q, want %q", c.accept, c.br, c.gz, got, c.want)
		}
	}
}

// TestManifestCache: the requests of one page view read the manifest
// once; after ManifestTTL it is read again (a deleted report goes), and
// a failed read is not kept.
func TestManifestCache(t *testing.T) {
	s := newSites(t)
	coverageSite(t, s, 5)
	g := start(t, s, Config{ManifestTTL: 10 * time.Second})
	loads := func() int { s.mu.Lock(); defer s.mu.Unlock(); return s.loads }
	var wg sync.WaitGroup
	for _, p := range []string{"", "style.css", "coverage_html.js", "data/tests.json", "favicon.png", "css/", "missing"} {
		wg.Go(func() { g.get(g.o.URL(5, p)) })
	}
	wg.Wait()
	if n := loads(); n != 1 {
		t.Errorf("%d manifest loads for one page view, want 1", n)
	}
	g.clock.add(11 * time.Second)
	wantStatus(t, g.get(g.o.URL(5, "")), http.StatusOK)
	if n := loads(); n != 2 {
		t.Errorf("%d loads after the TTL, want 2", n)
	}
	if err := site.Delete(context.Background(), s.store, site.ManifestKey("5")); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, g.get(g.o.URL(5, "")), http.StatusOK) // cached still
	g.clock.add(11 * time.Second)
	wantStatus(t, g.get(g.o.URL(5, "")), http.StatusNotFound)
	wantStatus(t, g.get(g.o.URL(5, "")), http.StatusNotFound)
	if n := loads(); n != 4 {
		t.Errorf("%d loads, want 4 (a missing report is asked again)", n)
	}
}

// TestVariantsLater: a file whose variants are not made yet is served as
// identity (with Vary) and asked for once; the answer is cached briefly;
// once the variants exist it is served compressed after the short
// negative TTL, and that answer is cached.
func TestVariantsLater(t *testing.T) {
	s := newSites(t)
	m := coverageFiles(t, s, 5)
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	g := start(t, s, Config{Now: c.now})
	ix, _ := m.Lookup("index.html")
	r := g.get(g.o.URL(5, "index.html"), "Accept-Encoding", "br, gzip")
	wantStatus(t, r, http.StatusOK)
	if r.Header.Get("Content-Encoding") != "" || r.body != bigHTML || r.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("before variants: encoding %q vary %q", r.Header.Get("Content-Encoding"), r.Header.Get("Vary"))
	}
	g.get(g.o.URL(5, "index.html"), "Accept-Encoding", "br, gzip")
	s.mu.Lock()
	queued := slices.Clone(s.queued)
	s.mu.Unlock()
	if !slices.Equal(queued, []string{ix.SHA256}) {
		t.Errorf("asked for variants of %q, want index.html's once (cached)", queued)
	}
	s.makeVariants(t, m)
	c.add(variantNegativeTTL + time.Second)
	r = g.get(g.o.URL(5, "index.html"), "Accept-Encoding", "br, gzip")
	if r.Header.Get("Content-Encoding") != "br" || testfixture.Decode(t, "br", r.body) != bigHTML || r.Header.Get("ETag") != `"`+ix.SHA256+`.br"` {
		t.Errorf("after variants: encoding %q etag %q", r.Header.Get("Content-Encoding"), r.Header.Get("ETag"))
	}
}
