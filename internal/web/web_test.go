package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestIndexAndAssets(t *testing.T) {
	h := Handler()
	tests := []struct {
		path, contentType, cache string
		contains                 string
	}{
		{"/", "text/html; charset=utf-8", "no-cache, no-store", `<script type="module" src="js/main.js">`},
		{"/index.html", "text/html; charset=utf-8", "no-cache, no-store", "<main"},
		{"/app.css", "text/css; charset=utf-8", "no-cache", ""},
		{"/js/main.js", "text/javascript; charset=utf-8", "no-cache", ""},
		{"/favicon.svg", "image/svg+xml", "no-cache", "<svg"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			w := get(t, h, http.MethodGet, tt.path, nil)
			if w.Code != http.StatusOK {
				t.Fatalf("status %d", w.Code)
			}
			if got := w.Header().Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type %q, want %q", got, tt.contentType)
			}
			if got := w.Header().Get("Cache-Control"); got != tt.cache {
				t.Errorf("Cache-Control %q, want %q", got, tt.cache)
			}
			csp := w.Header().Get("Content-Security-Policy")
			for _, want := range []string{"script-src 'self'", "frame-src 'self' blob:", "img-src 'self' data: blob:", "default-src 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("CSP %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe") {
				t.Errorf("CSP allows unsafe sources: %q", csp)
			}
			if w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Error("missing nosniff")
			}
			if !strings.Contains(w.Body.String(), tt.contains) {
				t.Errorf("body lacks %q", tt.contains)
			}
			etag := w.Header().Get("ETag")
			if etag == "" {
				t.Fatal("no ETag")
			}
			w2 := get(t, h, http.MethodGet, tt.path, map[string]string{"If-None-Match": etag})
			if w2.Code != http.StatusNotModified || w2.Body.Len() != 0 {
				t.Errorf("revalidation: status %d, %d body bytes", w2.Code, w2.Body.Len())
			}
		})
	}
}

func TestNoInlineScript(t *testing.T) {
	// The CSP forbids inline script; an inline one would silently not run.
	body := get(t, Handler(), http.MethodGet, "/", nil).Body.String()
	for _, s := range strings.Split(body, "<script")[1:] {
		if !strings.Contains(strings.SplitN(s, ">", 2)[0], "src=") {
			t.Errorf("inline script in index.html: <script%s", strings.SplitN(s, "</script>", 2)[0])
		}
	}
	if strings.Contains(body, "style=") || strings.Contains(body, "<style") {
		t.Error("inline style in index.html; style-src is 'self' only")
	}
}

func TestUnknownPaths(t *testing.T) {
	h := Handler()
	for _, p := range []string{"/projects/3", "/js/", "/js", "/static/index.html", "/../web.go", "/api/projects", "/uploads/x.png", "/nope.js"} {
		if w := get(t, h, http.MethodGet, p, nil); w.Code != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, w.Code)
		}
	}
}

func TestMethods(t *testing.T) {
	h := Handler()
	w := get(t, h, http.MethodHead, "/", nil)
	if w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Errorf("HEAD: status %d, body %d bytes", w.Code, w.Body.Len())
	}
	w = get(t, h, http.MethodPost, "/", nil)
	if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: status %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
}
