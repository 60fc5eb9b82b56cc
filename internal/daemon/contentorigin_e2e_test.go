package daemon

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestContentOriginEndToEnd: a site uploaded through the API with a token
// protecting reads (auth.reads) is opened from its siteUrl on the content origin: signature exchanged
// for the cookie, files served with their types, a precompressed variant,
// and the API origin's preview redirects there. A single-file HTML report
// is offered the same way.
func TestContentOriginEndToEnd(t *testing.T) {
	c := testConfig(t, t.TempDir())
	c.Auth.Token, c.Auth.Reads = "e2e-token", true
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
	// Variants are made in the background after the upload: poll (the
	// content origin rechecks a file without variants every few seconds).
	res, body := get("/index.html", "Accept-Encoding", "gzip")
	for deadline := time.Now().Add(time.Minute); res.Header.Get("Content-Encoding") != "gzip" && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		res, body = get("/index.html", "Accept-Encoding", "gzip")
	}
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

// TestSocketActivationContentOrigin: with two sockets passed (LISTEN_FDS=2),
// the first serves the API and the second the content origin, whose
// default origins then carry the passed socket's port.
func TestSocketActivationContentOrigin(t *testing.T) {
	p, addrs := startSocketActivated(t, 2)
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
