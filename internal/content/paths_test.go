package content

import (
	"net/http"
	"strings"
	"testing"
)

// TestPaths: the entry at /, index.html in folders, a redirect to add the
// folder slash, percent-decoding, case-sensitive names, no escape with
// "..", and 200.html / 404.html for missing paths.
func TestPaths(t *testing.T) {
	s := newSites(t)
	coverageSite(t, s, 12)
	s.add(t, 13, "",
		"index.html", "<p>app</p>",
		"200.html", "<p>spa shell</p>",
		"404.html", "<p>custom not found</p>",
		"app.js", "run()")
	s.add(t, 14, "", "index.html", "<p>x</p>", "404.html", "<p>custom 404</p>")
	s.add(t, 15, "", "a.txt", "A", "b.txt", "B")                                       // no entry: a listing
	s.add(t, 16, "report/index.html", "report/index.html", "<p>deep</p>", "x.css", "") // entry in a folder
	s.addFile(t, 17, "cover.html", "<p>go tool cover</p>")
	g := start(t, s, Config{})
	base := "http://12.localhost:8081"
	for _, c := range []struct {
		url    string
		status int
		body   string // substring; "" for none
		loc    string
	}{
		{base + "/", 200, "<title>cov</title>", ""},
		{base, 200, "<title>cov</title>", ""},
		{base + "/css/", 200, "css folder", ""},
		{base + "/css", 301, "", "/css/"},
		{base + "/css?x=1", 301, "", "/css/?x=1"},
		{base + "/a%20b/%C3%BC.html", 200, "spaces", ""},
		{base + "/a b/ü.html", 200, "spaces", ""},
		{base + "/casesensitive.html", 404, "Not found", ""},
		{base + "/CaseSensitive.html", 200, "case", ""},
		{base + "/../../../etc/passwd", 404, "Not found", ""},
		{base + "/css/../index.html", 200, "<title>cov</title>", ""},
		{base + "/%2e%2e/%2e%2e/etc/passwd", 404, "Not found", ""},
		{base + "/a%5cb", 404, "Not found", ""},
		{base + "/x%00y", 404, "Not found", ""},
		{base + "/missing/", 404, "Not found", ""},
		{"http://13.localhost:8081/some/route", 200, "spa shell", ""},
		{"http://13.localhost:8081/page.html", 200, "spa shell", ""},
		{"http://13.localhost:8081/missing.js", 404, "custom not found", ""},
		{"http://14.localhost:8081/some/route", 404, "custom 404", ""},
		{"http://15.localhost:8081/", 200, `<a href="b.txt">b.txt</a>`, ""},
		{"http://16.localhost:8081/", 302, "", "/report/index.html"},
		{"http://16.localhost:8081/report/", 200, "deep", ""},
		{"http://17.localhost:8081/", 200, "go tool cover", ""},
		{"http://17.localhost:8081/cover.html", 200, "go tool cover", ""},
		{"http://18.localhost:8081/", 404, "No such report", ""},
	} {
		r := g.get(c.url)
		if r.StatusCode != c.status || !strings.Contains(r.body, c.body) || r.Header.Get("Location") != c.loc {
			t.Errorf("GET %s: %d %q Location %q; want %d with %q, Location %q", c.url, r.StatusCode, trim(r.body), r.Header.Get("Location"), c.status, c.body, c.loc)
		}
		if r.StatusCode >= 400 && r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: error cached (%q)", c.url, r.Header.Get("Cache-Control"))
		}
	}
	// The custom 404 page's HEAD has no body and the same status.
	r := g.do(http.MethodHead, "http://14.localhost:8081/nope")
	if r.StatusCode != 404 || r.body != "" || r.Header.Get("Content-Length") != "17" {
		t.Errorf("HEAD of a missing path: %d %q length %q", r.StatusCode, r.body, r.Header.Get("Content-Length"))
	}
	r = g.do(http.MethodPost, base+"/")
	if r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d Allow %q", r.StatusCode, r.Header.Get("Allow"))
	}
}

func trim(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// TestHosts: only the template's hosts are report origins; anything else
// (the bare suffix, another domain, leading zeros, a longer name) is a 404
// page that says what this is.
func TestHosts(t *testing.T) {
	s := newSites(t)
	s.add(t, 12, "", "index.html", "<p>twelve</p>")
	g := start(t, s, Config{URL: "https://{id}.reports-content.example.com"})
	ok := []string{"12.reports-content.example.com", "12.Reports-Content.Example.com", "12.reports-content.example.com:443", "12.reports-content.example.com."}
	for _, h := range ok {
		r := g.get("http://x/", "Host", h)
		if r.StatusCode != 200 || !strings.Contains(r.body, "twelve") {
			t.Errorf("Host %q: %d %q, want the report", h, r.StatusCode, trim(r.body))
		}
	}
	bad := []string{"reports-content.example.com", ".reports-content.example.com", "012.reports-content.example.com",
		"+12.reports-content.example.com", "12.reports-content.example.com.evil.com", "x.12.reports-content.example.com",
		"12.localhost", "127.0.0.1", "99999999999999999999.reports-content.example.com", "0.reports-content.example.com",
		"12.reports-content.example.org"}
	for _, h := range bad {
		r := g.get("http://x/", "Host", h)
		if r.StatusCode != 404 || !strings.Contains(r.body, "not a report origin") {
			t.Errorf("Host %q: %d %q, want the not-an-origin page", h, r.StatusCode, trim(r.body))
		}
	}
	if u := g.o.URL(12, "css/a b.css"); u != "https://12.reports-content.example.com/css/a%20b.css" {
		t.Errorf("URL = %q", u)
	}
}

// TestTemplates: what content.url accepts.
func TestTemplates(t *testing.T) {
	for tmpl, want := range map[string]string{
		"http://{id}.localhost:8081":               "http://7.localhost:8081/",
		"https://{id}.reports-content.example.com": "https://7.reports-content.example.com/",
		"https://r-{id}.example.com/":              "https://r-7.example.com/",
		"http://127.0.0.1:8082":                    "http://127.0.0.1:8082/r/7/",
		"http://[::1]:8082":                        "http://[::1]:8082/r/7/",
		"https://content.example.com":              "https://content.example.com/r/7/",
	} {
		o, err := NewOrigins(Config{URL: tmpl})
		if err != nil {
			t.Errorf("%s: %v", tmpl, err)
			continue
		}
		if got := o.URL(7, ""); got != want {
			t.Errorf("%s: URL = %q, want %q", tmpl, got, want)
		}
	}
	for _, tmpl := range []string{"ftp://{id}.example.com", "http://{id}.{id}.example.com", "http://example.com/{id}/",
		"http://x{id}.localhost/path", "http://a.{id}.example.com", "http://{id}", "http://r1{id}.example.com",
		"http://{id}1.example.com", "https://{id}.example.com?x=1", "http://user@{id}.example.com", "{id}.localhost:8081",
		"http://localhost:{id}"} {
		if _, err := NewOrigins(Config{URL: tmpl}); err == nil || !strings.Contains(err.Error(), "content.url") {
			t.Errorf("%s: accepted (%v)", tmpl, err)
		}
	}
}
