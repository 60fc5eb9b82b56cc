package httpapi_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/sniff"
)

// An id is parsed by one rule wherever it comes from: "+1" was refused in
// the path but accepted as ?projectId= and as a multipart field.
func TestOneIDRule(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	if p.ID != 1 {
		t.Fatalf("first project has id %d", p.ID)
	}
	for _, raw := range []string{"+1", " 1", "1.0", "0x1", "-1", "0"} {
		t.Run(fmt.Sprintf("%q", raw), func(t *testing.T) {
			wantError(t, e.Get("/api/projects/"+urlEscape(raw)), report.Validation)
			wantError(t, e.Get("/api/reports?projectId="+urlEscape(raw)), report.Validation)
			body, ct := apitest.Multipart(
				apitest.Part{Name: "projectId", Data: []byte(raw)},
				apitest.Part{Name: "fileType", Data: []byte("md")},
				apitest.Part{Name: "file", FileName: "a.md", Data: []byte("# a")},
			)
			wantError(t, e.Do("POST", "/api/reports", body, ct), report.Validation)
		})
	}
	if len(e.Tree()) != 0 {
		t.Fatalf("a refused upload left files: %v", e.Tree())
	}
	e.MustUpload(1, "a.md", report.MD, []byte("# a"))
	if r := e.Get("/api/reports?projectId=1"); r.StatusCode != 200 {
		t.Fatalf("?projectId=1: %d %s", r.StatusCode, r.Body)
	}
}

func urlEscape(s string) string {
	var b bytes.Buffer
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// The upload refuses exactly the PDFs that /pdf would refuse: %%EOF must
// sit in the last sniff.TrailerWindow bytes at both.
func TestPDFTrailerWindowAgrees(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	pdf := apitest.MinimalPDF()
	near := append(append([]byte{}, pdf...), bytes.Repeat([]byte{' '}, sniff.TrailerWindow-20)...)
	rep := e.MustUpload(p.ID, "near.pdf", report.PDF, near)
	if r := e.Get(fmt.Sprintf("/api/reports/%d/pdf", rep.ID)); r.StatusCode != 200 || !bytes.Equal(r.Body, near) {
		t.Fatalf("accepted PDF not served: %d %s", r.StatusCode, r.Body)
	}
	before := e.Tree()
	far := append(append([]byte{}, pdf...), bytes.Repeat([]byte{' '}, 1500)...)
	wantError(t, e.Upload(p.ID, "far.pdf", report.PDF, far), report.Validation)
	if got := e.Tree(); len(got) != len(before) {
		t.Fatalf("refused upload left files: %v", got)
	}
}

// Names that display differently from what they are (bidi controls) or
// that differ invisibly (zero-width characters) are refused everywhere a
// name is set, and the error names the character.
func TestInvisibleCharactersInNames(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, "ok.html", report.HTML, []byte("<p>x</p>"))
	for _, c := range []struct {
		r    rune
		name string
	}{
		{'\u202e', "RIGHT-TO-LEFT OVERRIDE"},
		{'\u2066', "LEFT-TO-RIGHT ISOLATE"},
		{'\u200f', "RIGHT-TO-LEFT MARK"},
		{'\u200b', "ZERO WIDTH SPACE"},
		{'\u200d', "ZERO WIDTH JOINER"},
		{'\u2060', "WORD JOINER"},
		{'\ufeff', "ZERO WIDTH NO-BREAK SPACE"},
	} {
		want := fmt.Sprintf("U+%04X %s", c.r, c.name)
		check := func(what string, r *apitest.Response) {
			t.Helper()
			wantError(t, r, report.Validation)
			if !bytes.Contains(r.Body, []byte(want)) {
				t.Errorf("%s with %s: error %s does not name the character", what, want, r.Body)
			}
		}
		check("upload", e.Upload(p.ID, "rep"+string(c.r)+"lmth.pdf.html", report.HTML, []byte("<p>x</p>")))
		check("create project", e.PostJSON("POST", "/api/projects", map[string]any{"name": "a" + string(c.r) + "b"}))
		body, ct := apitest.Multipart(apitest.Part{Name: "name", Data: []byte("a" + string(c.r))})
		check("rename project", e.Do("PUT", fmt.Sprintf("/api/projects/%d", p.ID), body, ct))
		check("rename report", e.PostJSON("PUT", fmt.Sprintf("/api/reports/%d", rep.ID), map[string]any{"fileName": string(c.r) + "x.html"}))
	}
	var ps []report.Project
	e.Get("/api/projects").JSON(t, &ps)
	var rs []report.Report
	e.Get("/api/reports").JSON(t, &rs)
	if len(ps) != 1 || ps[0].Name != "p" || len(rs) != 1 || rs[0].FileName != "ok.html" {
		t.Fatalf("a refused name was stored: %+v %+v", ps, rs)
	}
}

// A type change runs every check of an upload on the stored bytes, not
// just the signature: before, a text file starting with "%PDF-" became a
// "PDF" without a trailer, and a PDF with NUL bytes past its first 4 KiB
// became "HTML".
func TestTypeChangeRunsUploadChecks(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	binaryPDF := append(append(append([]byte{}, apitest.MinimalPDF()[:9]...), bytes.Repeat([]byte{'a'}, 8<<10)...), 0)
	binaryPDF = append(binaryPDF, apitest.MinimalPDF()[9:]...)
	for _, c := range []struct {
		from, to string
		ft, tt   report.FileType
		data     []byte
	}{
		{"a.md", "a.pdf", report.MD, report.PDF, []byte("%PDF-1.7 but no trailer")},
		{"b.html", "b.pptx", report.HTML, report.PPTX, []byte("PK\x03\x04 not really a zip")},
		{"c.pdf", "c.html", report.PDF, report.HTML, binaryPDF},
	} {
		rep := e.MustUpload(p.ID, c.from, c.ft, c.data)
		// The same bytes are refused as an upload of the new type...
		wantError(t, e.Upload(p.ID, c.to, c.tt, c.data), report.Validation)
		// ...and so as a type change.
		path := fmt.Sprintf("/api/reports/%d", rep.ID)
		wantError(t, e.PostJSON("PUT", path, map[string]any{"fileName": c.to, "fileType": c.tt}), report.Validation)
		var got report.Report
		e.Get(path).JSON(t, &got)
		if got.FileType != c.ft || got.FileName != c.from || e.Get(got.FilePath).StatusCode != 200 {
			t.Fatalf("%s: refused type change altered the report: %+v", c.from, got)
		}
	}
}

// /api/reports/ping is its own endpoint: other methods there are
// MethodNotAllowedError, not an attempt on report "ping", and Allow lists
// only what works.
func TestPingMethodsAndAllow(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	e.CreateProject("p")
	for _, c := range []struct{ method, path, allow string }{
		{"PUT", "/api/reports/ping", "GET, HEAD, OPTIONS"},
		{"DELETE", "/api/reports/ping", "GET, HEAD, OPTIONS"},
		{"POST", "/api/reports/ping", "GET, HEAD, OPTIONS"},
		{"PATCH", "/api/reports/ping", "GET, HEAD, OPTIONS"},
		{"POST", "/api/reports/1", "GET, HEAD, PUT, DELETE, OPTIONS"},
		{"PATCH", "/api/projects", "GET, HEAD, POST, OPTIONS"},
		{"DELETE", "/api/openapi.json", "GET, HEAD, OPTIONS"},
	} {
		r := e.Do(c.method, c.path, bytes.NewReader([]byte(`{}`)), "application/json")
		wantError(t, r, report.MethodNotAllowed)
		if got := r.Header.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	if r := e.Get("/api/reports/ping"); r.StatusCode != 200 {
		t.Fatalf("GET ping: %d", r.StatusCode)
	}
	// A preflight names the same methods as the 405's Allow.
	for path, allow := range map[string]string{
		"/api/reports/ping": "GET, HEAD, OPTIONS",
		"/api/reports/1":    "GET, HEAD, PUT, DELETE, OPTIONS",
		"/api/projects":     "GET, HEAD, POST, OPTIONS",
		"/metrics":          "GET, HEAD, OPTIONS",
	} {
		r := e.Do("OPTIONS", path, nil, "")
		if r.StatusCode != 204 || r.Header.Get("Allow") != allow || r.Header.Get("Access-Control-Allow-Methods") != allow {
			t.Errorf("OPTIONS %s: %d Allow %q, Access-Control-Allow-Methods %q, want %q", path, r.StatusCode,
				r.Header.Get("Allow"), r.Header.Get("Access-Control-Allow-Methods"), allow)
		}
	}
	wantError(t, e.Do("POST", "/metrics", nil, ""), report.MethodNotAllowed)
}

// A JSON body must be an object: null is refused like [] (it used to
// decode into "no changes" and answer 200).
func TestJSONBodyMustBeObject(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, "a.md", report.MD, []byte("# a"))
	for _, path := range []string{fmt.Sprintf("PUT /api/reports/%d", rep.ID), "POST /api/projects"} {
		method, url, _ := bytes.Cut([]byte(path), []byte(" "))
		var msgs []string
		for _, body := range []string{"[]", "null", " \n null ", `"x"`, "1"} {
			r := e.Do(string(method), string(url), bytes.NewReader([]byte(body)), "application/json")
			wantError(t, r, report.Validation)
			var b struct{ Error string }
			r.JSON(t, &b)
			msgs = append(msgs, b.Error)
		}
		for _, m := range msgs {
			if m != msgs[0] {
				t.Errorf("%s: %q and %q differ", path, m, msgs[0])
			}
		}
	}
	// PUT /api/projects/{id} takes multipart; null in any dress is refused.
	pp := fmt.Sprintf("/api/projects/%d", p.ID)
	wantError(t, e.Do("PUT", pp, bytes.NewReader([]byte("null")), "application/json"), report.Validation)
	wantError(t, e.Do("PUT", pp, bytes.NewReader([]byte("null")), "multipart/form-data; boundary=x"), report.Validation)
	wantError(t, e.Do("PUT", pp, nil, "multipart/form-data; boundary=x"), report.Validation)
}

// Text uploads are checked for NUL bytes over the whole file, not just
// the first 4 KiB, in the pass that stores them.
func TestNULAnywhereInText(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	for _, at := range []int{0, 4095, 4096, 300 << 10, 2<<20 - 1} {
		data := bytes.Repeat([]byte("<p>x</p>\n"), (2<<20)/9+1)[:2<<20]
		data[at] = 0
		r := e.Upload(p.ID, "a.html", report.HTML, data)
		wantError(t, r, report.Validation)
		if !bytes.Contains(r.Body, []byte(fmt.Sprintf("offset %d", at))) {
			t.Errorf("NUL at %d: %s", at, r.Body)
		}
	}
	if len(e.Tree()) != 0 {
		t.Fatalf("refused uploads left files: %v", e.Tree())
	}
	e.MustUpload(p.ID, "ok.html", report.HTML, bytes.Repeat([]byte("<p>x</p>\n"), 300_000))
}
