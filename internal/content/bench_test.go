package content

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// discardWriter is a ResponseWriter that keeps only the header map and
// the status: the handler's own cost without a recorder's copy of the body.
type discardWriter struct {
	h    http.Header
	code int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(code int)        { d.code = code }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkServeCachedHandler is the handler's own cost and allocations
// for a cached stylesheet on a per-report origin, a Host without a port
// as behind a proxy (no network, no recorder):
// go test -run '^$' -bench ServeCachedHandler -benchmem ./internal/content.
func BenchmarkServeCachedHandler(b *testing.B) {
	t := &testing.T{}
	s := newSites(t)
	s.add(t, 7, "", "style.css", strings.Repeat("body{margin:0}\n", 800))
	o, err := NewOrigins(Config{URL: "http://{id}.reports-content.example.com"})
	if err != nil {
		b.Fatal(err)
	}
	h := New(o, s)
	req := httptest.NewRequest(http.MethodGet, "http://7.reports-content.example.com/style.css", nil)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			b.Fatal(w.code)
		}
	}
}
