package content

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/site"
)

// TestCacheHitMatchesMiss: a file served from the object cache (the
// second request) answers exactly what the same request answers without
// the cache, for plain GETs, HEAD, each encoding, ranges, conditional
// requests and a site's 404.html; headers compared one by one (Date aside).
func TestCacheHitMatchesMiss(t *testing.T) {
	s := newSites(t)
	m := s.add(t, 21, "",
		"index.html", bigHTML,
		"style.css", strings.Repeat("body{margin:0}\n", 800),
		"data/tests.json", `{"tests":[1,2,3]}`,
		"favicon.png", "\x89PNG\r\n\x1a\nnot really",
		"404.html", "<p>no such page</p>",
	)
	s.makeVariants(t, m)
	cached := start(t, s, Config{FrameAncestors: []string{dashboard}})
	plain := start(t, s, Config{FrameAncestors: []string{dashboard}, CacheBytes: -1})
	if plain.h.objects != nil || cached.h.objects == nil {
		t.Fatal("CacheBytes: -1 must turn the cache off, 0 keep the default")
	}
	ix, _ := m.Lookup("index.html")
	css, _ := m.Lookup("style.css")
	hdrs := [][]string{
		nil,
		{"Accept-Encoding", "gzip, deflate, br"},
		{"Accept-Encoding", "gzip"},
		{"Range", "bytes=2-14"},
		{"Range", "bytes=0-3,10-20"},
		{"Range", "bytes=99999999-"},
		{"Range", "bytes=2-14", "If-Range", `"` + ix.SHA256 + `"`},
		{"Range", "bytes=2-14", "If-Range", `"other"`},
		{"If-None-Match", `"` + ix.SHA256 + `"`},
		{"If-None-Match", `"` + css.SHA256 + `"`},
		{"If-None-Match", `"` + ix.SHA256 + `.br"`, "Accept-Encoding", "br"},
		{"If-None-Match", `"other"`},
		{"If-Match", `"other"`},
		{"If-Modified-Since", "Mon, 01 Jan 2024 00:00:00 GMT"},
	}
	for _, p := range []string{"index.html", "style.css", "data/tests.json", "favicon.png", "missing.html", "missing.png"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			for _, h := range hdrs {
				want := plain.do(method, plain.o.URL(21, p), h...)
				for round := range 2 { // a miss that fills the cache, then a hit
					got := cached.do(method, cached.o.URL(21, p), h...)
					if got.StatusCode != want.StatusCode || unbound(got) != unbound(want) {
						t.Errorf("%s %s %q (round %d): %d with %d bytes, want %d with %d bytes", method, p, h, round, got.StatusCode, len(got.body), want.StatusCode, len(want.body))
					}
					sameHeaders(t, method+" "+p+" "+strings.Join(h, " "), got.Header, want.Header)
				}
			}
		}
	}
	if n, b := cached.h.objects.stats(); n == 0 || b == 0 {
		t.Errorf("nothing cached: %d objects, %d bytes", n, b)
	}
}

// unbound is r's body with a multipart boundary (random per response)
// replaced by a fixed string.
func unbound(r resp) string {
	_, b, ok := strings.Cut(r.Header.Get("Content-Type"), "boundary=")
	if !ok || b == "" {
		return r.body
	}
	return strings.ReplaceAll(r.body, b, "BOUNDARY")
}

func sameHeaders(t *testing.T, what string, got, want http.Header) {
	t.Helper()
	keys := func(h http.Header) []string {
		var k []string
		for name := range h {
			if name != "Date" {
				k = append(k, name)
			}
		}
		slices.Sort(k)
		return k
	}
	if !slices.Equal(keys(got), keys(want)) {
		t.Errorf("%s: headers %q, want %q", what, keys(got), keys(want))
		return
	}
	for _, k := range keys(want) {
		if k == "Content-Type" && strings.HasPrefix(want.Get(k), "multipart/byteranges") {
			continue // a random boundary
		}
		if !slices.Equal(got[k], want[k]) {
			t.Errorf("%s: %s = %q, want %q", what, k, got[k], want[k])
		}
	}
}

// TestCacheRangeAndConditional: once a file is in the cache, a range is
// answered 206 from its bytes and If-None-Match with its ETag 304.
func TestCacheRangeAndConditional(t *testing.T) {
	s := newSites(t)
	m := s.add(t, 22, "", "index.html", bigHTML)
	g := start(t, s, Config{})
	ix, _ := m.Lookup("index.html")
	url := g.o.URL(22, "index.html")
	wantStatus(t, g.get(url), http.StatusOK)
	if c := g.h.objects.get(ix.Key()); c == nil || string(c.body) != bigHTML {
		t.Fatal("index.html not in the cache after a GET")
	}
	r := g.get(url, "Range", "bytes=5-9")
	wantStatus(t, r, http.StatusPartialContent)
	if r.body != bigHTML[5:10] || r.Header.Get("Content-Range") != "bytes 5-9/"+itoa(len(bigHTML)) || r.Header.Get("Content-Length") != "5" {
		t.Errorf("range: %q, Content-Range %q, Content-Length %q", r.body, r.Header.Get("Content-Range"), r.Header.Get("Content-Length"))
	}
	r = g.get(url, "If-None-Match", `W/"x", "`+ix.SHA256+`"`)
	wantStatus(t, r, http.StatusNotModified)
	if r.body != "" || r.Header.Get("ETag") != `"`+ix.SHA256+`"` {
		t.Errorf("304: body %q, ETag %q", r.body, r.Header.Get("ETag"))
	}
	r = g.get(url)
	if r.body != bigHTML || r.Header.Get("Content-Length") != itoa(len(bigHTML)) || r.Header.Get("Accept-Ranges") != "bytes" ||
		r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("hit: %d bytes, headers %v", len(r.body), r.Header)
	}
}

// TestCacheBounded: the cache keeps at most its byte budget, objects over
// the per-object limit are served but not kept, and the least recently
// used go first.
func TestCacheBounded(t *testing.T) {
	c := newObjectCache(40, 100)
	c.overhead = 0 // bodies only, for round numbers
	body := func(n int) []byte { return []byte(strings.Repeat("x", n)) }
	for _, k := range []string{"a", "b", "c"} {
		c.put(k, k, body(30))
	}
	c.get("a") // b is now the least recently used
	c.put("d", "d", body(30))
	if n, b := c.stats(); n != 3 || b != 90 {
		t.Errorf("%d objects, %d bytes; want 3, 90", n, b)
	}
	if c.get("b") != nil || c.get("a") == nil || c.get("d") == nil {
		t.Error("evicted the wrong object: want b (least recently used) gone")
	}
	if o := c.put("big", "big", body(41)); o == nil || string(o.body) != string(body(41)) || c.get("big") != nil {
		t.Error("an object over the limit must be served but not kept")
	}
	if o := c.put("a", "a", body(30)); o != c.get("a") {
		t.Error("a second put of a key must return the kept object")
	}
	c.forget("a")
	if n, b := c.stats(); n != 2 || b != 60 {
		t.Errorf("after forget: %d objects, %d bytes; want 2, 60", n, b)
	}

	// Through the handler: a small budget stays small however many files.
	s := newSites(t)
	var kv []string
	for i := range 20 {
		kv = append(kv, "f"+itoa(i)+".txt", strings.Repeat(string(rune('a'+i)), 100+i))
	}
	kv = append(kv, "large.txt", strings.Repeat("L", 5000))
	s.add(t, 23, "", kv...)
	g := start(t, s, Config{CacheBytes: 1000, CacheObjectMax: 300})
	for round := range 2 {
		for i := 0; i < len(kv); i += 2 {
			r := g.get(g.o.URL(23, kv[i]))
			wantStatus(t, r, http.StatusOK)
			if r.body != kv[i+1] {
				t.Fatalf("round %d: %s served %d bytes, want %d", round, kv[i], len(r.body), len(kv[i+1]))
			}
		}
	}
	if n, b := g.h.objects.stats(); b > 1000 || n == 0 {
		t.Errorf("%d objects, %d bytes kept, want some and at most 1000 bytes", n, b)
	}
	// Tiny objects count their bookkeeping too.
	tiny := newObjectCache(300, 1000)
	for i := range 10 {
		tiny.put(itoa(i), itoa(i), []byte("x"))
	}
	if n, b := tiny.stats(); n != 1000/(entryOverhead+1) || b > 1000 {
		t.Errorf("tiny objects: %d kept (%d bytes), want %d", n, b, 1000/(entryOverhead+1))
	}
}

// TestCacheKeepsAccessChecks: a cached file of a deleted report is not
// served once its manifest is gone (the manifest is consulted first).
func TestCacheKeepsAccessChecks(t *testing.T) {
	s := newSites(t)
	s.add(t, 24, "", "style.css", "body{}")
	g := start(t, s, Config{ManifestTTL: time.Second})
	wantStatus(t, g.get(g.o.URL(24, "style.css")), http.StatusOK)
	if err := site.Delete(context.Background(), s.store, site.ManifestKey("24")); err != nil {
		t.Fatal(err)
	}
	g.clock.add(2 * time.Second)
	wantStatus(t, g.get(g.o.URL(24, "style.css")), http.StatusNotFound)
	// Another report with the same bytes is served them (same key).
	s.add(t, 25, "", "other.css", "body{}")
	if r := g.get(g.o.URL(25, "other.css")); r.StatusCode != http.StatusOK || r.body != "body{}" {
		t.Errorf("same bytes in another report: %d %q", r.StatusCode, r.body)
	}
}

// BenchmarkServeCached is the handler's own cost for a cached stylesheet
// (no network): go test -run '^$' -bench ServeCached -benchmem.
func BenchmarkServeCached(b *testing.B) {
	t := &testing.T{}
	s := newSites(t)
	s.add(t, 7, "", "style.css", strings.Repeat("body{margin:0}\n", 800))
	o, err := NewOrigins(Config{URL: "http://{id}.localhost:8081"})
	if err != nil {
		b.Fatal(err)
	}
	h := New(o, s)
	req := httptest.NewRequest(http.MethodGet, "http://7.localhost:8081/style.css", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
