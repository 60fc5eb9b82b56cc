package daemon

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/local"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/client"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
	"github.com/reportd/reportd/internal/tokens"
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

func (s storeSites) SiteVariants(ctx context.Context, _ int64, f site.File) (site.Variants, error) {
	return site.LookupVariants(ctx, s.store, f.SHA256)
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
	c.Auth.Token, c.Auth.Reads = "content-origin-token", true
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
	// The first scoped token (an upload token) protects writes only: reads,
	// the content origin included, stay open, and the link handed out
	// before it keeps working.
	if _, _, err := s.Tokens().Create(tokens.Spec{Name: "ci", Scope: tokens.Upload}); err != nil {
		t.Fatal(err)
	}
	if u2 := s.ContentURL(3, "index.html"); u2 != u {
		t.Errorf("after the first token the link changed: %s (was %s)", u2, u)
	}
	res, err = contentClient(t, s.ContentAddr()).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("the earlier link after the first token: %d", res.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(c.DataDir, contentKeyFile)); err == nil {
		t.Errorf("a content key file was made: the store keeps the key")
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
	run := func(c config.Config, api, ln string) (string, []string, string) {
		var buf bytes.Buffer
		tmpl, extra := contentOrigin(c, tcp(api), tcp(ln), slog.New(slog.NewTextHandler(&buf, nil)))
		return tmpl, extra, buf.String()
	}
	c := config.DefaultConfig()
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

	fa := frameAncestors(config.Config{PublicURL: "https://reports.example.com/base/"}, tcp("127.0.0.1:8080"))
	want := []string{"https://reports.example.com", "http://localhost:8080", "http://127.0.0.1:8080"}
	if strings.Join(fa, " ") != strings.Join(want, " ") {
		t.Errorf("frame ancestors %q, want %q", fa, want)
	}
	if fa := frameAncestors(config.Config{}, tcp("192.0.2.7:8080")); strings.Join(fa, " ") != "http://192.0.2.7:8080" {
		t.Errorf("frame ancestors of a specific IP: %q", fa)
	}
	// IPv6 literals are no CSP source (Chromium rejects the whole token).
	if fa := frameAncestors(config.Config{PublicURL: "http://[2001:db8::1]:8080"}, tcp("[2001:db8::2]:8080")); len(fa) != 0 {
		t.Errorf("frame ancestors with IPv6 addresses: %q, want none", fa)
	}
}

// TestContentConfigErrors: a bad content.url is refused at load.
func TestContentConfigErrors(t *testing.T) {
	c := config.DefaultConfig()
	c.Content.URL = "http://{id}.{id}.example.com"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "content.url") {
		t.Errorf("validate = %v", err)
	}
	c.Content.URL, c.Content.URLTTL = "", 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "url_ttl") {
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

// TestContentSecret: content.signing_key, else a key the store makes once
// and keeps (never auth.token); what earlier releases signed with
// (auth.token, data_dir/content.key) is accepted only for one url_ttl
// after the store's key was made.
func TestContentSecret(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	c := config.DefaultConfig()
	c.DataDir = t.TempDir()
	c.Content.SigningKey, c.Auth.Token = "0123456789abcdef-signing", strongToken
	openStore := func(at time.Time) *boltstore.Store {
		st, err := boltstore.Open(filepath.Join(c.DataDir, "reportd.db"), report.Clock{Now: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	now := time.Now()
	st := openStore(now)
	if k, err := contentSecret(t.Context(), c, st, log); err != nil || k.secret != c.Content.SigningKey || k.legacy != nil {
		t.Errorf("with signing_key: %+v %v", k, err)
	}
	c.Content.SigningKey = ""
	oldFile := strings.Repeat("ab", 32)
	os.WriteFile(filepath.Join(c.DataDir, contentKeyFile), []byte(oldFile+"\n"), 0o600)
	k1, err := contentSecret(t.Context(), c, st, log)
	if err != nil || len(k1.secret) != 64 || k1.secret == strongToken || k1.secret == oldFile {
		t.Fatalf("store key: %+v %v", k1, err)
	}
	if !slices.Equal(k1.legacy, []string{strongToken, oldFile}) || !k1.legacyUntil.Equal(now.Truncate(time.Second).Add(c.Content.URLTTL)) {
		t.Errorf("legacy: %q until %v, want the token and content.key until %v", k1.legacy, k1.legacyUntil, now.Add(c.Content.URLTTL))
	}
	if k2, _ := contentSecret(t.Context(), c, st, log); k2.secret != k1.secret {
		t.Errorf("the kept key changed: %q -> %q", k1.secret, k2.secret)
	}
	st.Close()
	st = openStore(now.Add(time.Hour))
	if k, _ := contentSecret(t.Context(), c, st, log); k.secret != k1.secret || !k.legacyUntil.Equal(k1.legacyUntil) {
		t.Errorf("reopened: %+v, want the same key and window", k)
	}
	st.Close()
	// A store whose key was made more than url_ttl ago: no legacy secret.
	c.DataDir = t.TempDir()
	os.WriteFile(filepath.Join(c.DataDir, contentKeyFile), []byte(oldFile+"\n"), 0o600)
	st = openStore(now.Add(-c.Content.URLTTL - time.Minute))
	defer st.Close()
	if k, err := contentSecret(t.Context(), c, st, log); err != nil || len(k.secret) != 64 || k.legacy != nil {
		t.Errorf("after the window: %+v %v", k, err)
	}
	c.Content.SigningKey = "short"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "content.signing_key") {
		t.Errorf("short signing_key: %v", err)
	}
}

// TestContentOriginIsNotTheAPI: a client pointed at the content origin
// (reportctl --server with the content port) is told, in the API's error
// body, that this is the content origin and where the API is, for reads
// and writes alike; a site's own files below /api/ are still served.
func TestContentOriginIsNotTheAPI(t *testing.T) {
	c := testConfig(t, t.TempDir())
	sites := newStoreSites(t, 4, "index.html", "<p>x</p>", "api/data.json", `{"ok":true}`)
	s, _ := startServerWith(t, &Server{Config: c, Hooks: Hooks{NoEngines: true, Sites: sites}})
	cl, err := client.New(client.Options{Server: "http://" + s.ContentAddr(), Retries: -1})
	if err != nil {
		t.Fatal(err)
	}
	api := "http://" + s.Addr()
	_, err = cl.Ping(context.Background())
	if !report.IsKind(err, report.NotFound) || !strings.Contains(err.Error(), "this is reportd's content origin") || !strings.Contains(err.Error(), api) {
		t.Errorf("ping at the content origin: %v (API %s)", err, api)
	}
	_, err = cl.CreateProject(context.Background(), report.ProjectCreate{Name: "x"})
	if !report.IsKind(err, report.NotFound) || !strings.Contains(err.Error(), "content origin") {
		t.Errorf("a write at the content origin: %v", err)
	}
	res, err := contentClient(t, s.ContentAddr()).Get(s.ContentURL(4, "api/data.json"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(b) != `{"ok":true}` {
		t.Errorf("the site's own api/data.json: %d %s", res.StatusCode, b)
	}
}
