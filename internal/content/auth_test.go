package content

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func protected() bool { return true }

// sessionCookie is the one Set-Cookie of r.
func sessionCookie(t *testing.T, r resp) *http.Cookie {
	t.Helper()
	cs := r.Cookies()
	if len(cs) != 1 {
		t.Fatalf("%s: %d cookies set, want 1: %q", r.Request.URL, len(cs), r.Header.Values("Set-Cookie"))
	}
	return cs[0]
}

// TestSignedFlow: with access control a signed URL is exchanged for a
// host-only cookie and a redirect without the signature; then the site
// and its relative links work with the cookie alone. Missing → 401;
// tampered, expired, another report's signature or cookie → 403.
func TestSignedFlow(t *testing.T) {
	s := newSites(t)
	s.add(t, 12, "", "index.html", `<script src="app.js"></script>`, "app.js", "run()", "data/x.json", "{}")
	s.add(t, 13, "", "index.html", "<p>thirteen</p>")
	g := start(t, s, Config{Secret: "s3cret-token", Protected: protected, URLTTL: time.Hour, SessionTTL: 12 * time.Hour})

	// No signature, no cookie.
	r := g.get("http://12.localhost:8081/")
	wantStatus(t, r, http.StatusUnauthorized)
	if !strings.Contains(r.body, "protected") || r.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("401 page: %q", r.body)
	}

	signed := g.o.URL(12, "data/x.json") + "&view=tree"
	u, _ := url.Parse(signed)
	if u.Query().Get(paramSig) == "" || u.Query().Get(paramExp) == "" {
		t.Fatalf("URL not signed: %s", signed)
	}
	r = g.get(signed)
	wantStatus(t, r, http.StatusFound)
	if loc := r.Header.Get("Location"); loc != "/data/x.json?view=tree" {
		t.Errorf("Location %q, want the same URL without the signature", loc)
	}
	c := sessionCookie(t, r)
	if c.Name != "__Host-reportd_content" || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteNoneMode || !c.Partitioned ||
		c.Path != "/" || c.Domain != "" || c.MaxAge != 12*3600 {
		t.Errorf("cookie %+v: want __Host- HttpOnly Secure SameSite=None Partitioned Path=/ host-only, 12h", c)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("redirect cacheable: %q", r.Header.Get("Cache-Control"))
	}
	withCookie := func(u string, c *http.Cookie) resp { return g.get(u, "Cookie", c.Name+"="+c.Value) }
	for _, p := range []string{"/", "/app.js", "/data/x.json?view=tree"} {
		r = withCookie("http://12.localhost:8081"+p, c)
		wantStatus(t, r, http.StatusOK)
		if cc := r.Header.Get("Cache-Control"); cc != "private, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q, want private", p, cc)
		}
	}
	// The cookie of report 12 is not accepted for report 13 (sent there
	// by hand: a browser would not even send it).
	r = withCookie("http://13.localhost:8081/", c)
	wantStatus(t, r, http.StatusForbidden)
	// Report 12's signature on report 13's origin.
	r = g.get("http://13.localhost:8081/?" + u.RawQuery)
	wantStatus(t, r, http.StatusForbidden)
	if len(r.Cookies()) != 0 {
		t.Errorf("a refused signature set a cookie")
	}
	// Tampered: signature, expiry.
	q := u.Query()
	sig := q.Get(paramSig)
	tampered := []string{
		strings.Replace(signed, sig, strings.ToUpper(sig[:4])+sig[4:], 1),
		strings.Replace(signed, paramExp+"="+q.Get(paramExp), paramExp+"=9999999999", 1),
		strings.Replace(signed, paramSig+"="+sig, paramSig+"=", 1),
		"http://12.localhost:8081/?" + paramExp + "=" + q.Get(paramExp),
	}
	for _, tu := range tampered {
		r = g.get(tu)
		wantStatus(t, r, http.StatusForbidden)
		if !strings.Contains(r.body, "expired or is not valid") {
			t.Errorf("403 page: %q", r.body)
		}
	}
	// A cookie forged without the key, or with a bumped expiry.
	exp, _, _ := strings.Cut(c.Value, ".")
	for _, v := range []string{"9999999999." + strings.SplitN(c.Value, ".", 2)[1], exp + ".AAAA", "garbage"} {
		r = withCookie("http://12.localhost:8081/", &http.Cookie{Name: c.Name, Value: v})
		wantStatus(t, r, http.StatusForbidden)
	}
	// A planted cookie of the same name does not shadow a valid one.
	r = g.get("http://12.localhost:8081/", "Cookie", c.Name+"=garbage; "+c.Name+"="+c.Value)
	wantStatus(t, r, http.StatusOK)

	// A signed URL with a valid cookie already: redirected, no new cookie needed.
	g.clock.add(2 * time.Hour) // the URL has expired, the session has not
	r = g.get(signed)
	wantStatus(t, r, http.StatusForbidden)
	r = g.get(signed, "Cookie", c.Name+"="+c.Value)
	wantStatus(t, r, http.StatusFound)
	r = withCookie("http://12.localhost:8081/", c)
	wantStatus(t, r, http.StatusOK)
	// The session ends.
	g.clock.add(11 * time.Hour)
	r = withCookie("http://12.localhost:8081/", c)
	wantStatus(t, r, http.StatusForbidden)
	// No open redirect: the exchange redirects to the cleaned path.
	fresh, _ := url.Parse(g.o.URL(12, ""))
	for _, p := range []string{"//evil.example/x", "/..//evil.example/", "/%2F%2Fevil.example"} {
		r = g.get("http://12.localhost:8081" + p + "?" + fresh.RawQuery)
		if loc := r.Header.Get("Location"); r.StatusCode != http.StatusFound || strings.HasPrefix(loc, "//") || !strings.HasPrefix(loc, "/") {
			t.Errorf("%s: %d Location %q", p, r.StatusCode, loc)
		}
	}
	// A fresh URL works again.
	r = g.get(g.o.URL(12, ""))
	wantStatus(t, r, http.StatusFound)
}

// TestSignedURLs: URLs are signed only while access is controlled, their
// expiry is URLTTL ahead (rounded up to the minute), and two origins with
// the same secret (replicas) accept each other's links.
func TestSignedURLs(t *testing.T) {
	on := false
	now := time.Date(2026, 5, 1, 12, 0, 30, 0, time.UTC)
	cfg := Config{Secret: "tok", Protected: func() bool { return on }, URLTTL: 10 * time.Minute, Now: func() time.Time { return now }}
	a, _ := NewOrigins(cfg)
	if u := a.URL(5, "index.html"); u != "http://5.localhost:8081/index.html" {
		t.Errorf("unprotected URL %q", u)
	}
	on = true
	u, _ := url.Parse(a.URL(5, "index.html"))
	if exp := u.Query().Get(paramExp); exp != "1777637460" { // 12:11:00
		t.Errorf("exp = %s, want 12:11:00 (10m ahead, rounded up)", exp)
	}
	b, _ := NewOrigins(cfg)
	if b.URL(5, "index.html") != u.String() {
		t.Errorf("replicas disagree")
	}
	c, _ := NewOrigins(Config{Secret: "other", Protected: cfg.Protected, URLTTL: cfg.URLTTL, Now: cfg.Now})
	if c.URL(5, "index.html") == u.String() {
		t.Errorf("another secret signs alike")
	}
}

// TestNoSecret: protected without a secret refuses everything rather
// than serving openly.
func TestNoSecret(t *testing.T) {
	s := newSites(t)
	s.add(t, 1, "", "index.html", "<p>x</p>")
	g := start(t, s, Config{Protected: protected})
	wantStatus(t, g.get(g.o.URL(1, "")), http.StatusForbidden)
	wantStatus(t, g.get("http://1.localhost:8081/"), http.StatusUnauthorized)
}

// TestSharedOrigin: the /r/{id}/ fallback: ids from the path, a slash
// added to /r/{id}, "../" resolving before the id is read (so access is
// checked for the report it lands on), Path-scoped cookies, other hosts
// refused.
func TestSharedOrigin(t *testing.T) {
	s := newSites(t)
	s.add(t, 12, "", "index.html", "<p>twelve</p>", "css/a.css", "x{}")
	s.add(t, 13, "", "index.html", "<p>thirteen</p>")
	g := start(t, s, Config{URL: "http://content.example.test:8082", ExtraHosts: []string{"192.0.2.10", "*.intra.test"}, FrameAncestors: []string{dashboard}})
	if u := g.o.URL(12, "css/a.css"); u != "http://content.example.test:8082/r/12/css/a.css" {
		t.Errorf("URL = %q", u)
	}
	for _, c := range []struct {
		url, host string
		status    int
		body, loc string
	}{
		{"/r/12/", "content.example.test:8082", 200, "twelve", ""},
		{"/r/12", "content.example.test:8082", 301, "", "/r/12/"},
		{"/r/12/css/a.css", "192.0.2.10:8082", 200, "x{}", ""},
		{"/r/12/../13/", "content.example.test", 200, "thirteen", ""},
		{"/r/12/../../etc/passwd", "content.example.test", 404, "Not a report", ""},
		{"/", "content.example.test", 404, "Not a report", ""},
		{"/r/", "content.example.test", 404, "Not a report", ""},
		{"/r/012/", "content.example.test", 404, "Not a report", ""},
		{"/r/12/", "12.content.example.test", 404, "Not a report", ""},
		{"/r/12/", "evil.test", 404, "Not a report", ""},
		{"/r/12/", "reports.intra.test", 200, "twelve", ""},
		{"/r/12/", "intra.test", 404, "Not a report", ""},
		{"/r/14/", "content.example.test", 404, "No such report", ""},
	} {
		r := g.get("http://x"+c.url, "Host", c.host)
		if r.StatusCode != c.status || !strings.Contains(r.body, c.body) || r.Header.Get("Location") != c.loc {
			t.Errorf("GET %s (Host %s): %d %q Location %q; want %d with %q, Location %q", c.url, c.host, r.StatusCode, trim(r.body), r.Header.Get("Location"), c.status, c.body, c.loc)
		}
	}

	// With access control: Path-scoped, not Secure on plain http to a
	// non-loopback host (SameSite=Lax), and checked for the report the
	// cleaned path names.
	p := start(t, s, Config{URL: "http://content.example.test:8082", Secret: "k", Protected: protected})
	r := p.get(p.o.URL(12, ""))
	wantStatus(t, r, http.StatusFound)
	if r.Header.Get("Location") != "/r/12/" {
		t.Errorf("Location %q", r.Header.Get("Location"))
	}
	c := sessionCookie(t, r)
	if c.Name != "reportd_content" || c.Path != "/r/12/" || c.Secure || c.SameSite != http.SameSiteLaxMode || !c.HttpOnly || c.Domain != "" {
		t.Errorf("cookie %+v: want reportd_content Path=/r/12/ HttpOnly Lax", c)
	}
	ck := c.Name + "=" + c.Value
	wantStatus(t, p.get("http://content.example.test:8082/r/12/css/a.css", "Cookie", ck), http.StatusOK)
	wantStatus(t, p.get("http://content.example.test:8082/r/12/../13/", "Cookie", ck), http.StatusForbidden)
	wantStatus(t, p.get("http://content.example.test:8082/r/13/", "Cookie", ck), http.StatusForbidden)
	wantStatus(t, p.get("http://content.example.test:8082/r/13/"), http.StatusUnauthorized)
}
