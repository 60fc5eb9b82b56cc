package content

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/blob/local"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// storeSites serves sites ingested into a real local blob store with
// site.Ingest, as internal/service does: manifests at
// site.ManifestKey(id), files at their content keys. One-file reports
// (single HTML files) get a one-file manifest as the service makes them.
type storeSites struct {
	store *local.Store
	mu    sync.Mutex
	loads int
	one   map[int64]site.Manifest
	// queued are the objects SiteVariants was asked about before their
	// variants were made (the service queues them for its worker).
	queued []string
}

func (s *storeSites) SiteVariants(ctx context.Context, id int64, f site.File) (site.Variants, error) {
	v, err := site.LookupVariants(ctx, s.store, f.SHA256)
	if err == nil && !v.Done {
		s.mu.Lock()
		s.queued = append(s.queued, f.SHA256)
		s.mu.Unlock()
	}
	return v, err
}

// makeVariants makes the variants of m's files, as the service's worker
// does after a site is published.
func (s *storeSites) makeVariants(t *testing.T, m site.Manifest) {
	t.Helper()
	for _, f := range m.Files {
		if site.Wants(f) {
			if _, err := site.MakeVariants(context.Background(), s.store, f.SHA256, t.TempDir()); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (s *storeSites) SiteManifest(ctx context.Context, id int64) (site.Manifest, error) {
	s.mu.Lock()
	s.loads++
	m, ok := s.one[id]
	s.mu.Unlock()
	if ok {
		return m, nil
	}
	m, err := site.Load(ctx, s.store, site.ManifestKey(strconv.FormatInt(id, 10)))
	if err != nil {
		if report.IsKind(err, report.NotFound) {
			return site.Manifest{}, report.Errorf(report.NotFound, "report %d not found", id)
		}
		return site.Manifest{}, err
	}
	return m, nil
}

func (s *storeSites) OpenSiteFile(ctx context.Context, id int64, f site.File) (blob.Object, error) {
	return s.store.Open(ctx, f.Key())
}

func newSites(t *testing.T) *storeSites {
	t.Helper()
	dir := t.TempDir()
	st, err := local.Open(dir+"/objects", dir+"/tmp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &storeSites{store: st, one: map[int64]site.Manifest{}}
}

// add ingests files (name, body, name, body, …) as report id's site.
func (s *storeSites) add(t *testing.T, id int64, entry string, kv ...string) site.Manifest {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < len(kv); i += 2 {
		w, err := zw.Create(kv[i])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, kv[i+1])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := site.Ingest(context.Background(), s.store, site.Zip(bytes.NewReader(buf.Bytes()), int64(buf.Len())),
		site.Options{ManifestKey: site.ManifestKey(strconv.FormatInt(id, 10)), Entry: entry, Root: ".", TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// addFile stores one HTML file as report id, as a single-file report.
func (s *storeSites) addFile(t *testing.T, id int64, name, body string) {
	t.Helper()
	m := s.add(t, 100000+id, "", name, body)
	s.mu.Lock()
	s.one[id] = site.Manifest{Version: site.Version, Entry: name, TotalBytes: m.TotalBytes,
		Files: []site.File{{Path: name, SHA256: m.Files[0].SHA256, Size: m.Files[0].Size, ContentType: "text/html; charset=utf-8"}}}
	s.mu.Unlock()
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// origin is a content origin on a real 127.0.0.1 listener; its client
// dials that listener whatever the URL's host (*.localhost names do not
// resolve everywhere), never follows redirects and never decompresses.
type origin struct {
	t      *testing.T
	o      *Origins
	h      *Handler
	srv    *httptest.Server
	client *http.Client
	clock  *clock
}

func start(t *testing.T, sites Sites, cfg Config) *origin {
	t.Helper()
	c := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	if cfg.Now == nil {
		cfg.Now = c.now
	}
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	// "{port}" in the template is the listener's port (browser tests).
	cfg.URL = strings.ReplaceAll(cfg.URL, "{port}", addr[strings.LastIndex(addr, ":")+1:])
	o, err := NewOrigins(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := New(o, sites)
	srv.Config.Handler = h
	srv.Start()
	tr := &http.Transport{
		DisableCompression: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &origin{t: t, o: o, h: h, srv: srv, client: client, clock: c}
}

// resp is a finished response with its body read.
type resp struct {
	*http.Response
	body string
}

// get requests url with header pairs (name, value, …).
func (g *origin) do(method, url string, hdr ...string) resp {
	g.t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		g.t.Fatal(err)
	}
	for i := 0; i < len(hdr); i += 2 {
		if strings.EqualFold(hdr[i], "Host") {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Add(hdr[i], hdr[i+1])
	}
	res, err := g.client.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		g.t.Fatal(err)
	}
	return resp{res, string(b)}
}

func (g *origin) get(url string, hdr ...string) resp {
	g.t.Helper()
	return g.do(http.MethodGet, url, hdr...)
}

func wantStatus(t *testing.T, r resp, code int) {
	t.Helper()
	if r.StatusCode != code {
		t.Fatalf("%s %s: status %d, want %d\n%s", r.Request.Method, r.Request.URL, r.StatusCode, code, r.body)
	}
}
