package web

import (
	"net/http"
	"strings"
	"testing"
)

func TestFrameSource(t *testing.T) {
	for _, tt := range []struct{ template, want string }{
		{"http://{id}.localhost:8081", "http://*.localhost:8081"},
		{"http://{id}.localhost:8081/", "http://*.localhost:8081"},
		{"https://{id}.reports-content.example.com", "https://*.reports-content.example.com"},
		{"https://r{id}.reports.example.com/", "https://*.reports.example.com"},
		{"http://reports.example.com:8082/r/{id}/", "http://reports.example.com:8082"},
		{"http://127.0.0.1:8082", "http://127.0.0.1:8082"},
		{"http://[::1]:8082/r/{id}", "http://[::1]:8082"},
	} {
		got, err := FrameSource(tt.template)
		if err != nil || got != tt.want {
			t.Errorf("FrameSource(%q) = %q, %v; want %q", tt.template, got, err, tt.want)
		}
	}
	for _, bad := range []string{
		"ftp://{id}.example.com",           // not http(s)
		"https://reports.{id}.example.com", // a wildcard only stands leftmost
		"http://{id}:8081",                 // a bare label: *:8081 would match no host
		"/r/{id}/",                         // no origin at all
		"http://user@{id}.example.com",     // credentials in the URL
	} {
		if got, err := FrameSource(bad); err == nil {
			t.Errorf("FrameSource(%q) = %q, want an error", bad, got)
		}
	}
}

// TestFrameSourcesInPolicy: the content origins join frame-src, nothing else.
func TestFrameSourcesInPolicy(t *testing.T) {
	h := New(Options{FrameSources: []string{"http://*.localhost:8081"}})
	csp := get(t, h, http.MethodGet, "/", nil).Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "frame-src 'self' blob: http://*.localhost:8081;") {
		t.Errorf("CSP %q does not frame the content origin", csp)
	}
	if strings.Count(csp, "localhost") != 1 || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q: the content origin is allowed beyond frame-src, or the dashboard became frameable", csp)
	}
}
