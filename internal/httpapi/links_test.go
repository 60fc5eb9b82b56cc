package httpapi_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// noFollow sends GET path without following redirects.
func noFollow(t *testing.T, e *apitest.Env, path string, header ...string) *apitest.Response {
	t.Helper()
	req, err := http.NewRequest("GET", e.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return &apitest.Response{Response: resp, Body: b}
}

// uploadHTML uploads an HTML report with build metadata.
func uploadHTML(t *testing.T, e *apitest.Env, project int64, file string, data []byte, fields ...string) report.Report {
	t.Helper()
	parts := []apitest.Part{{Name: "projectId", Data: []byte(fmt.Sprint(project))}, {Name: "fileType", Data: []byte("html")}}
	for i := 0; i+1 < len(fields); i += 2 {
		parts = append(parts, apitest.Part{Name: fields[i], Data: []byte(fields[i+1])})
	}
	parts = append(parts, apitest.Part{Name: "file", FileName: file, Data: data})
	body, ct := apitest.Multipart(parts...)
	r := e.Do("POST", "/api/reports", body, ct)
	var rep report.Report
	r.JSON(t, &rep)
	if r.StatusCode != 201 {
		t.Fatalf("upload %s: %d %s", file, r.StatusCode, r.Body)
	}
	return rep
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../detect/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// linkEnv: project "web" with reports on several branches, a report named
// "pdf", and two projects both named "Dup" (slugs dup and dup-2).
type linkEnv struct {
	*apitest.Env
	web                                        report.Project
	covMain, covDev, tests, notes, pdfNamed, x report.Report
}

func newLinkEnv(t *testing.T, o apitest.Options) *linkEnv {
	e := apitest.Start(t, o)
	l := &linkEnv{Env: e, web: e.CreateProject("web")}
	e.CreateProject("Dup")
	e.CreateProject("Dup")
	p := l.web.ID
	l.covMain = uploadHTML(t, e, p, "index.html", testdata(t, "coveragepy-6.5.0-index.html"), "name", "coverage", "branch", "main")
	l.tests = uploadHTML(t, e, p, "report.html", testdata(t, "pytest-html-4.html"), "name", "tests", "branch", "main")
	l.covDev = uploadHTML(t, e, p, "index.html", testdata(t, "istanbul-index.html"), "name", "coverage", "branch", "dev")
	l.notes = metaResp{uploadMeta(e, p, "notes.md", "branch", "feature/x")}.report(t)
	l.pdfNamed = metaResp{uploadMeta(e, p, "x.md", "name", "pdf", "branch", "main")}.report(t)
	l.x = metaResp{uploadMeta(e, p, "plain.md")}.report(t) // no branch
	return l
}

type metaResp struct{ *apitest.Response }

func (r metaResp) report(t *testing.T) report.Report {
	t.Helper()
	var rep report.Report
	r.JSON(t, &rep)
	if r.StatusCode != 201 {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	return rep
}

func TestUploadDetectsGeneratorAndSummary(t *testing.T) {
	l := newLinkEnv(t, apitest.Options{})
	if l.covMain.Generator != "coverage.py" || l.covMain.Summary == nil || *l.covMain.Summary.Lines != 80 {
		t.Fatalf("coverage.py upload: %q %+v", l.covMain.Generator, l.covMain.Summary)
	}
	if s := l.tests.Summary; l.tests.Generator != "pytest-html" || s == nil || *s.Passed != 5 || *s.Failed != 3 || *s.Skipped != 2 {
		t.Fatalf("pytest-html upload: %q %+v", l.tests.Generator, s)
	}
	// The detail and the list carry them; a Markdown report has neither.
	r := l.Get(fmt.Sprintf("/api/reports/%d", l.covDev.ID))
	var m map[string]any
	r.JSON(t, &m)
	if m["generator"] != "istanbul" || m["summary"].(map[string]any)["lines"] != 87.5 {
		t.Fatalf("detail: %s", r.Body)
	}
	r = l.Get(fmt.Sprintf("/api/reports/%d", l.notes.ID))
	if bytes.Contains(r.Body, []byte(`"generator"`)) || bytes.Contains(r.Body, []byte(`"summary"`)) {
		t.Fatalf("a plain report shows generator or summary: %s", r.Body)
	}
}

func TestLatestRedirects(t *testing.T) {
	l := newLinkEnv(t, apitest.Options{})
	id := fmt.Sprint(l.web.ID)
	dash := func(r report.Report) string { return fmt.Sprintf("%s/#/reports/%d", l.URL, r.ID) }
	api := func(r report.Report, action string) string {
		return fmt.Sprintf("%s/api/reports/%d/%s", l.URL, r.ID, action)
	}
	for path, want := range map[string]string{
		"/p/" + id + "/latest":                        dash(l.x),
		"/p/web/latest":                               dash(l.x),
		"/p/web/latest/":                              dash(l.x),
		"/p/" + id + "/latest/coverage":               dash(l.covDev),
		"/p/web/latest/coverage?branch=main":          dash(l.covMain),
		"/p/web/latest?branch=main":                   dash(l.pdfNamed),
		"/p/web/latest?branch=feature/x":              dash(l.notes),
		"/p/web/latest?branch=feature%2Fx&name=":      dash(l.notes),
		"/p/web/latest/coverage/pdf":                  api(l.covDev, "pdf"),
		"/p/web/latest/coverage/pdf?paper=Letter":     api(l.covDev, "pdf") + "?paper=Letter",
		"/p/web/latest/coverage/download?branch=main": api(l.covMain, "download"),
		"/p/web/latest/preview?branch=dev":            api(l.covDev, "preview"),
		"/p/web/latest/download":                      api(l.x, "download"),
		"/p/web/latest/pdf":                           api(l.x, "pdf"), // an action, not the report named "pdf"
		"/p/web/latest/pdf/download":                  api(l.pdfNamed, "download"),
		"/p/web/latest?name=pdf":                      dash(l.pdfNamed),
		"/p/web/latest/pdf?name=pdf":                  api(l.pdfNamed, "pdf"),
		"/p/web/latest/tests?branch=main&name=tests":  dash(l.tests),
		"/p/web/latest/notes?branch=feature%2Fx":      dash(l.notes),
	} {
		r := noFollow(t, l.Env, path)
		if r.StatusCode != http.StatusFound || r.Header.Get("Location") != want {
			t.Errorf("%s: %d Location %q, want 302 %q (%s)", path, r.StatusCode, r.Header.Get("Location"), want, r.Body)
			continue
		}
		if r.Header.Get("Cache-Control") != "no-cache" || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("%s: headers %v", path, r.Header)
		}
	}
	// Following the redirect lands on the report.
	if r := l.Get("/p/web/latest/coverage/download?branch=main"); r.StatusCode != 200 || !bytes.Contains(r.Body, []byte(`class="pc_cov"`)) {
		t.Fatalf("following the download link: %d", r.StatusCode)
	}

	for path, kind := range map[string]report.Kind{
		"/p/web/latest/nothing":                             report.NotFound,
		"/p/web/latest/coverage?branch=x":                   report.NotFound,
		"/p/999/latest":                                     report.NotFound,
		"/p/nobody/latest":                                  report.NotFound,
		"/p/Dup/latest":                                     report.Validation,
		"/p/dup/latest":                                     report.NotFound, // the slug: the first Dup, which has no report
		"/p/web/latest/a/b/c":                               report.NotFound,
		"/p/web/elsewhere":                                  report.NotFound,
		"/p/web":                                            report.NotFound,
		"/p/web/latest/coverage?name=tests":                 report.Validation,
		"/p/web/latest/a%2Fb":                               report.Validation,
		"/p/web/a%2fb/badge.svg":                            report.Validation, // malformed: an error body, not a badge
		"/p/web/latest?type=pdf":                            report.Validation, // a type needs a name
		"/p/web/latest/coverage?type=docx":                  report.Validation,
		"/p/web/latest/coverage?type=md":                    report.NotFound,
		"/p/web/latest/pdf?waitForExpression=true&paper=A4": report.Validation, // a stable link carries no script
	} {
		wantLinkError(t, noFollow(t, l.Env, path), kind)
	}
	r := noFollow(t, l.Env, "/p/Dup/latest")
	if !bytes.Contains(r.Body, []byte("ids 2, 3")) {
		t.Errorf("an ambiguous name does not list the ids: %s", r.Body)
	}
	if r := l.Do("POST", "/p/web/latest", nil, ""); r.StatusCode != 405 || !strings.Contains(string(r.Body), "MethodNotAllowedError") {
		t.Errorf("POST on a link: %d %s", r.StatusCode, r.Body)
	}
}

// wantLinkError: a stable link's error has the conventional status of its
// kind in every error_status mode (spec mode here), and the error body.
func wantLinkError(t *testing.T, r *apitest.Response, kind report.Kind) {
	t.Helper()
	want := map[report.Kind]int{report.NotFound: 404, report.Validation: 400, report.Unauthorized: 401,
		report.Forbidden: 403, report.MethodNotAllowed: 405}[kind]
	if r.StatusCode != want {
		t.Errorf("%s: status %d, want %d (%s)", r.Request.URL, r.StatusCode, want, r.Body)
	}
	var body struct{ Error, Type string }
	r.JSON(t, &body)
	if body.Type != string(kind) || !strings.HasPrefix(body.Error, string(kind)+": ") || strings.Contains(body.Error, "error_status") {
		t.Errorf("error body %s, want type %s and no status advice", r.Body, kind)
	}
}

func TestLatestUsesPublicURL(t *testing.T) {
	l := newLinkEnv(t, apitest.Options{Config: func(c *config.Config) { c.PublicURL = "https://reports.example.com/team/" }})
	r := noFollow(t, l.Env, "/p/web/latest/coverage/pdf?branch=main")
	if want := fmt.Sprintf("https://reports.example.com/team/api/reports/%d/pdf", l.covMain.ID); r.Header.Get("Location") != want {
		t.Fatalf("Location %q, want %q", r.Header.Get("Location"), want)
	}
}

// svgTexts parses an SVG badge (failing on malformed XML) and returns the
// text of its visible <text> elements and the fills used.
func svgTexts(t *testing.T, b []byte) (texts []string, fills string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var inText, shadow bool
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return texts, fills
		}
		if err != nil {
			t.Fatalf("badge is not well-formed XML: %v\n%s", err, b)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			inText, shadow = v.Name.Local == "text", false
			for _, a := range v.Attr {
				if a.Name.Local == "aria-hidden" {
					shadow = true
				}
				if a.Name.Local == "fill" {
					fills += a.Value + " "
				}
			}
		case xml.CharData:
			if inText && !shadow {
				texts = append(texts, string(v))
			}
		case xml.EndElement:
			inText = false
		}
	}
}

func TestBadges(t *testing.T) {
	l := newLinkEnv(t, apitest.Options{Config: func(c *config.Config) { c.Badges.CoverageYellow = 85 }})
	for path, want := range map[string]struct{ label, message, fill string }{
		"/p/web/coverage/badge.svg?branch=main":       {"coverage", "80%", "#dfb317"}, // yellow below 85
		"/p/web/coverage/badge.svg":                   {"coverage", "87.5%", "#4c1"},
		"/p/web/latest/coverage/badge.svg?branch=dev": {"coverage", "87.5%", "#4c1"},
		"/p/web/tests/badge.svg":                      {"tests", "5 passed, 3 failed, 2 skipped", "#e05d44"},
		"/p/web/badge.svg?branch=feature%2Fx":         {"notes", "just now", "#007ec6"},
		"/p/web/badge.svg?name=tests&label=pytest":    {"pytest", "5 passed, 3 failed, 2 skipped", "#e05d44"},
		"/p/web/nothing/badge.svg":                    {"report", "no report", "#9f9f9f"},
		"/p/web/coverage/badge.svg?type=md":           {"report", "no report", "#9f9f9f"},
		"/p/web/coverage/badge.svg?type=html":         {"coverage", "87.5%", "#4c1"},
		"/p/dup/badge.svg":                            {"report", "no report", "#9f9f9f"}, // the slug of the first Dup
		"/p/Dup/badge.svg":                            {"report", "invalid link", "#9f9f9f"},
		"/p/web/badge.svg":                            {"plain", "just now", "#007ec6"},
	} {
		r := l.Get(path)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/svg+xml; charset=utf-8" {
			t.Errorf("%s: %d %s", path, r.StatusCode, r.Header.Get("Content-Type"))
			continue
		}
		texts, fills := svgTexts(t, r.Body)
		if len(texts) != 2 || texts[0] != want.label || texts[1] != want.message || !strings.Contains(fills, want.fill+" ") {
			t.Errorf("%s: texts %q fills %q, want %s|%s in %s", path, texts, fills, want.label, want.message, want.fill)
		}
		if r.Header.Get("Cache-Control") != "public, max-age=60" || r.Header.Get("ETag") == "" {
			t.Errorf("%s: cache headers %q %q", path, r.Header.Get("Cache-Control"), r.Header.Get("ETag"))
		}
	}

	// shields.io endpoint JSON.
	var ep map[string]any
	r := l.Get("/p/web/coverage/badge.json?branch=main")
	r.JSON(t, &ep)
	if ep["schemaVersion"] != 1.0 || ep["label"] != "coverage" || ep["message"] != "80%" || ep["color"] != "yellow" || ep["isError"] != nil {
		t.Fatalf("badge.json: %s", r.Body)
	}
	r = l.Get("/p/web/latest/nothing/badge.json")
	if err := json.Unmarshal(r.Body, &ep); err != nil || ep["isError"] != true || ep["message"] != "no report" {
		t.Fatalf("badge.json of nothing: %s", r.Body)
	}

	// Conditional requests: the same badge is a 304 without a body.
	first := l.Get("/p/web/coverage/badge.svg")
	again := noFollow(t, l.Env, "/p/web/coverage/badge.svg", "If-None-Match", first.Header.Get("ETag"))
	if again.StatusCode != http.StatusNotModified || len(again.Body) != 0 || again.Header.Get("ETag") != first.Header.Get("ETag") {
		t.Fatalf("If-None-Match: %d %q", again.StatusCode, again.Body)
	}
	// A new upload changes the badge and its ETag.
	before := l.Get("/p/web/coverage/badge.svg?branch=main")
	uploadHTML(t, l.Env, l.web.ID, "index.html", testdata(t, "jacoco-index.html"), "name", "coverage", "branch", "main")
	now := l.Get("/p/web/coverage/badge.svg?branch=main")
	if now.Header.Get("ETag") == before.Header.Get("ETag") {
		t.Fatal("the ETag did not change with the badge")
	}
	if texts, _ := svgTexts(t, now.Body); len(texts) != 2 || texts[1] != "87.5%" {
		t.Fatalf("badge after a new JaCoCo upload: %q", texts)
	}
}

// Links and badges are reads: with auth.reads they need the token, and a
// badge is then only privately cacheable.
func TestLinksNeedTheTokenWithAuthReads(t *testing.T) {
	e := apitest.Start(t, apitest.Options{HTTP: func(c *httpapi.Config) { c.AuthToken, c.AuthReads = "s3cret", true }})
	p, err := e.Svc.CreateProject(t.Context(), report.ProjectCreate{Name: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Svc.UploadReport(t.Context(), report.ReportUpload{ProjectID: p.ID, FileType: report.MD,
		File: report.Upload{FileName: "a.md", Body: strings.NewReader("# a\n")}}); err != nil {
		t.Fatal(err)
	}
	wantLinkError(t, noFollow(t, e, "/p/web/latest"), report.Unauthorized) // 401 in spec mode too
	wantLinkError(t, noFollow(t, e, "/p/web/badge.svg"), report.Unauthorized)
	r := noFollow(t, e, "/p/web/badge.svg", "Authorization", "Bearer s3cret")
	if r.StatusCode != 200 || r.Header.Get("Cache-Control") != "private, max-age=60" {
		t.Fatalf("badge with the token: %d %q", r.StatusCode, r.Header.Get("Cache-Control"))
	}
	if r := noFollow(t, e, "/p/web/latest", "Authorization", "Bearer s3cret"); r.StatusCode != http.StatusFound {
		t.Fatalf("link with the token: %d %s", r.StatusCode, r.Body)
	}
}
