package daemon

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/testfixture"
	"github.com/reportd/reportd/internal/testserver"
)

// The shipped nginx front (examples/content-origin/nginx.conf), run by
// Debian's nginx with only its ports, upstreams, certificate and cache
// paths replaced: it must serve a public report's files from its cache
// (Vary and ETag kept) and never store or serve a protected one.

const shippedNginxConf = "../../examples/content-origin/nginx.conf"

// The content origins of the shipped file; reportd is told the same.
const frontContentURL = "https://{id}.reports-content.example.com"

// frontCSS is a stylesheet large enough to get gzip and br variants; each
// test's copy carries a marker to look for in nginx's cache files.
func frontCSS(marker string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "/* %s */\n", marker)
	for i := 0; b.Len() < 4<<10; i++ {
		fmt.Fprintf(&b, ".row-%d td { color: #%06x; padding: %dpx; }\n", i, i*2654435761%0xffffff, i%9)
	}
	return b.String()
}

type nginxFront struct {
	client *http.Client
	cache  string
}

// startNginxFront runs the shipped configuration (testserver.NginxFront)
// in front of reportd's listeners api and content, over TLS as shipped.
func startNginxFront(t *testing.T, api, content string) *nginxFront {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, err = os.Stat("/usr/sbin/nginx"); err != nil {
			t.Skip("nginx is not installed (scripts/install-deps.sh test installs nginx-light)")
		}
		bin = "/usr/sbin/nginx"
	}
	dir, err := testserver.NewDir(os.TempDir(), "reportd-nginx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var ports [2]int
	for i := range ports {
		if ports[i], err = testserver.FreePort(); err != nil {
			t.Fatal(err)
		}
	}
	front := testserver.NginxFront{Shipped: shippedNginxConf, Dir: dir, API: api, Content: content, TLS: true,
		Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), Addr80: "127.0.0.1:" + strconv.Itoa(ports[1])}
	p, certPEM, err := front.Start(bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(syscall.SIGQUIT) })
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, front.Addr)
		},
		TLSClientConfig:    &tls.Config{RootCAs: pool},
		DisableCompression: true, // each request says what it accepts
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &nginxFront{
		client: &http.Client{Transport: tr, Timeout: waitLong, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		cache:  filepath.Join(dir, "cache"),
	}
}

type frontAnswer struct {
	*http.Response
	body string
}

func (f *nginxFront) get(t *testing.T, url string, hdr ...string) frontAnswer {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Add(hdr[i], hdr[i+1])
	}
	res, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return frontAnswer{res, string(b)}
}

// decoded is the body with its Content-Encoding undone.
func (a frontAnswer) decoded(t *testing.T) string {
	t.Helper()
	return testfixture.Decode(t, a.Header.Get("Content-Encoding"), a.body)
}

// frontSite uploads a site (index.html, style.css) through the API and
// returns its id.
func frontSite(t *testing.T, api, token, css string) int64 {
	t.Helper()
	do := func(ct string, body io.Reader, path string) []byte {
		req, _ := http.NewRequest("POST", "http://"+api+path, body)
		req.Header.Set("Content-Type", ct)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", path, res.StatusCode, b)
		}
		return b
	}
	var proj struct{ ID int64 }
	if err := json.Unmarshal(do("application/json", strings.NewReader(`{"name":"nginx front"}`), "/api/projects"), &proj); err != nil {
		t.Fatal(err)
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, data := range map[string]string{"site/index.html": "<!DOCTYPE html><link rel=stylesheet href=style.css><p>front</p>", "site/style.css": css} {
		w, _ := zw.Create(name)
		io.WriteString(w, data)
	}
	zw.Close()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("projectId", strconv.FormatInt(proj.ID, 10))
	mw.WriteField("fileType", "html")
	fw, _ := mw.CreateFormFile("file", "site.zip")
	fw.Write(zb.Bytes())
	mw.Close()
	var rep struct{ ID int64 }
	if err := json.Unmarshal(do(mw.FormDataContentType(), &body, "/api/reports"), &rep); err != nil {
		t.Fatal(err)
	}
	return rep.ID
}

// waitVariants waits until reportd itself serves path of report id as br
// and gzip (variants are made in the background after an upload).
func waitVariants(t *testing.T, content string, id int64, path string, cookie *http.Cookie) {
	t.Helper()
	host := strconv.FormatInt(id, 10) + ".reports-content.example.com"
	for _, enc := range []string{"br", "gzip"} {
		for deadline := time.Now().Add(waitLong); ; time.Sleep(100 * time.Millisecond) {
			req, _ := http.NewRequest("GET", "http://"+content+path, nil)
			req.Host = host
			req.Header.Set("Accept-Encoding", enc)
			if cookie != nil {
				req.AddCookie(cookie)
			}
			res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: waitLong}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.Header.Get("Content-Encoding") == enc {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("reportd never served %s as %s: %d %v", path, enc, res.StatusCode, res.Header)
			}
		}
	}
}

// TestNginxFrontCachesPublicReports: through the shipped nginx.conf a
// public report's file is a MISS once and then a HIT per encoding (Vary
// honoured: identity, gzip and br never mixed up), with reportd's ETag and
// a 304 for If-None-Match.
func TestNginxFrontCachesPublicReports(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.Content.URL = frontContentURL
	s, _ := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true}})
	css := frontCSS("public-front-css")
	id := frontSite(t, s.Addr(), "", css)
	waitVariants(t, s.ContentAddr(), id, "/style.css", nil)
	f := startNginxFront(t, s.Addr(), s.ContentAddr())
	url := "https://" + strconv.FormatInt(id, 10) + ".reports-content.example.com/style.css"

	etags := map[string]string{}
	for _, enc := range []string{"", "br", "gzip"} {
		var hdr []string
		if enc != "" {
			hdr = []string{"Accept-Encoding", enc}
		}
		for i, want := range []string{"MISS", "HIT", "HIT"} {
			a := f.get(t, url, hdr...)
			if a.StatusCode != 200 || a.Header.Get("X-Cache-Status") != want {
				t.Fatalf("Accept-Encoding %q, request %d: %d X-Cache-Status %q, want 200 %s", enc, i+1, a.StatusCode, a.Header.Get("X-Cache-Status"), want)
			}
			if got := a.Header.Get("Content-Encoding"); got != enc {
				t.Errorf("Accept-Encoding %q, request %d: Content-Encoding %q", enc, i+1, got)
			}
			if a.decoded(t) != css {
				t.Errorf("Accept-Encoding %q, request %d: the body is not the file", enc, i+1)
			}
			if a.Header.Get("Vary") != "Accept-Encoding" || !strings.HasPrefix(a.Header.Get("Content-Type"), "text/css") {
				t.Errorf("Accept-Encoding %q: Vary %q Content-Type %q", enc, a.Header.Get("Vary"), a.Header.Get("Content-Type"))
			}
			etags[enc] = a.Header.Get("ETag")
		}
	}
	if etags[""] == "" || etags["br"] != strings.TrimSuffix(etags[""], `"`)+`.br"` || etags["gzip"] != strings.TrimSuffix(etags[""], `"`)+`.gzip"` {
		t.Errorf("ETags through the cache: %q", etags)
	}
	// Conditional requests answered from the cache.
	for enc, etag := range etags {
		hdr := []string{"If-None-Match", etag}
		if enc != "" {
			hdr = append(hdr, "Accept-Encoding", enc)
		}
		if a := f.get(t, url, hdr...); a.StatusCode != http.StatusNotModified || a.body != "" || a.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d ETag %q body %d bytes", etag, a.StatusCode, a.Header.Get("ETag"), len(a.body))
		}
	}
	// A range of the identity bytes, from the cache.
	if a := f.get(t, url, "Range", "bytes=3-12"); a.StatusCode != http.StatusPartialContent || a.body != css[3:13] || a.Header.Get("X-Cache-Status") != "HIT" {
		t.Errorf("Range: %d %q X-Cache-Status %q", a.StatusCode, a.body, a.Header.Get("X-Cache-Status"))
	}
	// Another report's name is another cache key.
	if a := f.get(t, "https://"+strconv.FormatInt(id+1, 10)+".reports-content.example.com/style.css"); a.StatusCode != http.StatusNotFound {
		t.Errorf("no such report through the cache: %d %q", a.StatusCode, a.Header.Get("X-Cache-Status"))
	}
}

// TestNginxFrontNeverCachesProtectedReports: with auth.reads on, the
// signed URL and the cookie bypass the cache, nothing of the report is
// stored, and a request without the cookie gets reportd's 401, never
// the file.
func TestNginxFrontNeverCachesProtectedReports(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.Content.URL = frontContentURL
	c.Auth.Token, c.Auth.Reads = "front-token", true
	s, _ := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true}})
	marker := "protected-front-css-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	css := frontCSS(marker)
	id := frontSite(t, s.Addr(), c.Auth.Token, css)
	f := startNginxFront(t, s.Addr(), s.ContentAddr())

	signed := s.ContentURL(id, "style.css")
	if !strings.HasPrefix(signed, "https://"+strconv.FormatInt(id, 10)+".reports-content.example.com/") || !strings.Contains(signed, "reportd_sig=") {
		t.Fatalf("signed URL %q", signed)
	}
	a := f.get(t, signed)
	if a.StatusCode != http.StatusFound || len(a.Cookies()) != 1 || a.Header.Get("X-Cache-Status") != "BYPASS" {
		t.Fatalf("signed URL through nginx: %d cookies %q X-Cache-Status %q", a.StatusCode, a.Header.Values("Set-Cookie"), a.Header.Get("X-Cache-Status"))
	}
	ck := a.Cookies()[0]
	if ck.Name != "__Host-reportd_content" {
		t.Errorf("cookie %q: the shipped bypass is tested for __Host-reportd_content", ck.Name)
	}
	waitVariants(t, s.ContentAddr(), id, "/style.css", ck)
	url := "https://" + strconv.FormatInt(id, 10) + ".reports-content.example.com/style.css"
	cookie := ck.Name + "=" + ck.Value
	for _, enc := range []string{"", "br", "gzip", "br"} {
		hdr := []string{"Cookie", "theme=dark; " + cookie}
		if enc != "" {
			hdr = append(hdr, "Accept-Encoding", enc)
		}
		a := f.get(t, url, hdr...)
		if a.StatusCode != 200 || a.Header.Get("X-Cache-Status") != "BYPASS" || a.decoded(t) != css {
			t.Fatalf("with the cookie, Accept-Encoding %q: %d X-Cache-Status %q", enc, a.StatusCode, a.Header.Get("X-Cache-Status"))
		}
		if cc := a.Header.Get("Cache-Control"); !strings.HasPrefix(cc, "private") {
			t.Errorf("protected file's Cache-Control %q", cc)
		}
	}
	// Conditional and range requests with the cookie reach reportd intact.
	etag := f.get(t, url, "Cookie", cookie, "Accept-Encoding", "br").Header.Get("ETag")
	if a := f.get(t, url, "Cookie", cookie, "Accept-Encoding", "br", "If-None-Match", etag); a.StatusCode != http.StatusNotModified || a.Header.Get("ETag") != etag {
		t.Errorf("with the cookie, If-None-Match %s: %d ETag %q", etag, a.StatusCode, a.Header.Get("ETag"))
	}
	if a := f.get(t, url, "Cookie", cookie, "Range", "bytes=3-12"); a.StatusCode != http.StatusPartialContent || a.body != css[3:13] {
		t.Errorf("with the cookie, Range: %d %q", a.StatusCode, a.body)
	}
	// Without the cookie: reportd's own 401 each time, not a cached file.
	for _, hdr := range [][]string{nil, {"Accept-Encoding", "br"}, {"Cookie", "theme=dark"}} {
		for range 2 {
			a := f.get(t, url, hdr...)
			if a.StatusCode != http.StatusUnauthorized || strings.Contains(a.body, marker) || a.Header.Get("X-Cache-Status") == "HIT" {
				t.Fatalf("without the cookie (%q): %d X-Cache-Status %q", hdr, a.StatusCode, a.Header.Get("X-Cache-Status"))
			}
		}
	}
	// Nothing of the report in nginx's cache.
	filepath.WalkDir(f.cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte("style.css")) || bytes.Contains(b, []byte(marker)) {
			t.Errorf("nginx stored %s:\n%.300s", p, b)
		}
		return nil
	})
}
