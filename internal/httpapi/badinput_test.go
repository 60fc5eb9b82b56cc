package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// Limits of the bad-input daemon: small, so the oversize cases are cheap.
const (
	badMaxUpload = 64 << 10
	badMaxCover  = 16 << 10
	badMaxJSON   = 128 << 10
)

// badCase is one hostile request and the error kind it must produce.
type badCase struct {
	name string
	call apiCall
	kind report.Kind
}

// seeded is what the bad-input daemon holds before every case.
type seeded struct {
	project, htmlReport, pdfReport int64
}

// seedBadInputEnv creates one project with a cover and two reports, and
// plants symlinks in uploads/ that point outside the data directory.
func seedBadInputEnv(t *testing.T, e *apiEnv) seeded {
	t.Helper()
	png := imageBytes(t, "png")
	r := e.do(jsonCall("POST", "/api/projects", map[string]any{"name": "Seed", "coverImage": base64.StdEncoding.EncodeToString(png)}))
	wantStatus(t, r, 201)
	p := decode[report.Project](t, r)
	pid := fmt.Sprint(p.ID)
	r = e.do(multipartCall("POST", "/api/reports", field("projectId", pid), field("fileType", "html"), file("file", "a.html", []byte("<p>hi</p>"))))
	wantStatus(t, r, 201)
	h := decode[report.Report](t, r)
	r = e.do(multipartCall("POST", "/api/reports", field("projectId", pid), field("fileType", "pdf"), file("file", "a.pdf", samplePDF)))
	wantStatus(t, r, 201)
	pdf := decode[report.Report](t, r)

	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.html")
	if err := os.WriteFile(secret, []byte("<p>secret</p>"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"uploads/reports/evil.html":      secret,
		"uploads/covers/" + pid + "/out": outside,
		"uploads/reports/db.pdf":         filepath.Join(e.dir, "reportd.db"),
	} {
		if err := os.Symlink(target, filepath.Join(e.dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return seeded{project: p.ID, htmlReport: h.ID, pdfReport: pdf.ID}
}

func badCases(t *testing.T, s seeded) []badCase {
	pid := fmt.Sprint(s.project)
	hid, pdfID := fmt.Sprint(s.htmlReport), fmt.Sprint(s.pdfReport)
	raw := func(method, path, ctype, body string) apiCall {
		return apiCall{method: method, path: path, ctype: ctype, body: []byte(body), raw: true}
	}
	postJSON := func(body string) apiCall { return raw("POST", "/api/projects", "application/json", body) }
	putReport := func(id, body string) apiCall { return raw("PUT", "/api/reports/"+id, "application/json", body) }
	upload := func(parts ...formPart) apiCall {
		c := multipartCall("POST", "/api/reports", parts...)
		c.raw = true
		return c
	}
	uploadFile := func(name, typ string, data []byte) apiCall {
		return upload(field("projectId", pid), field("fileType", typ), file("file", name, data))
	}
	putProject := func(id string, parts ...formPart) apiCall {
		c := multipartCall("PUT", "/api/projects/"+id, parts...)
		c.raw = true
		return c
	}
	get := func(path string) apiCall { return raw("GET", path, "", "") }
	cover := func(v string) apiCall {
		b, _ := json.Marshal(map[string]string{"name": "c", "coverImage": v})
		return raw("POST", "/api/projects", "application/json", string(b))
	}
	pngHead := imageBytes(t, "png")
	bigPNG := append(append([]byte{}, pngHead...), bytes.Repeat([]byte{0}, badMaxCover)...)
	zipNoPresentation := zipBytes(t, "[Content_Types].xml", "word/document.xml")
	multipartNoBoundary := raw("POST", "/api/reports", "multipart/form-data", "--x\r\n\r\n--x--\r\n")
	truncated := upload(field("projectId", pid), field("fileType", "md"), file("file", "a.md", []byte("# hi")))
	truncated.body = truncated.body[:len(truncated.body)-10]
	long := strings.Repeat("n", 252) + ".html" // 257 bytes

	v, nf, big, mna := report.Validation, report.NotFound, report.PayloadTooLarge, report.MethodNotAllowed
	return []badCase{
		// POST /api/projects: JSON.
		{"create: malformed JSON", postJSON(`{"name":`), v},
		{"create: array body", postJSON(`[]`), v},
		{"create: string body", postJSON(`"x"`), v},
		{"create: null body", postJSON(`null`), v},
		{"create: name is a number", postJSON(`{"name":5}`), v},
		{"create: description is an object", postJSON(`{"name":"a","description":{}}`), v},
		{"create: coverImage is a bool", postJSON(`{"name":"a","coverImage":true}`), v},
		{"create: name missing", postJSON(`{"description":"d"}`), v},
		{"create: name blank", postJSON(`{"name":"   "}`), v},
		{"create: name too long", postJSON(`{"name":"` + strings.Repeat("é", 201) + `"}`), v},
		{"create: description too long", postJSON(`{"name":"a","description":"` + strings.Repeat("d", 5001) + `"}`), v},
		{"create: two objects", postJSON(`{"name":"a"}{"name":"b"}`), v},
		{"create: trailing garbage", postJSON(`{"name":"a"} x`), v},
		{"create: empty body", postJSON(``), v},
		{"create: multipart body", func() apiCall {
			c := multipartCall("POST", "/api/projects", field("name", "a"))
			c.raw = true
			return c
		}(), v},
		{"create: oversized JSON", postJSON(`{"name":"a","description":"` + strings.Repeat("d", badMaxJSON) + `"}`), big},
		{"cover: bad base64", cover("!!!not base64!!!"), v},
		{"cover: not an image", cover(base64.StdEncoding.EncodeToString([]byte("GIF88 not really"))), v},
		{"cover: data URL not base64", cover("data:image/png,abc"), v},
		{"cover: data URL without comma", cover("data:image/png;base64"), v},
		{"cover: URL to 127.0.0.1", cover("http://127.0.0.1:9/cover.png"), v},
		{"cover: URL to localhost", cover("http://localhost:9/cover.png"), v},
		{"cover: URL to [::1]", cover("http://[::1]:9/cover.png"), v},
		{"cover: URL to 0.0.0.0", cover("https://0.0.0.0/cover.png"), v},
		{"cover: URL without host", cover("http:///cover.png"), v},
		{"cover: too large", cover(base64.StdEncoding.EncodeToString(bigPNG)), big},

		// PUT /api/reports/{id}: JSON.
		{"update report: malformed JSON", putReport(hid, `{"fileName":`), v},
		{"update report: bad fileType", putReport(hid, `{"fileType":"exe"}`), v},
		{"update report: fileType with inner space", putReport(hid, `{"fileType":"h tml"}`), v},
		{"update report: fileType is a number", putReport(hid, `{"fileType":5}`), v},
		{"update report: fileName is an array", putReport(hid, `{"fileName":["a.html"]}`), v},
		{"update report: extension mismatch", putReport(hid, `{"fileName":"a.pdf"}`), v},
		{"update report: no extension", putReport(hid, `{"fileName":"README"}`), v},
		{"update report: name too long", putReport(hid, `{"fileName":"`+long+`"}`), v},
		{"update report: name is ..", putReport(hid, `{"fileName":".."}`), v},
		{"update report: control character", putReport(hid, `{"fileName":"a\u0001.html"}`), v},
		{"update report: html bytes as pdf", putReport(hid, `{"fileName":"a.pdf","fileType":"pdf"}`), v},
		{"update report: pdf bytes as pptx", putReport(pdfID, `{"fileName":"a.pptx","fileType":"pptx"}`), v},
		{"update report: oversized JSON", putReport(hid, `{"fileName":"`+strings.Repeat("a", 1<<20)+`.html"}`), big},
		{"update report: unknown id", putReport("999", `{"fileName":"a.html"}`), nf},
		{"update report: id not numeric", putReport("abc", `{}`), v},

		// POST /api/reports: multipart.
		{"upload: JSON body", raw("POST", "/api/reports", "application/json", `{"projectId":1}`), v},
		{"upload: no content type", raw("POST", "/api/reports", "", "x"), v},
		{"upload: multipart without boundary", multipartNoBoundary, v},
		{"upload: truncated multipart", truncated, v},
		{"upload: file missing", upload(field("projectId", pid), field("fileType", "md")), v},
		{"upload: projectId missing", upload(field("fileType", "md"), file("file", "a.md", []byte("x"))), v},
		{"upload: fileType missing", upload(field("projectId", pid), file("file", "a.md", []byte("x"))), v},
		{"upload: projectId not numeric", upload(field("projectId", "abc"), field("fileType", "md"), file("file", "a.md", []byte("x"))), v},
		{"upload: projectId zero", upload(field("projectId", "0"), field("fileType", "md"), file("file", "a.md", []byte("x"))), v},
		{"upload: projectId negative", upload(field("projectId", "-4"), field("fileType", "md"), file("file", "a.md", []byte("x"))), v},
		{"upload: projectId unknown", upload(field("projectId", "999"), field("fileType", "md"), file("file", "a.md", []byte("x"))), nf},
		{"upload: projectId too long", upload(field("projectId", strings.Repeat("1", 70<<10)), field("fileType", "md"), file("file", "a.md", []byte("x"))), v},
		{"upload: bad fileType", uploadFile("a.docx", "docx", []byte("x")), v},
		{"upload: fileType invalid UTF-8", upload(field("projectId", pid), field("fileType", "\xff\xfe"), file("file", "a.md", []byte("x"))), v},
		{"upload: extension does not match type", uploadFile("a.pdf", "html", []byte("<p>")), v},
		{"upload: no extension", uploadFile("report", "md", []byte("x")), v},
		{"upload: odd extension", uploadFile("a.exe", "html", []byte("x")), v},
		{"upload: double extension", uploadFile("a.html.exe", "html", []byte("x")), v},
		{"upload: name too long", uploadFile(long, "html", []byte("x")), v},
		{"upload: name is only a path", uploadFile("../", "html", []byte("x")), v},
		{"upload: name with control character", uploadFile("a\x01b.md", "md", []byte("x")), v},
		{"upload: empty file", uploadFile("a.md", "md", nil), v},
		{"upload: fake PDF, no header", uploadFile("a.pdf", "pdf", []byte("hello %%EOF")), v},
		{"upload: fake PDF, no trailer", uploadFile("a.pdf", "pdf", []byte("%PDF-1.7\nshort")), v},
		{"upload: fake PPTX, not a zip", uploadFile("a.pptx", "pptx", []byte("PK but not a zip")), v},
		{"upload: fake PPTX, zip without presentation", uploadFile("a.pptx", "pptx", zipNoPresentation), v},
		{"upload: fake PPTX, truncated zip", uploadFile("a.pptx", "pptx", samplePPTX(t)[:40]), v},
		{"upload: fake PPT", uploadFile("a.ppt", "ppt", []byte("not OLE2 at all")), v},
		{"upload: PPTX bytes as PPT", uploadFile("a.ppt", "ppt", samplePPTX(t)), v},
		{"upload: HTML with NUL bytes", uploadFile("a.html", "html", []byte("<p>\x00</p>")), v},
		{"upload: duplicate file parts", upload(field("projectId", pid), field("fileType", "md"), file("file", "a.md", []byte("x")), file("file", "b.md", []byte("y"))), v},
		{"upload: file part without a file name", upload(field("projectId", pid), field("fileType", "md"), formPart{name: "file", data: []byte("x")}), v},
		{"upload: oversized file", uploadFile("big.md", "md", bytes.Repeat([]byte("a"), badMaxUpload+1)), big},
		{"upload: oversized body", uploadFile("big.md", "md", bytes.Repeat([]byte("a"), badMaxUpload+2<<20)), big},

		// PUT /api/projects/{id}: multipart.
		{"update project: JSON body", raw("PUT", "/api/projects/"+pid, "application/json", `{"name":"x"}`), v},
		{"update project: unknown id", putProject("999", field("name", "x")), nf},
		{"update project: id zero", putProject("0", field("name", "x")), v},
		{"update project: name blank", putProject(pid, field("name", "  ")), v},
		{"update project: name part over 64 KiB", putProject(pid, field("name", strings.Repeat("n", 65<<10))), v},
		{"update project: description too long", putProject(pid, field("description", strings.Repeat("d", 5001))), v},
		{"update project: name invalid UTF-8", putProject(pid, field("name", "\xc3\x28")), v},
		{"update project: cover not an image", putProject(pid, file("coverImage", "c.png", []byte("not an image"))), v},
		{"update project: cover too large", putProject(pid, file("coverImage", "c.png", bigPNG)), big},
		{"update project: duplicate covers", putProject(pid, file("coverImage", "a.png", pngHead), file("coverImage", "b.png", pngHead)), v},

		// Ids, unknown paths and methods.
		{"get project: unknown id", get("/api/projects/999"), nf},
		{"get project: id not numeric", get("/api/projects/abc"), v},
		{"get project: id negative", get("/api/projects/-1"), v},
		{"get project: id with plus sign", get("/api/projects/+1"), v},
		{"get project: id overflows int64", get("/api/projects/99999999999999999999"), v},
		{"get project: id is a fraction", get("/api/projects/1.5"), v},
		{"delete project: unknown id", raw("DELETE", "/api/projects/999", "", ""), nf},
		{"delete project: id zero", raw("DELETE", "/api/projects/0", "", ""), v},
		{"get report: unknown id", get("/api/reports/999"), nf},
		{"get report: id zero", get("/api/reports/0"), v},
		{"preview: unknown id", get("/api/reports/999/preview"), nf},
		{"download: unknown id", get("/api/reports/999/download"), nf},
		{"download: id not numeric", get("/api/reports/x/download"), v},
		{"pdf: unknown id", get("/api/reports/999/pdf"), nf},
		{"pdf: unknown paper", get("/api/reports/" + hid + "/pdf?paper=B5"), v},
		{"pdf: landscape not a bool", get("/api/reports/" + hid + "/pdf?landscape=sideways"), v},
		{"pdf: margin without unit", get("/api/reports/" + hid + "/pdf?margin=10"), v},
		{"pdf: margin negative", get("/api/reports/" + hid + "/pdf?margin=-1mm"), v},
		{"pdf: margin five values", get("/api/reports/" + hid + "/pdf?margin=1mm,1mm,1mm,1mm,1mm"), v},
		{"pdf: pageRanges zero", get("/api/reports/" + hid + "/pdf?pageRanges=0"), v},
		{"pdf: pageRanges backwards", get("/api/reports/" + hid + "/pdf?pageRanges=3-1"), v},
		{"pdf: pageRanges garbage", get("/api/reports/" + hid + "/pdf?pageRanges=1.5"), v},
		{"pdf: semicolon in the query", get("/api/reports/" + hid + "/pdf?pageRanges=1;2"), v},
		{"pdf: scale too small", get("/api/reports/" + hid + "/pdf?scale=0.01"), v},
		{"pdf: scale not a number", get("/api/reports/" + hid + "/pdf?scale=big"), v},
		{"pdf: printBackground not a bool", get("/api/reports/" + hid + "/pdf?printBackground=2"), v},
		{"pdf: empty waitForSelector", get("/api/reports/" + hid + "/pdf?waitForSelector="), v},
		{"pdf: repeated paper", get("/api/reports/" + hid + "/pdf?paper=A4&paper=A3"), v},
		{"pdf: options on a PDF report", get("/api/reports/" + pdfID + "/pdf?landscape=true"), v},
		{"pdf: bad option on an unknown id", get("/api/reports/999/pdf?paper=B5"), v},
		{"delete report: unknown id", raw("DELETE", "/api/reports/999", "", ""), nf},
		{"list reports: projectId not numeric", get("/api/reports?projectId=abc"), v},
		{"list reports: projectId negative", get("/api/reports?projectId=-3"), v},
		{"method: PATCH projects", raw("PATCH", "/api/projects", "application/json", `{}`), mna},
		{"method: DELETE collection", raw("DELETE", "/api/projects", "", ""), mna},
		{"method: POST preview", raw("POST", "/api/reports/"+hid+"/preview", "", ""), mna},
		{"method: PUT static file", raw("PUT", "/uploads/reports/"+hid+".html", "text/html", "x"), mna},
		{"unknown API path", get("/api/nothing"), nf},

		// Static files: traversal, encodings, listings, symlinks.
		{"static: dot-dot to the store", get("/uploads/../reportd.db"), nf},
		{"static: encoded dot-dot", get("/uploads/reports/%2e%2e/%2e%2e/reportd.db"), nf},
		{"static: encoded slashes", get("/uploads/reports%2f..%2f..%2freportd.db"), nf},
		{"static: encoded backslashes", get("/uploads/reports/..%5c..%5creportd.db"), nf},
		{"static: NUL byte", get("/uploads/reports/" + hid + ".html%00.png"), nf},
		{"static: double slash", get("/uploads//reports/" + hid + ".html"), nf},
		{"static: listing of uploads", get("/uploads/"), nf},
		{"static: listing of reports", get("/uploads/reports/"), nf},
		{"static: a directory", get("/uploads/covers/" + pid), nf},
		{"static: the temp folder", get("/uploads/../tmp/"), nf},
		{"static: symlink to a file outside", get("/uploads/reports/evil.html"), nf},
		{"static: symlink to a folder outside", get("/uploads/covers/" + pid + "/out/secret.html"), nf},
		{"static: symlink to the store", get("/uploads/reports/db.pdf"), nf},
		{"static: missing file", get("/uploads/reports/424242.pdf"), nf},
	}
}

// snapshot is what a bad request must leave as it was: both lists and
// every file below the data directory except the store itself.
func snapshot(t *testing.T, e *apiEnv) string {
	t.Helper()
	var parts []string
	for _, p := range []string{"/api/projects", "/api/reports"} {
		resp, err := e.client.Get(e.base + p)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		b, _ := json.Marshal(v)
		parts = append(parts, string(b))
	}
	parts = append(parts, treeOf(t, filepath.Join(e.dir, "uploads")), treeOf(t, filepath.Join(e.dir, "tmp")))
	return strings.Join(parts, "\n")
}

// conventionalStatus is the status of each kind under error_status: conventional.
var conventionalStatus = map[report.Kind]int{
	report.Validation: 400, report.NotFound: 404, report.PayloadTooLarge: 413, report.MethodNotAllowed: 405,
}

func TestBadInputs(t *testing.T) {
	for _, mode := range []httpapi.StatusMode{httpapi.StatusSpec, httpapi.StatusConventional} {
		t.Run(string(mode), func(t *testing.T) {
			e := newAPIEnv(t, envOpts{mode: mode, maxUpload: badMaxUpload, maxCover: badMaxCover, maxJSON: badMaxJSON})
			s := seedBadInputEnv(t, e)
			cases := badCases(t, s)
			if len(cases) < 40 {
				t.Fatalf("only %d bad inputs", len(cases))
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					before := snapshot(t, e)
					r := e.do(tc.call)
					want := 500
					if mode == httpapi.StatusConventional {
						want = conventionalStatus[tc.kind]
					}
					if r.status != want {
						t.Fatalf("status %d, want %d: %s", r.status, want, r)
					}
					var body httpapi.ErrorBody
					if err := json.Unmarshal(r.body, &body); err != nil {
						t.Fatalf("body is not {error, type}: %s", r)
					}
					if body.Type != string(tc.kind) || !strings.HasPrefix(body.Error, body.Type+": ") {
						t.Fatalf("got %q / %q, want type %s", body.Type, body.Error, tc.kind)
					}
					if r.header.Get("Access-Control-Allow-Origin") != "*" || r.header.Get("X-Content-Type-Options") != "nosniff" {
						t.Fatalf("missing CORS or nosniff: %v", r.header)
					}
					for _, h := range []string{"Content-Disposition", "Content-Security-Policy", "Etag"} {
						if r.header.Get(h) != "" {
							t.Fatalf("an error carries %s: %v", h, r.header)
						}
					}
					if after := snapshot(t, e); after != before {
						t.Fatalf("the store or data directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
					}
				})
			}
		})
	}
}

// TestTraversalFileNamesKeepBaseName: a path in an upload's file name is not
// refused but reduced to its last element, and the stored file lives at
// /uploads/reports/<id>.<ext> whatever the name said.
func TestTraversalFileNamesKeepBaseName(t *testing.T) {
	e := newAPIEnv(t, envOpts{})
	p := decode[report.Project](t, e.do(jsonCall("POST", "/api/projects", map[string]any{"name": "p"})))
	for name, want := range map[string]string{
		"../../etc/passwd.html":          "passwd.html",
		`..\..\windows\win.ini.md`:       "win.ini.md",
		"/abs/path/report.PDF":           "report.PDF",
		"./reports/../q1 (final).pptx":   "q1 (final).pptx",
		"%2e%2e%2fsecret.html":           "%2e%2e%2fsecret.html",
		"C:\\Users\\me\\Desktop\\d.html": "d.html",
	} {
		typ, _ := report.TypeOfName(want)
		data := map[report.FileType][]byte{report.HTML: []byte("<p>"), report.MD: []byte("#"), report.PDF: samplePDF, report.PPTX: samplePPTX(t)}[typ]
		r := e.do(multipartCall("POST", "/api/reports", field("projectId", fmt.Sprint(p.ID)), field("fileType", string(typ)), file("file", name, data)))
		wantStatus(t, r, 201)
		rep := decode[report.Report](t, r)
		if rep.FileName != want || rep.FilePath != fmt.Sprintf("/uploads/reports/%d.%s", rep.ID, typ) {
			t.Errorf("%q stored as %q at %s, want %q", name, rep.FileName, rep.FilePath, want)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dir, "etc")); err == nil {
		t.Fatal("a traversal name created a folder in the data directory")
	}
}

// TestUnauthorizedIsAnError: with a token configured, a change without it is
// UnauthorizedError (401 in conventional mode) and stores nothing.
func TestUnauthorizedIsAnError(t *testing.T) {
	for mode, want := range map[httpapi.StatusMode]int{httpapi.StatusSpec: 500, httpapi.StatusConventional: 401} {
		e := newAPIEnv(t, envOpts{mode: mode, token: "s3cret"})
		for _, h := range []http.Header{nil, {"Authorization": {"Bearer wrong"}}, {"Authorization": {"s3cret"}}} {
			c := jsonCall("POST", "/api/projects", map[string]any{"name": "x"})
			c.header, c.raw = h, true
			r := e.do(c)
			if r.status != want || decode[httpapi.ErrorBody](t, r).Type != string(report.Unauthorized) ||
				r.header.Get("WWW-Authenticate") == "" || r.header.Get("Access-Control-Allow-Origin") != "*" {
				t.Fatalf("%s %v: %s %v", mode, h, r, r.header)
			}
		}
		c := jsonCall("POST", "/api/projects", map[string]any{"name": "x"})
		c.header = http.Header{"Authorization": {"Bearer s3cret"}}
		wantStatus(t, e.do(c), 201)
		if got := decode[[]report.Project](t, e.do(apiCall{method: "GET", path: "/api/projects"})); len(got) != 1 {
			t.Fatalf("%s: %d projects after one authorized create", mode, len(got))
		}
	}
}
