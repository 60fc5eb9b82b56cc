package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
)

var localTimeRe = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$`)

func wantError(t *testing.T, r *apitest.Response, kind report.Kind) {
	t.Helper()
	if r.StatusCode != http.StatusInternalServerError {
		t.Errorf("status %d, want 500 (spec mode)", r.StatusCode)
	}
	var body struct{ Error, Type string }
	r.JSON(t, &body)
	if body.Type != string(kind) || !strings.HasPrefix(body.Error, string(kind)+": ") || len(body.Error) <= len(kind)+2 {
		t.Errorf("error body %s, want type %s and error %q", r.Body, kind, string(kind)+": ...")
	}
	if r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("no CORS header on error")
	}
}

func TestPing(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	r := e.Get("/api/reports/ping")
	var p map[string]string
	r.JSON(t, &p)
	if r.StatusCode != 200 || p["version"] != "test" {
		t.Fatalf("ping: %d %s", r.StatusCode, r.Body)
	}
	ts, err := time.Parse(time.RFC3339, p["timestamp"])
	if err != nil || !strings.HasSuffix(p["timestamp"], "Z") || time.Since(ts) > time.Minute {
		t.Fatalf("timestamp %q: %v", p["timestamp"], err)
	}
}

func TestProjectLifecycle(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	r := e.PostJSON("POST", "/api/projects", map[string]any{"name": "Alpha"})
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %s", r.StatusCode, r.Body)
	}
	var raw map[string]any
	r.JSON(t, &raw)
	for _, k := range []string{"id", "name", "description", "createdAt", "coverImage", "reportCount", "todayNewReports"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("create response lacks %q: %s", k, r.Body)
		}
	}
	if raw["description"] != nil || raw["coverImage"] != nil || !localTimeRe.MatchString(raw["createdAt"].(string)) {
		t.Errorf("unset fields must be null and createdAt zone-less: %s", r.Body)
	}
	id := int64(raw["id"].(float64))

	desc := "weekly"
	body, ct := apitest.Multipart(
		apitest.Part{Name: "name", Data: []byte("Beta")},
		apitest.Part{Name: "description", Data: []byte(desc)},
		apitest.Part{Name: "coverImage", FileName: "c.png", Data: apitest.PNG()})
	r = e.Do("PUT", fmt.Sprintf("/api/projects/%d", id), body, ct)
	var p report.Project
	r.JSON(t, &p)
	if r.StatusCode != 200 || p.Name != "Beta" || *p.Description != desc || p.CoverImage == nil {
		t.Fatalf("update: %d %s", r.StatusCode, r.Body)
	}
	if !regexp.MustCompile(fmt.Sprintf(`^/uploads/covers/%d/[A-Za-z0-9._-]+\.png$`, id)).MatchString(*p.CoverImage) {
		t.Fatalf("cover path %q", *p.CoverImage)
	}
	cover := e.Get(*p.CoverImage)
	if cover.StatusCode != 200 || !bytes.Equal(cover.Body, apitest.PNG()) || cover.Header.Get("Content-Type") != "image/png" ||
		cover.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("static cover: %d %v", cover.StatusCode, cover.Header)
	}
	// A new cover replaces the old file; name-only updates keep the cover.
	old := *p.CoverImage
	body, ct = apitest.Multipart(apitest.Part{Name: "coverImage", FileName: "d.png", Data: apitest.PNG()})
	r = e.Do("PUT", fmt.Sprintf("/api/projects/%d", id), body, ct)
	r.JSON(t, &p)
	if *p.CoverImage == old || e.Get(old).StatusCode == 200 || e.Get(*p.CoverImage).StatusCode != 200 {
		t.Fatalf("cover replace: old %s new %s", old, *p.CoverImage)
	}
	body, ct = apitest.Multipart(apitest.Part{Name: "name", Data: []byte("Gamma")})
	r = e.Do("PUT", fmt.Sprintf("/api/projects/%d", id), body, ct)
	var p2 report.Project
	r.JSON(t, &p2)
	if p2.Name != "Gamma" || p2.CoverImage == nil || *p2.CoverImage != *p.CoverImage || *p2.Description != desc {
		t.Fatalf("partial update: %s", r.Body)
	}

	rep := e.MustUpload(id, "a.md", report.MD, []byte("# hi"))
	r = e.Get(fmt.Sprintf("/api/projects/%d", id))
	r.JSON(t, &p)
	if p.ReportCount != 1 || p.TodayNewReports != 1 {
		t.Fatalf("counts after upload: %s", r.Body)
	}
	r = e.Do("DELETE", fmt.Sprintf("/api/projects/%d", id), nil, "")
	if r.StatusCode != http.StatusNoContent || len(r.Body) != 0 {
		t.Fatalf("delete: %d %s", r.StatusCode, r.Body)
	}
	wantError(t, e.Get(fmt.Sprintf("/api/projects/%d", id)), report.NotFound)
	wantError(t, e.Get(fmt.Sprintf("/api/reports/%d", rep.ID)), report.NotFound)
	if _, err := os.Stat(filepath.Join(e.DataDir, "uploads/covers", fmt.Sprint(id))); !os.IsNotExist(err) {
		t.Errorf("cover folder survived the project: %v", err)
	}
	if tree := e.Tree(); len(tree) != 0 {
		t.Errorf("files left after cascade delete: %v", tree)
	}
}

func TestCoverFromPOST(t *testing.T) {
	img := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(apitest.PNG())
	}))
	defer img.Close()
	b64 := base64.StdEncoding.EncodeToString(apitest.PNG())
	for name, tc := range map[string]struct {
		cover        string
		allowPrivate bool
		ok           bool
	}{
		"data URL":            {"data:image/png;base64," + b64, false, true},
		"bare base64":         {b64, false, true},
		"URL":                 {img.URL + "/logo.png", true, true},
		"loopback URL denied": {img.URL + "/logo.png", false, false},
		"not an image":        {base64.StdEncoding.EncodeToString([]byte("hello")), false, false},
	} {
		t.Run(name, func(t *testing.T) {
			e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.CoverFetch.AllowPrivate = tc.allowPrivate }})
			r := e.PostJSON("POST", "/api/projects", map[string]any{"name": "p", "coverImage": tc.cover})
			if !tc.ok {
				wantError(t, r, report.Validation)
				if ps := e.Get("/api/projects"); string(ps.Body) != "[]\n" || len(e.Tree()) != 0 {
					t.Fatalf("half-stored after refusal: %s %v", ps.Body, e.Tree())
				}
				return
			}
			var p report.Project
			r.JSON(t, &p)
			if r.StatusCode != 201 || p.CoverImage == nil || !strings.HasPrefix(*p.CoverImage, fmt.Sprintf("/uploads/covers/%d/", p.ID)) {
				t.Fatalf("%d %s", r.StatusCode, r.Body)
			}
			if got := e.Get(*p.CoverImage); !bytes.Equal(got.Body, apitest.PNG()) {
				t.Fatalf("stored cover differs")
			}
		})
	}
}

func TestReportsEveryType(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	html := []byte("<h1>Héllo 你好</h1><script>alert(1)</script>")
	cases := []struct {
		name  string
		t     report.FileType
		data  []byte
		ctype string
	}{
		{"index.html", report.HTML, html, "text/html; charset=utf-8"},
		{"notes.md", report.MD, []byte("# Notes\n\n* é"), "text/markdown; charset=utf-8"},
		{"doc.pdf", report.PDF, apitest.MinimalPDF(), "application/pdf"},
		{"deck.pptx", report.PPTX, apitest.FakePPTX(), "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
		{"old.ppt", report.PPT, apitest.OLE2(), "application/vnd.ms-powerpoint"},
	}
	for _, c := range cases {
		r := e.Upload(p.ID, c.name, c.t, c.data)
		var raw map[string]any
		r.JSON(t, &raw)
		if r.StatusCode != 201 || raw["fileContent"] != nil || raw["fileName"] != c.name || raw["fileType"] != string(c.t) ||
			raw["projectId"] != float64(p.ID) || !localTimeRe.MatchString(raw["uploadTime"].(string)) {
			t.Fatalf("upload %s: %d %s", c.name, r.StatusCode, r.Body)
		}
		id := int64(raw["id"].(float64))
		if raw["filePath"] != fmt.Sprintf("/uploads/reports/%d.%s", id, c.t) {
			t.Fatalf("filePath %v", raw["filePath"])
		}
		d := e.Get(fmt.Sprintf("/api/reports/%d", id))
		var rep report.Report
		d.JSON(t, &rep)
		if c.t.IsText() != (rep.FileContent != nil) || (rep.FileContent != nil && *rep.FileContent != string(c.data)) {
			t.Fatalf("detail fileContent for %s: %s", c.t, d.Body)
		}
		pv := e.Get(fmt.Sprintf("/api/reports/%d/preview", id))
		if pv.StatusCode != 200 || pv.Header.Get("Content-Type") != c.ctype || pv.Header.Get("Content-Disposition") != "inline" ||
			!bytes.Equal(pv.Body, c.data) || pv.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("preview %s: %d %v", c.name, pv.StatusCode, pv.Header)
		}
		if c.t == report.HTML && !strings.HasPrefix(pv.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Fatalf("HTML preview without sandbox: %v", pv.Header)
		}
		dl := e.Get(fmt.Sprintf("/api/reports/%d/download", id))
		if dl.Header.Get("Content-Disposition") != `attachment; filename="`+c.name+`"` || !bytes.Equal(dl.Body, c.data) {
			t.Fatalf("download %s: %v", c.name, dl.Header)
		}
		st := e.Get(rep.FilePath)
		if st.StatusCode != 200 || !bytes.Equal(st.Body, c.data) || st.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("static %s: %d", rep.FilePath, st.StatusCode)
		}
		if c.t == report.HTML && !strings.HasPrefix(st.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Fatalf("static HTML without sandbox")
		}
	}
	var list []map[string]any
	e.Get(fmt.Sprintf("/api/reports?projectId=%d", p.ID)).JSON(t, &list)
	if len(list) != len(cases) {
		t.Fatalf("list has %d", len(list))
	}
	for i, r := range list {
		if v, ok := r["fileContent"]; !ok || v != nil {
			t.Errorf("list item must carry fileContent: null: %v", r)
		}
		if i > 0 && r["id"].(float64) <= list[i-1]["id"].(float64) {
			t.Errorf("list not in id order")
		}
	}
	var projects []report.Project
	e.Get("/api/projects").JSON(t, &projects)
	if projects[0].ReportCount != int64(len(cases)) || projects[0].TodayNewReports != int64(len(cases)) {
		t.Fatalf("counts %+v", projects[0])
	}
}

func TestPreviewRangeAndConditional(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, "a.md", report.MD, []byte("0123456789"))
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/reports/%d/preview", e.URL, rep.ID), nil)
	req.Header.Set("Range", "bytes=2-4")
	r := e.Send(req)
	if r.StatusCode != http.StatusPartialContent || string(r.Body) != "234" {
		t.Fatalf("range: %d %q", r.StatusCode, r.Body)
	}
	etag := r.Header.Get("ETag")
	req, _ = http.NewRequest("GET", fmt.Sprintf("%s/api/reports/%d/preview", e.URL, rep.ID), nil)
	req.Header.Set("If-None-Match", etag)
	if r := e.Send(req); etag == "" || r.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional: etag %q status %d", etag, r.StatusCode)
	}
}

func TestDownloadNonASCIIName(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, `季度 "报告".md`, report.MD, []byte("x"))
	cd := e.Get(fmt.Sprintf("/api/reports/%d/download", rep.ID)).Header.Get("Content-Disposition")
	want := `attachment; filename="__ ____.md"; filename*=UTF-8''%E5%AD%A3%E5%BA%A6%20%22%E6%8A%A5%E5%91%8A%22.md`
	if cd != want {
		t.Fatalf("Content-Disposition\n got %s\nwant %s", cd, want)
	}
}

func TestPDFEndpoint(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	pdf := e.MustUpload(p.ID, "Q1 report.pdf", report.PDF, apitest.MinimalPDF())
	r := e.Get(fmt.Sprintf("/api/reports/%d/pdf", pdf.ID))
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/pdf" || !bytes.Equal(r.Body, apitest.MinimalPDF()) ||
		r.Header.Get("Content-Disposition") != `inline; filename="Q1 report.pdf"` {
		t.Fatalf("pdf passthrough: %d %v", r.StatusCode, r.Header)
	}
	md := e.MustUpload(p.ID, "a.md", report.MD, []byte("# x"))
	// No engines in this stack: a clear ConversionError, not a crash.
	wantError(t, e.Get(fmt.Sprintf("/api/reports/%d/pdf", md.ID)), report.Conversion)
	// Print options that cannot apply are refused, not ignored; parameters
	// that are not print options leave the response as it was.
	wantError(t, e.Get(fmt.Sprintf("/api/reports/%d/pdf?landscape=1", pdf.ID)), report.Validation)
	wantError(t, e.Get(fmt.Sprintf("/api/reports/%d/pdf?pageRanges=1", pdf.ID)), report.Conversion) // no engines here
	wantError(t, e.Get(fmt.Sprintf("/api/reports/%d/pdf?waitForSelector=%%23x", md.ID)), report.Validation)
	wantError(t, e.Get(fmt.Sprintf("/api/reports/%d/pdf?scope=site", md.ID)), report.Validation)
	wantError(t, e.Get(fmt.Sprintf("/api/reports/%d/pdf?scope=pages", pdf.ID)), report.Validation)
	r2 := e.Get(fmt.Sprintf("/api/reports/%d/pdf?scale=1&printBackground=true", pdf.ID))
	if r2.StatusCode != 200 || !bytes.Equal(r2.Body, r.Body) || r2.Header.Get("Etag") != r.Header.Get("Etag") {
		t.Fatalf("default-valued options changed the response: %d %v", r2.StatusCode, r2.Header)
	}
}

func TestUpdateReport(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, "a.html", report.HTML, []byte("<p>x</p>"))
	path := fmt.Sprintf("/api/reports/%d", rep.ID)
	var got report.Report
	r := e.PostJSON("PUT", path, map[string]any{"fileName": "renamed.html"})
	r.JSON(t, &got)
	if r.StatusCode != 200 || got.FileName != "renamed.html" || got.FileType != report.HTML || got.FileContent != nil {
		t.Fatalf("rename: %d %s", r.StatusCode, r.Body)
	}
	r = e.PostJSON("PUT", path, map[string]any{"fileName": "notes.md", "fileType": "md"})
	r.JSON(t, &got)
	if r.StatusCode != 200 || got.FilePath != fmt.Sprintf("/uploads/reports/%d.md", rep.ID) {
		t.Fatalf("retype: %d %s", r.StatusCode, r.Body)
	}
	if e.Get(rep.FilePath).StatusCode == 200 || string(e.Get(got.FilePath).Body) != "<p>x</p>" {
		t.Fatalf("retype must move the file")
	}
	wantError(t, e.PostJSON("PUT", path, map[string]any{"fileType": "html"}), report.Validation) // notes.md is not html
	wantError(t, e.PostJSON("PUT", path, map[string]any{"fileName": "x.pdf", "fileType": "pdf"}), report.Validation)
	r = e.PostJSON("PUT", path, map[string]any{})
	if r.StatusCode != 200 {
		t.Fatalf("empty update: %d %s", r.StatusCode, r.Body)
	}
	if r := e.Do("DELETE", path, nil, ""); r.StatusCode != 204 {
		t.Fatalf("delete: %d", r.StatusCode)
	}
	wantError(t, e.Get(path), report.NotFound)
	if len(e.Tree()) != 0 {
		t.Fatalf("file left after delete: %v", e.Tree())
	}
}

func TestFileNameTraversalKeepsBaseName(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, `../../etc\evil.html`, report.HTML, []byte("x"))
	if rep.FileName != "evil.html" || rep.FilePath != fmt.Sprintf("/uploads/reports/%d.html", rep.ID) {
		t.Fatalf("stored %+v", rep)
	}
	for _, path := range []string{"/uploads/../reportd.db", "/uploads/%2e%2e/reportd.db", "/uploads/reports/..%2freportd.db", "/uploads/reports/", "/uploads/covers"} {
		req, _ := http.NewRequest("GET", e.URL+path, nil)
		req.URL.RawPath = ""
		req.URL.Opaque = path
		r := e.Send(req)
		if r.StatusCode == 200 || bytes.Contains(r.Body, []byte("bolt")) {
			t.Errorf("%s answered %d", path, r.StatusCode)
		}
	}
	// A symlink planted in uploads/ must not lead outside the data directory.
	outside := filepath.Join(t.TempDir(), "secret.html")
	os.WriteFile(outside, []byte("secret"), 0o600)
	os.Symlink(outside, filepath.Join(e.DataDir, "uploads/reports/link.html"))
	if r := e.Get("/uploads/reports/link.html"); r.StatusCode == 200 {
		t.Errorf("symlink escape served: %s", r.Body)
	}
}

func TestUploadLimitStoresNothing(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.MaxUploadBytes = 1000 }})
	p := e.CreateProject("p")
	wantError(t, e.Upload(p.ID, "big.md", report.MD, bytes.Repeat([]byte("a"), 5000)), report.PayloadTooLarge)
	if tree := e.Tree(); len(tree) != 0 {
		t.Fatalf("left behind: %v", tree)
	}
	e.MustUpload(p.ID, "ok.md", report.MD, bytes.Repeat([]byte("a"), 1000))
}

func TestCORSEverywhere(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	req, _ := http.NewRequest("OPTIONS", e.URL+"/api/reports", nil)
	req.Header.Set("Origin", "https://example.org")
	req.Header.Set("Access-Control-Request-Method", "POST")
	r := e.Send(req)
	if r.StatusCode != 204 || r.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("preflight: %d %v", r.StatusCode, r.Header)
	}
	for _, path := range []string{"/api/projects", "/api/nope", "/uploads/covers/1/x.png", "/api/reports/abc"} {
		r := e.Get(path)
		if r.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Content-Disposition") {
			t.Errorf("%s: no CORS headers", path)
		}
	}
	wantError(t, e.Do("PATCH", "/api/projects", nil, ""), report.MethodNotAllowed)
}

func TestConcurrentUploadsAndDeletesKeepCountersExact(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	const n = 48
	ids := make(chan int64, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ids <- e.MustUpload(p.ID, fmt.Sprintf("r%d.md", i), report.MD, []byte(fmt.Sprint(i))).ID
		}(i)
	}
	wg.Wait()
	close(ids)
	deleted := 0
	for id := range ids {
		if id%2 == 0 {
			deleted++
			wg.Add(1)
			go func(id int64) {
				defer wg.Done()
				if r := e.Do("DELETE", fmt.Sprintf("/api/reports/%d", id), nil, ""); r.StatusCode != 204 {
					t.Errorf("delete %d: %d", id, r.StatusCode)
				}
			}(id)
		}
	}
	wg.Wait()
	var got report.Project
	e.Get(fmt.Sprintf("/api/projects/%d", p.ID)).JSON(t, &got)
	var list []report.Report
	e.Get(fmt.Sprintf("/api/reports?projectId=%d", p.ID)).JSON(t, &list)
	want := int64(n - deleted)
	if got.ReportCount != want || got.TodayNewReports != want || int64(len(list)) != want || int64(len(e.Tree())) != want {
		t.Fatalf("counts %d/%d, listed %d, files %d; want %d", got.ReportCount, got.TodayNewReports, len(list), len(e.Tree()), want)
	}
}

func TestReopenFindsEverythingIntact(t *testing.T) {
	dir := t.TempDir()
	e := apitest.Start(t, apitest.Options{DataDir: dir})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, "a.md", report.MD, []byte("persist me"))
	before := e.Get("/api/projects").Body
	e.Close()
	// Leftovers of a crash: a temp file and an unreferenced report file.
	os.WriteFile(filepath.Join(dir, "tmp", "upload-123"), []byte("partial"), 0o600)
	os.WriteFile(filepath.Join(dir, "uploads/reports/999.md"), []byte("orphan"), 0o600)
	e = apitest.Start(t, apitest.Options{DataDir: dir})
	if after := e.Get("/api/projects").Body; !bytes.Equal(before, after) {
		t.Fatalf("projects changed across reopen:\n%s\n%s", before, after)
	}
	if got := e.Get(fmt.Sprintf("/api/reports/%d/download", rep.ID)); string(got.Body) != "persist me" {
		t.Fatalf("content after reopen: %q", got.Body)
	}
	tree := e.Tree()
	if len(tree) != 1 || tree[filepath.Join("uploads/reports", filepath.Base(rep.FilePath))] == 0 {
		t.Fatalf("sweep left %v", tree)
	}
}

// A link inside uploads/ that points elsewhere in the data directory (at
// the database) is refused too, not only links that leave it.
func TestSymlinkToDatabaseRefused(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	os.Symlink("../../reportd.db", filepath.Join(e.DataDir, "uploads/reports/db.md"))
	if r := e.Get("/uploads/reports/db.md"); r.StatusCode == 200 {
		t.Fatalf("database served through a symlink: %d bytes", len(r.Body))
	}
}

// An unsatisfiable Range gets the API's error body, not net/http's text.
func TestBadRangeGetsErrorBody(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, "a.md", report.MD, []byte("0123456789"))
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/reports/%d/preview", e.URL, rep.ID), nil)
	req.Header.Set("Range", "bytes=100-200")
	wantError(t, e.Send(req), report.Validation)
}

// An empty projectId filter means no filter; the Bearer scheme is case-insensitive.
func TestEmptyProjectFilterAndBearerCase(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.Auth.Token = "tok" }})
	req, _ := http.NewRequest("POST", e.URL+"/api/projects", strings.NewReader(`{"name":"p"}`))
	req.Header.Set("Authorization", "bearer tok")
	if r := e.Send(req); r.StatusCode != 201 {
		t.Fatalf("lower-case bearer: %d %s", r.StatusCode, r.Body)
	}
	var list []report.Report
	if r := e.Get("/api/reports?projectId="); r.StatusCode != 200 {
		t.Fatalf("empty projectId: %d %s", r.StatusCode, r.Body)
	} else {
		r.JSON(t, &list)
	}
}
