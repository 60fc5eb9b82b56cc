package daemon

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"log/slog"
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

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/local"
	"github.com/reportd/reportd/internal/site"
	"github.com/reportd/reportd/internal/testbin"
)

// storeSites serves sites ingested with site.Ingest into a real local
// blob store (the service's implementation lives in internal/service).
type storeSites struct{ store *local.Store }

func (s storeSites) SiteManifest(ctx context.Context, id int64) (site.Manifest, error) {
	return site.Load(ctx, s.store, site.ManifestKey(strconv.FormatInt(id, 10)))
}

func (s storeSites) OpenSiteFile(ctx context.Context, _ int64, f site.File) (blob.Object, error) {
	return s.store.Open(ctx, f.Key())
}

func newStoreSites(t *testing.T, id int64, kv ...string) storeSites {
	t.Helper()
	dir := t.TempDir()
	st, err := local.Open(filepath.Join(dir, "objects"), filepath.Join(dir, "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < len(kv); i += 2 {
		w, _ := zw.Create(kv[i])
		io.WriteString(w, kv[i+1])
	}
	zw.Close()
	_, err = site.Ingest(context.Background(), st, site.Zip(bytes.NewReader(buf.Bytes()), int64(buf.Len())),
		site.Options{ManifestKey: site.ManifestKey(strconv.FormatInt(id, 10)), TempDir: filepath.Join(dir, "tmp")})
	if err != nil {
		t.Fatal(err)
	}
	return storeSites{st}
}

// contentClient dials addr whatever host a URL names, and follows no redirects.
func contentClient(t *testing.T, addr string) *http.Client {
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: waitLong, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// TestContentOrigin: the daemon binds the content listener beside the
// API, hands out signed URLs for its origins (the API's ContentURL hook),
// answers only its own hosts, and stops it with the API.
func TestContentOrigin(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.Auth.Token = "content-origin-token"
	sites := newStoreSites(t, 7, "index.html", "<script>document.title='ran'</script>", "app.js", "run()")
	s, stop := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true, Sites: sites}})
	addr := s.ContentAddr()
	if addr == "" || addr == s.Addr() {
		t.Fatalf("content listener %q (API %q)", addr, s.Addr())
	}
	_, port, _ := net.SplitHostPort(addr)
	u := s.ContentURL(7, "")
	if !strings.HasPrefix(u, "http://7.localhost:"+port+"/?reportd_sig=") {
		t.Fatalf("ContentURL = %q, want a signed http://7.localhost:%s/ URL", u, port)
	}
	cl := contentClient(t, addr)
	res, err := cl.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || len(res.Cookies()) != 1 {
		t.Fatalf("signed URL: %d, cookies %q", res.StatusCode, res.Header.Values("Set-Cookie"))
	}
	ck := res.Cookies()[0]
	req, _ := http.NewRequest("GET", "http://7.localhost:"+port+"/app.js", nil)
	req.AddCookie(ck)
	res, err = cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "run()" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "http://127.0.0.1:") {
		t.Errorf("with the cookie: %d %q CSP %q", res.StatusCode, body, res.Header.Get("Content-Security-Policy"))
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "evil.example:" + port} {
		req, _ := http.NewRequest("GET", "http://"+host+"/", nil)
		res, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("Host %s: %d, want 404", host, res.StatusCode)
		}
	}
	stop()
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Errorf("the content listener still accepts after shutdown")
	}
}

// TestContentOriginOpen: without any token URLs are not signed and the
// content is open, as API reads are; content.enabled: false binds nothing.
func TestContentOriginOpen(t *testing.T) {
	c := testConfig(t, t.TempDir())
	sites := newStoreSites(t, 3, "index.html", "<p>open</p>")
	s, _ := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true, Sites: sites}})
	u := s.ContentURL(3, "index.html")
	if strings.Contains(u, "reportd_sig") {
		t.Errorf("URL signed without a token: %s", u)
	}
	res, err := contentClient(t, s.ContentAddr()).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("open content: %d", res.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(c.DataDir, contentKeyFile)); err != nil {
		t.Errorf("no content key kept for scoped tokens: %v", err)
	}

	c2 := testConfig(t, t.TempDir())
	c2.Content.Enabled = false
	s2, _ := startServerWith(t, &Server{Config: c2, Hooks: Hooks{NoEngines: true, Sites: sites}})
	if s2.ContentAddr() != "" || s2.ContentURL(3, "") != "" {
		t.Errorf("content.enabled=false: listener %q URL %q", s2.ContentAddr(), s2.ContentURL(3, ""))
	}
}

// TestContentOriginChoice: content.url, else {id}.localhost on loopback,
// else the shared fallback on the listener's host, with the log saying
// what that means and how to get per-report origins.
func TestContentOriginChoice(t *testing.T) {
	tcp := func(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	run := func(c Config, api, ln string) (string, []string, string) {
		var buf bytes.Buffer
		tmpl, extra := contentOrigin(c, tcp(api), tcp(ln), slog.New(slog.NewTextHandler(&buf, nil)))
		return tmpl, extra, buf.String()
	}
	c := DefaultConfig()
	if tmpl, extra, log := run(c, "127.0.0.1:8080", "127.0.0.1:9999"); tmpl != "http://{id}.localhost:9999" || extra != nil || log != "" {
		t.Errorf("loopback: %q %q %q", tmpl, extra, log)
	}
	tmpl, extra, log := run(c, "0.0.0.0:8080", "0.0.0.0:8081")
	if h, _ := os.Hostname(); tmpl != "http://"+strings.ToLower(h)+":8081" {
		t.Errorf("beyond loopback: %q", tmpl)
	}
	if !strings.Contains(log, "NOT isolated") || !strings.Contains(log, "wildcard DNS") || !strings.Contains(log, "https://{id}.reports-content.example.com") {
		t.Errorf("fallback not explained: %s", log)
	}
	if !strings.Contains(strings.Join(extra, " "), "127.0.0.1") {
		t.Errorf("extra hosts %q", extra)
	}
	c.PublicURL = "https://reports.example.com"
	if tmpl, _, _ := run(c, "0.0.0.0:8080", "192.0.2.7:8081"); tmpl != "http://reports.example.com:8081" {
		t.Errorf("with public_url: %q", tmpl)
	}
	c.PublicURL = ""
	if tmpl, _, _ := run(c, "0.0.0.0:8080", "192.0.2.7:8081"); tmpl != "http://192.0.2.7:8081" {
		t.Errorf("with a listen IP: %q", tmpl)
	}
	if _, _, log := run(c, "0.0.0.0:8080", "127.0.0.1:8081"); !strings.Contains(log, "loopback only") {
		t.Errorf("a loopback content origin behind a public API is not pointed out: %s", log)
	}
	c.Content.URL = "https://content.example.com"
	if tmpl, _, log := run(c, "127.0.0.1:8080", "127.0.0.1:8081"); tmpl != c.Content.URL || !strings.Contains(log, "NOT isolated") {
		t.Errorf("shared content.url: %q %s", tmpl, log)
	}
	c.Content.URL = "https://{id}.content.example.com"
	if tmpl, _, log := run(c, "127.0.0.1:8080", "127.0.0.1:8081"); tmpl != c.Content.URL || log != "" {
		t.Errorf("per-report content.url: %q %s", tmpl, log)
	}

	fa := frameAncestors(Config{PublicURL: "https://reports.example.com/base/"}, tcp("127.0.0.1:8080"))
	want := []string{"https://reports.example.com", "http://localhost:8080", "http://127.0.0.1:8080", "http://[::1]:8080"}
	if strings.Join(fa, " ") != strings.Join(want, " ") {
		t.Errorf("frame ancestors %q, want %q", fa, want)
	}
	if fa := frameAncestors(Config{}, tcp("192.0.2.7:8080")); strings.Join(fa, " ") != "http://192.0.2.7:8080" {
		t.Errorf("frame ancestors of a specific IP: %q", fa)
	}
}

// TestContentConfigErrors: a bad content.url is refused at load.
func TestContentConfigErrors(t *testing.T) {
	c := DefaultConfig()
	c.Content.URL = "http://{id}.{id}.example.com"
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "content.url") {
		t.Errorf("validate = %v", err)
	}
	c.Content.URL, c.Content.URLTTL = "", 0
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "url_ttl") {
		t.Errorf("validate = %v", err)
	}
}

// TestContentOriginExposure: a content listener beyond loopback needs a
// token (or auth.anonymous), as the API does.
func TestContentOriginExposure(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.Content.Addr = "0.0.0.0:0"
	sites := newStoreSites(t, 1, "index.html", "x")
	s := &Server{Config: c, Hooks: Hooks{NoEngines: true, Sites: sites}}
	err := s.Open(context.Background())
	s.Close()
	if err == nil || !strings.Contains(err.Error(), "content origin") || !strings.Contains(err.Error(), "without a token") {
		t.Fatalf("Open = %v, want the refusal", err)
	}
	c.Auth.Anonymous = true
	s2, _ := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true, Sites: sites}})
	if u := s2.ContentURL(1, ""); !strings.Contains(u, "/r/1/") {
		t.Errorf("beyond loopback without content.url: %q, want the shared fallback", u)
	}
}

// TestContentOriginEndToEnd: a site uploaded through the API with a token
// is opened from its siteUrl on the content origin: signature exchanged
// for the cookie, files served with their types, a precompressed variant,
// and the API origin's preview redirects there. A single-file HTML report
// is offered the same way.
func TestContentOriginEndToEnd(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.Auth.Token = "e2e-token"
	s, _ := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true}})
	api := "http://" + s.Addr()
	call := func(method, path, ct string, body io.Reader) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, api+path, body)
		req.Header.Set("Authorization", "Bearer "+c.Auth.Token)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		res, err := (&http.Client{Timeout: waitLong, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	res, b := call("POST", "/api/projects", "application/json", strings.NewReader(`{"name":"content e2e"}`))
	var proj struct{ ID int64 }
	if res.StatusCode >= 300 || json.Unmarshal(b, &proj) != nil {
		t.Fatalf("project: %d %s", res.StatusCode, b)
	}
	page := "<!DOCTYPE html><title>cov</title>\n" + strings.Repeat("<tr><td>covered</td><td>42</td></tr>\n", 200)
	upload := func(name string, data []byte) (id int64, siteURL string) {
		t.Helper()
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("projectId", strconv.FormatInt(proj.ID, 10))
		mw.WriteField("fileType", "html")
		fw, _ := mw.CreateFormFile("file", name)
		fw.Write(data)
		mw.Close()
		res, b := call("POST", "/api/reports", mw.FormDataContentType(), &body)
		var rep struct {
			ID      int64
			SiteURL string `json:"siteUrl"`
		}
		if res.StatusCode != http.StatusCreated || json.Unmarshal(b, &rep) != nil {
			t.Fatalf("upload %s: %d %s", name, res.StatusCode, b)
		}
		return rep.ID, rep.SiteURL
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, data := range map[string]string{"htmlcov/index.html": page, "htmlcov/style.css": "td{color:green}", "htmlcov/data/x.json": `{"ok":true}`} {
		w, _ := zw.Create(name)
		io.WriteString(w, data)
	}
	zw.Close()
	id, siteURL := upload("htmlcov.zip", zb.Bytes())
	_, port, _ := net.SplitHostPort(s.ContentAddr())
	if !strings.HasPrefix(siteURL, "http://"+strconv.FormatInt(id, 10)+".localhost:"+port+"/") || !strings.Contains(siteURL, "reportd_sig=") {
		t.Fatalf("siteUrl %q", siteURL)
	}
	cl := contentClient(t, s.ContentAddr())
	res, err := cl.Get(siteURL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || len(res.Cookies()) != 1 {
		t.Fatalf("siteUrl: %d %q", res.StatusCode, res.Header.Values("Set-Cookie"))
	}
	ck := res.Cookies()[0]
	origin := "http://" + strconv.FormatInt(id, 10) + ".localhost:" + port
	get := func(path string, hdr ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", origin+path, nil)
		req.AddCookie(ck)
		for i := 0; i < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	if res, body := get("/"); res.StatusCode != 200 || body != page || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("entry: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), body[:min(len(body), 60)])
	}
	if res, body := get("/data/x.json"); res.StatusCode != 200 || body != `{"ok":true}` || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("data: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	res, body := get("/index.html", "Accept-Encoding", "gzip")
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("no gzip variant served: %v", res.Header)
	} else if zr, err := gzip.NewReader(strings.NewReader(body)); err != nil {
		t.Error(err)
	} else if plain, _ := io.ReadAll(zr); string(plain) != page {
		t.Errorf("gzip variant decodes to %d bytes", len(plain))
	}
	// The API origin's preview of the site redirects to a signed URL.
	res, _ = call("GET", "/api/reports/"+strconv.FormatInt(id, 10)+"/preview", "", nil)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusFound || !strings.HasPrefix(loc, origin+"/") || !strings.Contains(loc, "reportd_sig=") {
		t.Errorf("preview: %d Location %q", res.StatusCode, loc)
	}

	// A single-file HTML report.
	id2, url2 := upload("cover.html", []byte("<!DOCTYPE html><p>go tool cover</p>"))
	if url2 == "" {
		t.Fatalf("no siteUrl for a single-file html report")
	}
	res, err = cl.Get(url2)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || len(res.Cookies()) != 1 {
		t.Fatalf("single-file siteUrl: %d", res.StatusCode)
	}
	req, _ := http.NewRequest("GET", "http://"+strconv.FormatInt(id2, 10)+".localhost:"+port+"/", nil)
	req.AddCookie(res.Cookies()[0])
	res, err = cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), "go tool cover") {
		t.Errorf("single-file report on the content origin: %d %q", res.StatusCode, b)
	}
	// Report 1's cookie does not open report 2.
	req, _ = http.NewRequest("GET", "http://"+strconv.FormatInt(id2, 10)+".localhost:"+port+"/", nil)
	req.AddCookie(ck)
	if res, err := cl.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("another report's cookie: %v %v", res.StatusCode, err)
	} else {
		res.Body.Close()
	}
}

// TestContentSecret: content.signing_key, else auth.token, else a key
// made once in the data directory (0600) and reused; on PostgreSQL the
// last one is logged as not shared by replicas.
func TestContentSecret(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	c := DefaultConfig()
	c.DataDir = t.TempDir()
	c.Content.SigningKey, c.Auth.Token = "0123456789abcdef-signing", "tok"
	if k, err := contentSecret(c, log); err != nil || k != c.Content.SigningKey {
		t.Errorf("with signing_key: %q %v", k, err)
	}
	c.Content.SigningKey = ""
	if k, err := contentSecret(c, log); err != nil || k != "tok" {
		t.Errorf("with auth.token: %q %v", k, err)
	}
	c.Auth.Token = ""
	k1, err := contentSecret(c, log)
	if err != nil || len(k1) != 64 {
		t.Fatalf("kept key: %q %v", k1, err)
	}
	if fi, err := os.Stat(filepath.Join(c.DataDir, contentKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("content.key: %v %v", fi, err)
	}
	if k2, _ := contentSecret(c, log); k2 != k1 {
		t.Errorf("the kept key changed: %q -> %q", k1, k2)
	}
	if logs.Len() != 0 {
		t.Errorf("bolt logged: %s", logs.String())
	}
	c.Storage = storagePostgres
	contentSecret(c, log)
	if !strings.Contains(logs.String(), "content.signing_key") {
		t.Errorf("no advice for replicas: %s", logs.String())
	}
	c.Content.SigningKey = "short"
	if err := c.validateContent(); err == nil || !strings.Contains(err.Error(), "content.signing_key") {
		t.Errorf("short signing_key: %v", err)
	}
}

// TestSocketActivationContentOrigin: with two sockets passed (LISTEN_FDS=2),
// the first serves the API and the second the content origin, whose
// default origins then carry the passed socket's port.
func TestSocketActivationContentOrigin(t *testing.T) {
	var files []*os.File
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		f, err := ln.(*net.TCPListener).File()
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, ln.Addr().String())
		ln.Close() // f keeps the socket open for the child
		defer f.Close()
		files = append(files, f)
	}
	p := testbin.StartT(t, bins.Path(t, "reportd"), testbin.Options{DataDir: t.TempDir(), Env: []string{"LISTEN_FDS=2"},
		Command: func(bin string, args ...string) *exec.Cmd {
			cmd := exec.Command("/bin/sh", append([]string{"-c", `LISTEN_PID=$$ exec "$0" "$@"`, bin}, args...)...)
			cmd.ExtraFiles = files
			return cmd
		}})
	if p.Addr != addrs[0] {
		t.Fatalf("API on %s, want the first passed socket %s", p.Addr, addrs[0])
	}
	_, port, _ := net.SplitHostPort(addrs[1])
	req, _ := http.NewRequest("GET", "http://"+addrs[1]+"/", nil)
	req.Host = "42.localhost:" + port
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("content origin on the second socket: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound || !strings.Contains(string(b), "No such report") || !strings.HasPrefix(res.Header.Get("Content-Security-Policy"), "frame-ancestors") {
		t.Errorf("second socket: %d %q CSP %q", res.StatusCode, b, res.Header.Get("Content-Security-Policy"))
	}
	if !strings.Contains(p.Log(), "content_url=http://{id}.localhost:"+port) {
		t.Errorf("log does not name the content origin on the passed port:\n%s", p.Log())
	}
	if err := stopWith(t, p, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
}
