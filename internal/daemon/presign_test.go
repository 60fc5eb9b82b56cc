package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/testfixture"
)

// presignBearer adds the token to requests to reportd's host only, as a browser
// drops Authorization when a redirect leaves the origin.
type presignBearer struct{ host, token string }

func (b presignBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host == b.host {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestPresignDownloads: with s3.presign_downloads, the download of a PDF
// answers 302 (after the access check) to a presigned URL that a plain
// client follows to exactly the stored bytes, with the Content-Disposition
// and Content-Type reportd sends when it serves the download itself, and
// that carries a Range request; HTML reports and sites are still served by
// reportd; with the key off the download is reportd's 200.
func TestPresignDownloads(t *testing.T) {
	dir := t.TempDir()
	c, _ := s3Config(t, dir)
	c.Auth.Token, c.Auth.Reads = "presign-token", true
	on := c
	on.S3.PresignDownloads = true
	srv, stop := startServer(t, on)
	defer stop()
	base := "http://" + srv.Addr()
	client := &http.Client{Timeout: waitLong, Transport: presignBearer{srv.Addr(), c.Auth.Token}}
	noFollow := &http.Client{Timeout: waitLong, Transport: client.Transport,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := client.Post(base+"/api/projects", "application/json", strings.NewReader(`{"name":"presign"}`))
	if err != nil {
		t.Fatal(err)
	}
	var p apiProject
	err = json.NewDecoder(resp.Body).Decode(&p)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create project: %s %v", resp.Status, err)
	}
	proj := p.ID

	pdf := testfixture.MinimalPDF()
	pdf = append(pdf[:len(pdf)-len("%%EOF\n")], []byte("%"+strings.Repeat("p", 100_000)+"\n%%EOF\n")...)
	html := []byte("<!doctype html><p>" + strings.Repeat("h", 2000) + "</p>")
	up := func(fileType, name string, content []byte) int64 {
		t.Helper()
		st, rep, e, err := upload(client, base, proj, fileType, name, content)
		if err != nil || st != http.StatusCreated {
			t.Fatalf("upload %s: %d %+v %v", name, st, e, err)
		}
		return rep.ID
	}
	pdfID := up("pdf", "Q3 — “final”.pdf", pdf)
	htmlID := up("html", "r.html", html)
	siteID := up("html", "site.zip", siteZip(t, map[string]string{"index.html": "<p>site</p>"}))
	download := func(id int64) string { return fmt.Sprintf("%s/api/reports/%d/download", base, id) }

	// What reportd sends when it serves the download itself: a replica
	// with the key off (the default), on the same database and bucket.
	off, stopOff := startServer(t, c)
	defer stopOff()
	offClient := &http.Client{Timeout: waitLong, Transport: presignBearer{off.Addr(), c.Auth.Token}}
	resp, err = offClient.Get(fmt.Sprintf("http://%s/api/reports/%d/download", off.Addr(), pdfID))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, pdf) {
		t.Fatalf("key off: %s, %d bytes, want 200 and the PDF", resp.Status, len(got))
	}
	wantDisp, wantType := resp.Header.Get("Content-Disposition"), resp.Header.Get("Content-Type")
	if !strings.Contains(wantDisp, "filename*=UTF-8''") || wantType != "application/pdf" {
		t.Fatalf("key off: Content-Disposition %q, Content-Type %q", wantDisp, wantType)
	}

	// No token: the access check answers, no URL is handed out.
	resp, err = (&http.Client{Timeout: waitLong, CheckRedirect: noFollow.CheckRedirect}).Get(download(pdfID))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusFound || resp.Header.Get("Location") != "" {
		t.Fatalf("without a token: %s, Location %q", resp.Status, resp.Header.Get("Location"))
	}

	var loc string
	for _, method := range []string{"GET", "HEAD"} {
		req, _ := http.NewRequest(method, download(pdfID), nil)
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != http.StatusFound || h.Get("Location") == "" || h.Get("Cache-Control") != "no-store" || h.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s download: %s, Location %q, Cache-Control %q, CORS %q", method, resp.Status, h.Get("Location"), h.Get("Cache-Control"), h.Get("Access-Control-Allow-Origin"))
		}
		loc = h.Get("Location")
	}
	if u, err := url.Parse(loc); err != nil || u.Host != c.S3.Endpoint || u.Query().Get("X-Amz-Signature") == "" {
		t.Fatalf("Location %q is not a presigned URL of the bucket", loc)
	}

	// A plain client (no token) fetches the object with reportd's headers.
	resp, err = http.Get(loc)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, pdf) {
		t.Fatalf("following Location: %s, %d bytes", resp.Status, len(got))
	}
	if d, ct := resp.Header.Get("Content-Disposition"), resp.Header.Get("Content-Type"); d != wantDisp || ct != wantType {
		t.Errorf("from the bucket: Content-Disposition %q, Content-Type %q; reportd sends %q, %q", d, ct, wantDisp, wantType)
	}

	// A Range request follows the redirect and is answered by the bucket.
	req, _ := http.NewRequest("GET", download(pdfID), nil)
	req.Header.Set("Range", "bytes=50000-50999")
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(got, pdf[50000:51000]) ||
		resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 50000-50999/%d", len(pdf)) {
		t.Errorf("Range through the redirect: %s %q, %d bytes", resp.Status, resp.Header.Get("Content-Range"), len(got))
	}
	if resp.Request.URL.Host != c.S3.Endpoint {
		t.Errorf("the range came from %s, not the bucket", resp.Request.URL.Host)
	}

	// HTML and sites are never redirected: reportd serves them.
	for _, tc := range []struct {
		id       int64
		wantType string
	}{{htmlID, "text/html"}, {siteID, "application/zip"}} {
		resp, err := noFollow.Get(download(tc.id))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.wantType) {
			t.Errorf("download %d: %s %q, want 200 from reportd", tc.id, resp.Status, resp.Header.Get("Content-Type"))
		}
		if tc.id == htmlID && !bytes.Equal(got, html) {
			t.Errorf("html download: %d bytes differ", len(got))
		}
	}
	// The preview is reportd's too.
	resp, err = noFollow.Get(fmt.Sprintf("%s/api/reports/%d/preview", base, pdfID))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("preview: %s, want 200", resp.Status)
	}
}

// TestPresignConfig: s3.presign_downloads belongs to storage: postgres+s3,
// and s3.presign_ttl is bounded.
func TestPresignConfig(t *testing.T) {
	_, err := loadArgs(t, []string{"REPORTD_S3_PRESIGN_DOWNLOADS=true"}, "--config", "/dev/null")
	if err == nil || !strings.Contains(err.Error(), "s3.presign_downloads") || !strings.Contains(err.Error(), "postgres+s3") {
		t.Errorf("with storage: bolt: %v", err)
	}
	env := []string{"REPORTD_STORAGE=postgres+s3", "REPORTD_POSTGRES_DSN=postgres://a@b/c", "REPORTD_S3_ENDPOINT=h:1",
		"REPORTD_S3_BUCKET=b", "REPORTD_S3_ACCESS_KEY=a", "REPORTD_S3_SECRET_KEY=s", "REPORTD_S3_PRESIGN_DOWNLOADS=true"}
	c, err := loadArgs(t, env, "--config", "/dev/null")
	if err != nil || !c.S3.PresignDownloads || c.S3.PresignTTL.String() != "5m0s" {
		t.Fatalf("postgres+s3: %v, %+v", err, c.S3)
	}
	for ttl, ok := range map[string]bool{"59s": false, "1m": true, "12h": true, "12h1s": false} {
		_, err := loadArgs(t, append(env, "REPORTD_S3_PRESIGN_TTL="+ttl), "--config", "/dev/null")
		if ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "s3.presign_ttl")) {
			t.Errorf("presign_ttl %s: %v", ttl, err)
		}
	}
}
