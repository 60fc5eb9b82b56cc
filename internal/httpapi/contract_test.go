package httpapi_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
	"github.com/reportd/reportd/internal/testbin"
)

// The contract test drives every operation of openapi.json against the real
// handler (bbolt store and data directory in a temp dir, served over
// loopback) and validates each request and response with kin-openapi, so the
// document and the daemon cannot drift apart.

// contractDoc loads and validates the embedded document once. The router
// gets its own copy without servers: the document names the production
// address, the tests run on a random loopback port.
var contractDoc = sync.OnceValues(func() (*openapi3.T, error) {
	ctx := context.Background()
	doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI)
	if err != nil {
		return nil, fmt.Errorf("load openapi.json: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("openapi.json is not a valid OpenAPI document: %w", err)
	}
	return doc, nil
})

func contractRouter(t testing.TB, raw []byte) (*openapi3.T, routers.Router) {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc, r
}

// apiEnv is one daemon: service and HTTP handler over a temp data dir.
type apiEnv struct {
	t       testing.TB
	dir     string
	base    string // http://127.0.0.1:port
	inProc  bool   // the handler runs in this process, without PDF engines
	svc     *service.Service
	client  *http.Client // never follows redirects: a redirect is an answer to check
	handler http.Handler // the same handler, for in-process calls (fuzzing)
	doc     *openapi3.T
	router  routers.Router

	mu   sync.Mutex
	seen map[string]bool // "METHOD /path/template" that answered as documented
}

type envOpts struct {
	mode      httpapi.StatusMode
	maxUpload int64
	maxCover  int64
	maxJSON   int64
	token     string
	// contentURL is httpapi.Config.ContentURL (the content origin).
	contentURL func(id int64, path string) string
	// presign is httpapi.Config.PresignDownload.
	presign func(ctx context.Context, rec report.ReportRecord, disposition, contentType string) (string, bool, error)
	// clientsDir is httpapi.Config.ClientsDir (GET /dl/).
	clientsDir string
}

func newAPIEnv(t testing.TB, o envOpts) *apiEnv {
	t.Helper()
	if _, err := contractDoc(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dfiles, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := boltstore.Open(filepath.Join(dir, "reportd.db"), report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	svc := service.New(service.Config{
		Version:        "contract-test",
		MaxUploadBytes: o.maxUpload,
		MaxCoverBytes:  o.maxCover,
	}, store, dfiles, nil)
	h := httpapi.New(httpapi.Config{ErrorStatus: o.mode, MaxJSONBytes: o.maxJSON, AuthToken: o.token, ContentURL: o.contentURL,
		PresignDownload: o.presign, ClientsDir: o.clientsDir},
		svc, slog.New(slog.DiscardHandler))
	e := &apiEnv{t: t, dir: dir, svc: svc, handler: h, seen: map[string]bool{}}
	e.doc, e.router = contractRouter(t, httpapi.OpenAPI)
	srv := httptest.NewServer(h)
	e.base, e.inProc = srv.URL, true
	e.client = srv.Client()
	e.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	t.Cleanup(func() {
		srv.Close()
		store.Close()
		dfiles.Close()
	})
	return e
}

// apiCall is one request. body is sent as is; raw requests (bad inputs)
// skip request validation but their responses are still validated.
type apiCall struct {
	method, path string
	body         []byte
	ctype        string
	header       http.Header
	raw          bool
}

type apiResp struct {
	status int
	header http.Header
	body   []byte
	op     string // matched operation, "" when the document has none
}

func (r apiResp) String() string {
	return fmt.Sprintf("%d %s %s", r.status, r.header.Get("Content-Type"), truncate(r.body, 300))
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

func (c apiCall) request(base string) *http.Request {
	req, err := http.NewRequest(c.method, base+c.path, bytes.NewReader(c.body))
	if err != nil {
		panic(err)
	}
	if c.ctype != "" {
		req.Header.Set("Content-Type", c.ctype)
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	return req
}

var validateOpts = &openapi3filter.Options{
	IncludeResponseStatus: true,
	AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	MultiError:            true,
}

// do sends c and validates request and response against the document.
func (e *apiEnv) do(c apiCall) apiResp {
	e.t.Helper()
	ctx := context.Background()
	req := c.request(e.base)
	route, params, routeErr := e.router.FindRoute(req)
	if !c.raw {
		if routeErr != nil {
			e.t.Fatalf("%s %s: not in openapi.json: %v", c.method, c.path, routeErr)
		}
		in := &openapi3filter.RequestValidationInput{Request: c.request(e.base), PathParams: params, Route: route, Options: validateOpts}
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			e.t.Fatalf("%s %s: request does not match openapi.json: %v", c.method, c.path, err)
		}
	}
	resp, err := e.client.Do(c.request(e.base))
	if err != nil {
		e.t.Fatalf("%s %s: %v", c.method, c.path, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", c.method, c.path, err)
	}
	out := apiResp{status: resp.StatusCode, header: resp.Header, body: body}
	if routeErr == nil && c.method != http.MethodHead {
		out.op = c.method + " " + route.Path
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: validateOpts},
			Status:                 resp.StatusCode,
			Header:                 resp.Header,
			Options:                validateOpts,
		}
		in.SetBodyBytes(body)
		if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
			e.t.Fatalf("%s %s: response does not match openapi.json: %v\nresponse: %s", c.method, c.path, err, out)
		}
		e.mu.Lock()
		e.seen[out.op] = true
		e.mu.Unlock()
	} else if resp.StatusCode >= 400 {
		// Unrouted paths and methods: the error body must still be the documented one.
		e.checkErrorBody(out)
	}
	return out
}

// checkErrorBody validates an error response that no operation describes
// against the Error schema and the headers every response carries.
func (e *apiEnv) checkErrorBody(r apiResp) {
	e.t.Helper()
	schema := e.doc.Components.Schemas["Error"].Value
	var v any
	if err := json.Unmarshal(r.body, &v); err != nil {
		e.t.Fatalf("error body is not JSON: %s", r)
	}
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		e.t.Fatalf("error body does not match the Error schema: %v\n%s", err, r)
	}
	if got := r.header.Get("Access-Control-Allow-Origin"); got != "*" {
		e.t.Fatalf("error without CORS header: %s", r)
	}
	if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		e.t.Fatalf("error content type: %s", r)
	}
}

// jsonCall builds a JSON request.
func jsonCall(method, path string, v any) apiCall {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return apiCall{method: method, path: path, body: b, ctype: "application/json"}
}

// formPart is one multipart part: a field, or a file when fileName is set.
type formPart struct {
	name, fileName, ctype string
	data                  []byte
}

// quoteEscaper escapes like mime/multipart does: only quote and backslash,
// so control characters and UTF-8 reach the server as they are.
var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

func field(name, v string) formPart { return formPart{name: name, data: []byte(v)} }
func file(name, fileName string, data []byte) formPart {
	return formPart{name: name, fileName: fileName, data: data}
}

func multipartCall(method, path string, parts ...formPart) apiCall {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := `form-data; name="` + quoteEscaper.Replace(p.name) + `"`
		if p.fileName != "" {
			disp += `; filename="` + quoteEscaper.Replace(p.fileName) + `"`
			ct := p.ctype
			if ct == "" {
				ct = "application/octet-stream"
			}
			h.Set("Content-Type", ct)
		}
		h.Set("Content-Disposition", disp)
		w, err := mw.CreatePart(h)
		if err != nil {
			panic(err)
		}
		w.Write(p.data)
	}
	mw.Close()
	return apiCall{method: method, path: path, body: buf.Bytes(), ctype: mw.FormDataContentType()}
}

func decode[T any](t testing.TB, r apiResp) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %T: %v: %s", v, err, r)
	}
	return v
}

func wantStatus(t testing.TB, r apiResp, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d: %s", r.status, want, r)
	}
}

// Sample files of every type, valid by the service's content checks.

func imageBytes(t testing.TB, format string) []byte {
	t.Helper()
	img := image.NewPaletted(image.Rect(0, 0, 2, 2), []color.Color{color.White, color.Black})
	img.SetColorIndex(1, 1, 1)
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var samplePDF = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

var samplePPT = append([]byte("\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1"), bytes.Repeat([]byte{0}, 504)...)

func zipBytes(t testing.TB, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("<x/>"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func samplePPTX(t testing.TB) []byte {
	return zipBytes(t, "[Content_Types].xml", "ppt/presentation.xml", "ppt/slides/slide1.xml")
}

// treeOf lists every file below dir with its size and a digest-like prefix,
// so that "nothing changed" is a string comparison.
func treeOf(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir():
			lines = append(lines, rel+"/")
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			lines = append(lines, rel+" -> "+target)
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s %d %x", rel, len(b), b[:min(len(b), 16)]))
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestContractEveryOperation(t *testing.T) {
	runContractFlow(t, newAPIEnv(t, envOpts{mode: httpapi.StatusSpec}))
}

// runContractFlow exercises every documented operation once or more, with
// assertions on the decisions the schemas cannot express.
func runContractFlow(t *testing.T, e *apiEnv) {
	pngData, jpegData, gifData := imageBytes(t, "png"), imageBytes(t, "jpeg"), imageBytes(t, "gif")

	// Health check.
	ping := decode[map[string]any](t, e.do(apiCall{method: "GET", path: "/api/reports/ping"}))
	if v, _ := ping["version"].(string); v == "" || e.inProc && v != "contract-test" {
		t.Fatalf("ping version %v", ping["version"])
	}

	// Probes: open, and beside ping.
	if r := e.do(apiCall{method: "GET", path: "/livez"}); r.status != 200 || !bytes.Contains(r.body, []byte(`"status":"live"`)) {
		t.Fatalf("livez: %s", r)
	}
	if r := e.do(apiCall{method: "GET", path: "/readyz"}); r.status != 200 && r.status != 503 {
		t.Fatalf("readyz: %s", r)
	}
	// Every engine excluded: what is left (the store) is up.
	if r := e.do(apiCall{method: "GET", path: "/readyz?exclude=chromium&exclude=office"}); r.status != 200 {
		t.Fatalf("readyz without the engines: %s", r)
	}

	if r := e.do(apiCall{method: "GET", path: "/api/projects"}); string(bytes.TrimSpace(r.body)) != "[]" {
		t.Fatalf("empty list must be [], got %s", r)
	}

	// Projects: a data URL cover, bare base64, none.
	desc := "Quarterly reports"
	r := e.do(jsonCall("POST", "/api/projects", map[string]any{"name": "  Alpha  ", "description": desc,
		"coverImage": "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngData)}))
	wantStatus(t, r, 201)
	alpha := decode[report.Project](t, r)
	if alpha.Name != "Alpha" || alpha.Description == nil || *alpha.Description != desc || alpha.CoverImage == nil {
		t.Fatalf("created project: %s", r)
	}
	r = e.do(jsonCall("POST", "/api/projects", map[string]any{"name": "Beta"}))
	wantStatus(t, r, 201)
	beta := decode[report.Project](t, r)
	if !bytes.Contains(r.body, []byte(`"description":null`)) || !bytes.Contains(r.body, []byte(`"coverImage":null`)) {
		t.Fatalf("unset fields must be null, not missing: %s", r)
	}
	r = e.do(jsonCall("POST", "/api/projects", map[string]any{"name": "Gamma", "description": nil,
		"coverImage": base64.RawURLEncoding.EncodeToString(gifData)}))
	wantStatus(t, r, 201)
	gamma := decode[report.Project](t, r)
	if gamma.CoverImage == nil || !strings.HasSuffix(*gamma.CoverImage, ".gif") {
		t.Fatalf("bare base64 GIF cover: %s", r)
	}

	r = e.do(apiCall{method: "GET", path: "/uploads" + strings.TrimPrefix(*alpha.CoverImage, "/uploads")})
	wantStatus(t, r, 200)
	if !bytes.Equal(r.body, pngData) || r.header.Get("Content-Type") != "image/png" {
		t.Fatalf("static cover: %s", r)
	}

	r = e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/projects/%d", alpha.ID)})
	if got := decode[report.Project](t, r); got.Name != "Alpha" || *got.CoverImage != *alpha.CoverImage {
		t.Fatalf("get project: %s", r)
	}

	// PUT with a new cover replaces and removes the old file.
	r = e.do(multipartCall("PUT", fmt.Sprintf("/api/projects/%d", beta.ID),
		field("name", "Beta 2"), field("description", "now described"), file("coverImage", "front page.jpg", jpegData)))
	wantStatus(t, r, 200)
	beta = decode[report.Project](t, r)
	if beta.Name != "Beta 2" || beta.CoverImage == nil || !strings.HasSuffix(*beta.CoverImage, ".jpg") {
		t.Fatalf("put project: %s", r)
	}
	oldCover := *beta.CoverImage
	r = e.do(multipartCall("PUT", fmt.Sprintf("/api/projects/%d", beta.ID), file("coverImage", "c.png", pngData)))
	beta = decode[report.Project](t, r)
	if beta.Name != "Beta 2" || *beta.CoverImage == oldCover {
		t.Fatalf("cover replace: %s", r)
	}
	r = e.do(apiCall{method: "GET", path: oldCover})
	wantStatus(t, r, 500)
	if decode[httpapi.ErrorBody](t, r).Type != string(report.NotFound) {
		t.Fatalf("old cover still served: %s", r)
	}

	// Reports of every type.
	html := []byte("<!doctype html><h1>Grüße</h1><script>alert(1)</script>")
	md := []byte("# Title\n\nSome *markdown*.\n")
	pptx := samplePPTX(t)
	uploads := []struct {
		name string
		typ  report.FileType
		data []byte
	}{
		{"Bericht: Grüße \"Q1\" a=b@c.html", report.HTML, html},
		{"notes.MD", report.MD, md},
		{"paper.pdf", report.PDF, samplePDF},
		{"deck.pptx", report.PPTX, pptx},
		{"old.ppt", report.PPT, samplePPT},
	}
	var reps []report.Report
	for _, u := range uploads {
		r := e.do(multipartCall("POST", "/api/reports",
			field("projectId", strconv.FormatInt(alpha.ID, 10)), field("fileType", string(u.typ)), file("file", u.name, u.data)))
		wantStatus(t, r, 201)
		rep := decode[report.Report](t, r)
		if rep.FileName != u.name || rep.FileType != u.typ || rep.ProjectID != alpha.ID || rep.FileContent != nil {
			t.Fatalf("upload %s: %s", u.name, r)
		}
		if want := fmt.Sprintf("/uploads/reports/%d.%s", rep.ID, u.typ); rep.FilePath != want {
			t.Fatalf("filePath %s, want %s", rep.FilePath, want)
		}
		reps = append(reps, rep)
	}
	// Parts in another order: the file first.
	r = e.do(multipartCall("POST", "/api/reports", file("file", "late.md", md),
		field("fileType", " MD "), field("projectId", strconv.FormatInt(gamma.ID, 10))))
	wantStatus(t, r, 201)
	late := decode[report.Report](t, r)
	if late.FileType != report.MD {
		t.Fatalf("fileType is case-insensitive on input, stored lower-case: %s", r)
	}

	all := decode[[]report.Report](t, e.do(apiCall{method: "GET", path: "/api/reports"}))
	if len(all) != 6 || !slices.IsSortedFunc(all, func(a, b report.Report) int { return int(a.ID - b.ID) }) {
		t.Fatalf("list reports: %+v", all)
	}
	mine := decode[[]report.Report](t, e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports?projectId=%d", alpha.ID)}))
	if len(mine) != 5 {
		t.Fatalf("reports of alpha: %d", len(mine))
	}
	if none := e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports?projectId=%d", beta.ID)}); string(bytes.TrimSpace(none.body)) != "[]" {
		t.Fatalf("reports of beta: %s", none)
	}
	for _, p := range decode[[]report.Project](t, e.do(apiCall{method: "GET", path: "/api/projects"})) {
		want := map[int64]int64{alpha.ID: 5, beta.ID: 0, gamma.ID: 1}[p.ID]
		if p.ReportCount != want || p.TodayNewReports != want {
			t.Fatalf("project %d counts %d/%d, want %d", p.ID, p.ReportCount, p.TodayNewReports, want)
		}
	}

	// Detail: text for html and md, null otherwise.
	for i, rep := range reps {
		r := e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d", rep.ID)})
		got := decode[report.Report](t, r)
		if rep.FileType.IsText() {
			if got.FileContent == nil || *got.FileContent != string(uploads[i].data) {
				t.Fatalf("detail of %s: %s", rep.FileType, r)
			}
		} else if got.FileContent != nil {
			t.Fatalf("detail of %s must have null fileContent: %s", rep.FileType, r)
		}
	}

	// Preview, download and static for every type.
	for i, rep := range reps {
		base := fmt.Sprintf("/api/reports/%d", rep.ID)
		for _, p := range []string{base + "/preview", base + "/download", rep.FilePath} {
			r := e.do(apiCall{method: "GET", path: p})
			wantStatus(t, r, 200)
			if !bytes.Equal(r.body, uploads[i].data) {
				t.Fatalf("%s: bytes differ", p)
			}
			if ct := r.header.Get("Content-Type"); ct != rep.FileType.ContentType() {
				t.Fatalf("%s: Content-Type %q, want %q", p, ct, rep.FileType.ContentType())
			}
			csp := r.header.Get("Content-Security-Policy")
			if (rep.FileType == report.PDF) != (csp == "") {
				t.Fatalf("%s: Content-Security-Policy %q", p, csp)
			}
		}
		r := e.do(apiCall{method: "GET", path: base + "/download"})
		_, params, err := mime.ParseMediaType(r.header.Get("Content-Disposition"))
		if err != nil || params["filename"] != uploads[i].name {
			t.Fatalf("download disposition %q: %v %v", r.header.Get("Content-Disposition"), params, err)
		}
	}

	// Range and conditional requests.
	prev := fmt.Sprintf("/api/reports/%d/preview", reps[0].ID)
	r = e.do(apiCall{method: "GET", path: prev, header: http.Header{"Range": {"bytes=0-9"}}})
	wantStatus(t, r, 206)
	if !bytes.Equal(r.body, html[:10]) {
		t.Fatalf("range: %q", r.body)
	}
	etag := r.header.Get("ETag")
	r = e.do(apiCall{method: "GET", path: prev, header: http.Header{"If-None-Match": {etag}}})
	wantStatus(t, r, 304)

	// PDF: passthrough for pdf, ConversionError without an engine for the rest.
	r = e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d/pdf", reps[2].ID)})
	wantStatus(t, r, 200)
	if !bytes.Equal(r.body, samplePDF) || r.header.Get("Content-Disposition") != `inline; filename="paper.pdf"` {
		t.Fatalf("pdf: %s %q", r, r.header.Get("Content-Disposition"))
	}
	r = e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d/pdf", reps[1].ID)})
	if e.inProc {
		wantStatus(t, r, 500)
		if decode[httpapi.ErrorBody](t, r).Type != string(report.Conversion) {
			t.Fatalf("md to pdf without an engine: %s", r)
		}
	} else if r.status == 200 && !bytes.HasPrefix(r.body, []byte("%PDF-")) {
		// The real daemon converts with its engines (or answers a documented error).
		t.Fatalf("md to pdf: %s", truncate(r.body, 100))
	}

	// The Markdown view: rendered by the engines, which the in-process env lacks.
	r = e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d/html", reps[1].ID)})
	if e.inProc {
		wantStatus(t, r, 500)
		if decode[httpapi.ErrorBody](t, r).Type != string(report.Conversion) {
			t.Fatalf("md to html without an engine: %s", r)
		}
	} else if r.status == 200 && !bytes.Contains(r.body, []byte("<main class=\"report\">")) {
		t.Fatalf("md to html: %s", truncate(r.body, 100))
	} else if r.status == 200 {
		// The frame's second load names the ETag: 304, nothing rendered again.
		again := e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d/html", reps[1].ID),
			header: http.Header{"If-None-Match": {r.header.Get("ETag")}}})
		if wantStatus(t, again, 304); again.header.Get("ETag") != r.header.Get("ETag") {
			t.Fatalf("html 304: ETag %q, want %q", again.header.Get("ETag"), r.header.Get("ETag"))
		}
	}

	// Files: a single-file report lists its one file; its url is the
	// report's siteUrl (html on a daemon with a content origin), else none.
	for i, u := range uploads {
		detail := decode[report.Report](t, e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d", reps[i].ID)}))
		r := e.do(apiCall{method: "GET", path: fmt.Sprintf("/api/reports/%d/files", reps[i].ID)})
		wantStatus(t, r, 200)
		sum := sha256.Sum256(u.data)
		var list struct {
			Kind  string `json:"kind"`
			Count int    `json:"count"`
			Total int64  `json:"totalBytes"`
			Files []struct {
				Path, SHA256, URL string
				Size              int64
			} `json:"files"`
		}
		if err := json.Unmarshal(r.body, &list); err != nil || list.Kind != "file" || list.Count != 1 || list.Total != int64(len(u.data)) ||
			len(list.Files) != 1 || list.Files[0].Path != u.name || list.Files[0].SHA256 != hex.EncodeToString(sum[:]) || list.Files[0].URL != detail.SiteURL {
			t.Fatalf("files of %s: %s", u.name, r)
		}
	}

	// Update: rename, then retype html to md (the file moves).
	r = e.do(jsonCall("PUT", fmt.Sprintf("/api/reports/%d", reps[1].ID), map[string]any{"fileName": "dir/renamed.md"}))
	wantStatus(t, r, 200)
	if got := decode[report.Report](t, r); got.FileName != "renamed.md" || got.FileContent != nil || got.FileType != report.MD {
		t.Fatalf("rename: %s", r)
	}
	r = e.do(jsonCall("PUT", fmt.Sprintf("/api/reports/%d", reps[0].ID), map[string]any{"fileName": "page.md", "fileType": "md"}))
	moved := decode[report.Report](t, r)
	if moved.FileType != report.MD || moved.FilePath != fmt.Sprintf("/uploads/reports/%d.md", reps[0].ID) {
		t.Fatalf("retype: %s", r)
	}
	wantStatus(t, e.do(apiCall{method: "GET", path: reps[0].FilePath}), 500)
	if r := e.do(apiCall{method: "GET", path: moved.FilePath}); !bytes.Equal(r.body, html) {
		t.Fatalf("moved file: %s", r)
	}
	r = e.do(jsonCall("PUT", fmt.Sprintf("/api/reports/%d", reps[3].ID), map[string]any{}))
	if got := decode[report.Report](t, r); got.FileName != "deck.pptx" {
		t.Fatalf("empty update changed the report: %s", r)
	}

	// Retention: the project's policy, then dry and real prunes that keep
	// everything (the flow below deletes what it expects to find).
	rp := fmt.Sprintf("/api/projects/%d", alpha.ID)
	if got := decode[report.RetentionView](t, e.do(apiCall{method: "GET", path: rp + "/retention"})); !got.Retention.IsZero() || got.Effective.KeepLast != 0 {
		t.Fatalf("retention of a new project: %+v", got)
	}
	r = e.do(jsonCall("PUT", rp+"/retention", map[string]any{"keepLast": 1, "maxAgeDays": nil}))
	if got := decode[report.RetentionView](t, r); got.KeepLast == nil || *got.KeepLast != 1 || got.Effective.KeepLast != 1 {
		t.Fatalf("set retention: %s", r)
	}
	if got := decode[report.Project](t, e.do(apiCall{method: "GET", path: rp})); got.Retention == nil || *got.Retention.KeepLast != 1 {
		t.Fatalf("project retention: %+v", got.Retention)
	}
	r = e.do(apiCall{method: "POST", path: rp + "/prune?dryRun=true"})
	if got := decode[report.PruneResult](t, r); !got.DryRun || got.Projects != 1 {
		t.Fatalf("dry prune: %s", r)
	}
	r = e.do(apiCall{method: "POST", path: "/api/prune?dryRun=1"})
	if got := decode[report.PruneResult](t, r); !got.DryRun {
		t.Fatalf("dry prune of all: %s", r)
	}
	wantStatus(t, e.do(jsonCall("PUT", rp+"/retention", map[string]any{})), 200)
	r = e.do(jsonCall("POST", rp+"/prune", map[string]any{"keepLast": 1000}))
	if got := decode[report.PruneResult](t, r); got.DryRun || len(got.Reports) != 0 || got.Bytes != 0 {
		t.Fatalf("prune keeping everything: %s", r)
	}
	r = e.do(jsonCall("POST", "/api/prune", map[string]any{"keepLast": 1000}))
	if got := decode[report.PruneResult](t, r); got.DryRun || len(got.Reports) != 0 {
		t.Fatalf("prune of all keeping everything: %s", r)
	}
	r = e.do(apiCall{method: "PUT", path: rp + "/retention", body: []byte(`{"keep_last":1}`), ctype: "application/json", raw: true})
	if wantStatus(t, r, 500); !bytes.Contains(r.body, []byte("ValidationError")) || !bytes.Contains(r.body, []byte("keep_last")) {
		t.Fatalf("misspelt field: %s", r)
	}
	r = e.do(apiCall{method: "POST", path: rp + "/prune?dryRun=maybe", raw: true})
	if wantStatus(t, r, 500); !bytes.Contains(r.body, []byte("ValidationError")) {
		t.Fatalf("bad dryRun: %s", r)
	}

	contractLinks(t, e, alpha.ID)   // stable links and badges: contract_links_test.go
	contractHistory(t, e, alpha.ID) // history and compare: contract_history_test.go
	// The history as an SVG chart: contract_chart_test.go.
	contractHistoryChart(t, e, alpha.ID)

	// The document itself.
	r = e.do(apiCall{method: "GET", path: "/api/openapi.json"})
	if !bytes.Equal(r.body, httpapi.OpenAPI) {
		t.Fatalf("served document differs from the embedded one")
	}

	// Preflight on every documented path.
	for p := range e.doc.Paths.Map() {
		concrete := strings.NewReplacer("{id}", strconv.FormatInt(reps[2].ID, 10), "{projectId}", "1", "{fileName}", "x.png",
			"{project}", "1", "{name}", "cov", "{action}", "pdf").Replace(p)
		r := e.do(apiCall{method: "OPTIONS", path: concrete, header: http.Header{
			"Origin": {"https://dash.example"}, "Access-Control-Request-Method": {"PUT"}, "Access-Control-Request-Headers": {"content-type"}}})
		wantStatus(t, r, 204)
	}

	// Deletes: a report, then a project with its reports and cover folder.
	wantStatus(t, e.do(apiCall{method: "DELETE", path: fmt.Sprintf("/api/reports/%d", late.ID)}), 204)
	wantStatus(t, e.do(apiCall{method: "DELETE", path: fmt.Sprintf("/api/projects/%d", alpha.ID)}), 204)
	if left := decode[[]report.Report](t, e.do(apiCall{method: "GET", path: "/api/reports"})); len(left) != 0 {
		t.Fatalf("reports left after cascade: %+v", left)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "uploads", "covers", strconv.FormatInt(alpha.ID, 10))); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("cover folder of a deleted project: %v", err)
	}
	if tree := treeOf(t, filepath.Join(e.dir, "uploads", "reports")); tree != "./" {
		t.Fatalf("report files left:\n%s", tree)
	}

	// reportctl downloads (dl_test.go has the details): without clients.dir
	// the binaries are a documented 404, the install script is always there.
	for _, p := range []string{"/dl/reportctl/linux-amd64", "/dl/checksums.txt", "/dl/install.sh"} {
		if r := e.do(apiCall{method: "GET", path: p}); r.status != 200 && r.status != 404 {
			t.Fatalf("GET %s: %s", p, r)
		}
	}

	e.requireEveryOperation(t)
}

// requireEveryOperation fails when an operation of the document was never
// answered as documented: a path the daemon lost, or one the test forgot.
func (e *apiEnv) requireEveryOperation(t *testing.T) {
	t.Helper()
	var missing []string
	for p, item := range e.doc.Paths.Map() {
		for m := range item.Operations() {
			if !e.seen[m+" "+p] {
				missing = append(missing, m+" "+p)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("operations never exercised: %v", missing)
	}
}

// TestContractDetectsDrift proves the validation has teeth: a document that
// lost a field, or a status, no longer accepts the daemon's real answers.
func TestContractDetectsDrift(t *testing.T) {
	e := newAPIEnv(t, envOpts{})
	wantStatus(t, e.do(jsonCall("POST", "/api/projects", map[string]any{"name": "Drift"})), 201)
	wantStatus(t, e.do(multipartCall("POST", "/api/reports", field("projectId", "1"), field("fileType", "pdf"), file("file", "a.pdf", samplePDF))), 201)

	schema := func(doc *openapi3.T, name string) *openapi3.Schema { return doc.Components.Schemas[name].Value }
	for _, tc := range []struct {
		name   string
		mutate func(doc *openapi3.T)
		call   apiCall
	}{
		// The control: the same round trip without a change accepts the answer.
		{"unchanged", func(*openapi3.T) {}, apiCall{method: "GET", path: "/api/projects"}},
		{"field removed from Project", func(doc *openapi3.T) {
			p := schema(doc, "Project")
			delete(p.Properties, "todayNewReports")
			p.Required = slices.DeleteFunc(p.Required, func(s string) bool { return s == "todayNewReports" })
		}, apiCall{method: "GET", path: "/api/projects"}},
		{"nullable made non-null", func(doc *openapi3.T) {
			schema(doc, "Project").Properties["description"].Value.Type = &openapi3.Types{"string"}
		}, apiCall{method: "GET", path: "/api/projects/1"}},
		{"created status", func(doc *openapi3.T) {
			rs := doc.Paths.Value("/api/projects").Post.Responses
			rs.Set("200", rs.Value("201"))
			rs.Delete("201")
		}, jsonCall("POST", "/api/projects", map[string]any{"name": "x"})},
		{"CORS header value", func(doc *openapi3.T) {
			doc.Components.Headers["AccessControlAllowOrigin"].Value.Schema.Value.Const = "https://only.example"
		}, apiCall{method: "GET", path: "/api/reports/ping"}},
		{"error type enum", func(doc *openapi3.T) {
			s := schema(doc, "ErrorType")
			s.Enum = slices.DeleteFunc(s.Enum, func(v any) bool { return v == "NotFoundError" })
		}, apiCall{method: "GET", path: "/api/projects/999"}},
		{"preview content type", func(doc *openapi3.T) {
			doc.Paths.Value("/api/reports/{id}/pdf").Get.Responses.Value("200").Value.Content = openapi3.NewContentWithSchema(openapi3.NewStringSchema(), []string{"text/plain"})
		}, apiCall{method: "GET", path: "/api/reports/1/pdf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := openapi3.NewLoader().LoadFromData(httpapi.OpenAPI)
			if err != nil {
				t.Fatal(err)
			}
			tc.mutate(doc)
			raw, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			_, router := contractRouter(t, raw)
			req := tc.call.request(e.base)
			route, params, err := router.FindRoute(req)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := e.client.Do(tc.call.request(e.base))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			in := &openapi3filter.ResponseValidationInput{
				RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: validateOpts},
				Status:                 resp.StatusCode, Header: resp.Header, Options: validateOpts,
			}
			in.SetBodyBytes(body)
			err = openapi3filter.ValidateResponse(context.Background(), in)
			if tc.name == "unchanged" {
				if err != nil {
					t.Fatalf("the unchanged document refused %d %s: %v", resp.StatusCode, body, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("a drifted document still accepted %d %s", resp.StatusCode, body)
			}
		})
	}
}

// TestContractDocumentStatesDecisions checks that the document carries what
// the spec leaves open and DESIGN.md decides, and the error kinds of the code.
func TestContractDocumentStatesDecisions(t *testing.T) {
	doc, err := contractDoc()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	var kinds []string
	for _, v := range doc.Components.Schemas["ErrorType"].Value.Enum {
		kinds = append(kinds, v.(string))
	}
	var want []string
	for _, k := range report.Kinds {
		want = append(want, string(k))
	}
	if !slices.Equal(kinds, want) {
		t.Fatalf("ErrorType enum %v, want report.Kinds %v", kinds, want)
	}
	var types []string
	for _, v := range doc.Components.Schemas["FileType"].Value.Enum {
		types = append(types, v.(string))
	}
	if fmt.Sprint(types) != fmt.Sprint(report.FileTypes) {
		t.Fatalf("FileType enum %v, want %v", types, report.FileTypes)
	}
	// Examples in the document are answers a reader may copy: they must validate.
	for name, ref := range doc.Components.Schemas {
		for i, ex := range ref.Value.Examples {
			if err := ref.Value.VisitJSON(ex, openapi3.EnableJSONSchema2020()); err != nil {
				t.Errorf("example %d of %s does not match its schema: %v", i, name, err)
			}
		}
	}
	text := string(httpapi.OpenAPI)
	for _, phrase := range []string{
		"Status 500 for every error by default", "error_status: conventional", "todayNewReports",
		"ordered by id ascending", "Content-Security-Policy", "filename*=UTF-8''", "`null` when unset",
		"without a zone", "Access-Control-Allow-Origin: *", "../../etc/passwd.html", "loopback",
	} {
		if !strings.Contains(text, phrase) {
			t.Errorf("openapi.json does not state %q", phrase)
		}
	}
	// Every route the daemon registers is documented (the reverse is checked by requireEveryOperation).
	re := regexp.MustCompile(`h\("(GET|POST|PUT|DELETE)", "([^"]+)"`)
	src, err := os.ReadFile("server.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range re.FindAllStringSubmatch(string(src), -1) {
		p := m[2]
		if p == "/uploads/" {
			continue // documented as the two concrete static paths
		}
		if p == "/p/{project}/{rest...}" || p == "/p/{project}" {
			continue // documented as the concrete /p/ paths (latest.go); /p/{project} only answers NotFoundError
		}
		item := doc.Paths.Find(p)
		if item == nil || item.GetOperation(m[1]) == nil {
			t.Errorf("route %s %s is not in openapi.json", m[1], p)
		}
	}
}

// newDaemonEnv starts the shipped `reportd serve` on 127.0.0.1:0 through
// testbin's launcher, which finds its address in the serve file.
func newDaemonEnv(t *testing.T) *apiEnv {
	t.Helper()
	// The shipped daemon: its middleware, metrics and engines included.
	bins, err := testbin.BuildTemp("reportd-contract-", "reportd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bins) })
	dir := t.TempDir()
	d := testbin.StartT(t, filepath.Join(bins, "reportd"), testbin.Options{DataDir: dir, Env: []string{"REPORTD_LOG_LEVEL=warn"}})
	e := &apiEnv{t: t, dir: dir, base: d.URL(), seen: map[string]bool{}}
	e.doc, e.router = contractRouter(t, httpapi.OpenAPI)
	e.client = &http.Client{
		Timeout:       5 * time.Minute, // a first conversion starts an engine
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return e
}

// TestContractRealDaemon runs the same flow against the built binary.
func TestContractRealDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts reportd")
	}
	runContractFlow(t, newDaemonEnv(t))
}
