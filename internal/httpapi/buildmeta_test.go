package httpapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/config"
	"github.com/reportd/reportd/internal/report"
)

func uploadMeta(e *apitest.Env, project int64, fileName string, fields ...string) *apitest.Response {
	parts := []apitest.Part{{Name: "projectId", Data: []byte(fmt.Sprint(project))}, {Name: "fileType", Data: []byte("md")}}
	for i := 0; i+1 < len(fields); i += 2 {
		parts = append(parts, apitest.Part{Name: fields[i], Data: []byte(fields[i+1])})
	}
	parts = append(parts, apitest.Part{Name: "file", FileName: fileName, Data: []byte("# x\n")})
	body, ct := apitest.Multipart(parts...)
	return e.Do("POST", "/api/reports", body, ct)
}

func TestBuildMetadataStoredReturnedFiltered(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	r := uploadMeta(e, p.ID, "E2E Results.md", "branch", " main ", "commit", "3f2c9a1e", "buildUrl", "https://ci.example.com/b/7", "buildId", "7")
	var got report.Report
	r.JSON(t, &got)
	if r.StatusCode != 201 || got.Name != "e2e-results" || *got.Branch != "main" || *got.Commit != "3f2c9a1e" ||
		*got.BuildURL != "https://ci.example.com/b/7" || *got.BuildID != "7" {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	if want := e.URL + fmt.Sprintf("/#/reports/%d", got.ID); got.DashboardURL != want {
		t.Fatalf("dashboardUrl %q, want %q", got.DashboardURL, want)
	}
	uploadMeta(e, p.ID, "a.md", "name", "coverage", "branch", "main")
	uploadMeta(e, p.ID, "b.md", "name", "coverage", "branch", "dev")
	e.MustUpload(p.ID, "coverage.md", report.MD, []byte("x")) // name derived, no branch

	for q, want := range map[string]int{
		"?name=coverage": 3, "?name=coverage&branch=main": 1, "?branch=main": 2, "?branch=dev&projectId=" + fmt.Sprint(p.ID): 1,
		"?name=nothing": 0, "?name=&branch=": 4, "?name=coverage&projectId=999": 0,
	} {
		var list []report.Report
		r := e.Get("/api/reports" + q)
		r.JSON(t, &list)
		if r.StatusCode != 200 || len(list) != want {
			t.Errorf("%s: %d reports (%d), want %d", q, len(list), r.StatusCode, want)
		}
		for _, x := range list {
			if !strings.HasPrefix(x.DashboardURL, e.URL+"/#/reports/") {
				t.Errorf("%s: dashboardUrl %q", q, x.DashboardURL)
			}
		}
	}

	// The detail carries the same fields.
	var detail report.Report
	e.Get(fmt.Sprintf("/api/reports/%d", got.ID)).JSON(t, &detail)
	if detail.Name != "e2e-results" || detail.Branch == nil || *detail.Branch != "main" || detail.DashboardURL != got.DashboardURL {
		t.Fatalf("detail: %+v", detail)
	}

	// PUT sets, clears ("" ) and keeps (absent).
	path := fmt.Sprintf("/api/reports/%d", got.ID)
	r = e.PostJSON("PUT", path, map[string]any{"branch": "release", "commit": "", "name": "e2e"})
	var up report.Report
	r.JSON(t, &up)
	if r.StatusCode != 200 || up.Name != "e2e" || *up.Branch != "release" || up.Commit != nil || *up.BuildID != "7" || up.DashboardURL != got.DashboardURL {
		t.Fatalf("update: %d %s", r.StatusCode, r.Body)
	}
	r = e.PostJSON("PUT", path, map[string]any{"name": ""})
	r.JSON(t, &up)
	if up.Name != "e2e-results" {
		t.Fatalf("a cleared name is derived again: %s", r.Body)
	}
	wantError(t, e.PostJSON("PUT", path, map[string]any{"buildUrl": "javascript:alert(1)"}), report.Validation)
}

func TestBuildMetadataValidation(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	p := e.CreateProject("p")
	for _, c := range []struct{ field, value, msg string }{
		{"buildUrl", "ftp://example.com/b/1", "buildUrl must be an absolute http or https URL"},
		{"buildUrl", "/relative", "buildUrl must be an absolute http or https URL"},
		{"branch", "main\x1b[31m", "branch contains control characters"},
		{"commit", "abc\u200bdef", "commit contains the invisible format character U+200B"},
		{"name", strings.Repeat("n", 101), "name is longer than 100 characters"},
		{"buildId", "\xff", "buildId is not valid UTF-8"},
	} {
		r := uploadMeta(e, p.ID, "a.md", c.field, c.value)
		wantError(t, r, report.Validation)
		if !strings.Contains(string(r.Body), c.msg) {
			t.Errorf("%s=%q: %s, want %q", c.field, c.value, r.Body, c.msg)
		}
	}
	if tree := e.Tree(); len(tree) != 0 {
		t.Fatalf("a refused upload left files: %v", tree)
	}
	var list []report.Report
	e.Get("/api/reports").JSON(t, &list)
	if len(list) != 0 {
		t.Fatalf("a refused upload was stored: %+v", list)
	}
}

func TestDashboardURLFromPublicURL(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Config: func(c *config.Config) { c.PublicURL = "https://reports.example.com/team/" }})
	p := e.CreateProject("p")
	rep := e.MustUpload(p.ID, "a.md", report.MD, []byte("x"))
	if want := fmt.Sprintf("https://reports.example.com/team/#/reports/%d", rep.ID); rep.DashboardURL != want {
		t.Fatalf("dashboardUrl %q, want %q", rep.DashboardURL, want)
	}
}
