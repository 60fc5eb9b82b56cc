package daemon

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"math/big"
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

	"github.com/andybalholm/brotli"

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

// startNginxFront renders the shipped configuration for api and content
// (reportd's listeners) and starts nginx on a loopback port in a
// directory of its own.
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
	pool := writeFrontCert(t, dir)
	shipped, err := os.ReadFile(shippedNginxConf)
	if err != nil {
		t.Fatal(err)
	}
	port, err := testserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	port80, err := testserver.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cache := filepath.Join(dir, "cache")
	conf := string(shipped)
	for _, r := range [][2]string{
		{"127.0.0.1:8080", api},
		{"127.0.0.1:8081", content},
		{"/var/cache/nginx/reportd-content", cache},
		{"/etc/letsencrypt/live/reports.example.com/", dir + "/"},
		{"/etc/letsencrypt/live/reports-content.example.com/", dir + "/"},
		{"listen [::]:443 ssl http2;", ""},
		{"listen 443 ssl http2;", "listen " + addr + " ssl http2;"},
		{"listen [::]:80;", ""},
		{"listen 80;", "listen 127.0.0.1:" + strconv.Itoa(port80) + ";"},
	} {
		if !strings.Contains(conf, r[0]) {
			t.Fatalf("%s no longer has %q: update this test's substitutions", shippedNginxConf, r[0])
		}
		conf = strings.ReplaceAll(conf, r[0], r[1])
	}
	if err := os.WriteFile(filepath.Join(dir, "reportd.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// The main context Debian's /etc/nginx/nginx.conf would give, with
	// every path in dir; the shipped file is included as conf.d does.
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // workers must reach dir (0700) when run as root
	}
	main := fmt.Sprintf(`daemon off;
master_process on;
worker_processes 1;
%s
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path %[2]s/body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
    include %[2]s/reportd.conf;
}
`, user, dir)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(main), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	p, err := testserver.Launch(cmd, filepath.Join(dir, "stderr.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(syscall.SIGQUIT) })
	if err := p.WaitReady(func(ctx context.Context) error {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
		}
		return err
	}); err != nil {
		b, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		t.Fatalf("%v\n%s", err, b)
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		TLSClientConfig:    &tls.Config{RootCAs: pool},
		DisableCompression: true, // each request says what it accepts
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &nginxFront{
		client: &http.Client{Transport: tr, Timeout: waitLong, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		cache:  cache,
	}
}

// writeFrontCert writes a self-signed certificate for the shipped names
// as fullchain.pem and privkey.pem in dir and returns a pool trusting it.
func writeFrontCert(t *testing.T, dir string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "reportd nginx front test"},
		DNSNames:     []string{"reports.example.com", "*.reports-content.example.com"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "fullchain.pem"), certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "privkey.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	return pool
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
	var r io.Reader = strings.NewReader(a.body)
	switch a.Header.Get("Content-Encoding") {
	case "":
		return a.body
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(r)
	default:
		t.Fatalf("Content-Encoding %q", a.Header.Get("Content-Encoding"))
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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
