package httpapi_test

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// contractLinks exercises the stable links and badges (latest.go,
// badge.go) within the contract flow: a recognised HTML report is
// uploaded into project, and every /p/ operation answers as documented.
func contractLinks(t *testing.T, e *apiEnv, project int64) {
	t.Helper()
	cov, err := os.ReadFile("../detect/testdata/coveragepy-6.5.0-index.html")
	if err != nil {
		t.Fatal(err)
	}
	r := e.do(multipartCall("POST", "/api/reports", field("projectId", strconv.FormatInt(project, 10)), field("fileType", "html"),
		field("name", "cov"), field("branch", "main"), file("file", "index.html", cov)))
	wantStatus(t, r, 201)
	rep := decode[report.Report](t, r)
	if rep.Generator != "coverage.py" || rep.Summary == nil || rep.Summary.Lines == nil || *rep.Summary.Lines != 80 {
		t.Fatalf("upload of coverage.py's index.html: %s", r)
	}
	p := strconv.FormatInt(project, 10)
	slug := decode[report.Project](t, e.do(apiCall{method: "GET", path: "/api/projects/" + p})).Slug
	for path, want := range map[string]string{
		"/p/" + slug + "/latest/cov?type=html":     fmt.Sprintf("/#/reports/%d", rep.ID),
		"/p/" + p + "/latest":                      fmt.Sprintf("/#/reports/%d", rep.ID),
		"/p/" + p + "/latest/cov?branch=main":      fmt.Sprintf("/#/reports/%d", rep.ID),
		"/p/" + p + "/latest/cov/download":         fmt.Sprintf("/api/reports/%d/download", rep.ID),
		"/p/" + p + "/latest/cov/pdf?paper=Letter": fmt.Sprintf("/api/reports/%d/pdf?paper=Letter", rep.ID),
	} {
		r := e.do(apiCall{method: "GET", path: path})
		wantStatus(t, r, http.StatusFound)
		if loc := r.header.Get("Location"); !strings.HasPrefix(loc, "http") || !strings.HasSuffix(loc, want) {
			t.Fatalf("%s: Location %q, want …%s", path, loc, want)
		}
	}
	// Links answer conventional statuses whatever error_status says.
	wantStatus(t, e.do(apiCall{method: "GET", path: "/p/" + p + "/latest/nothing"}), 404)
	wantStatus(t, e.do(apiCall{method: "GET", path: "/p/" + p + "/latest/cov?type=pdf"}), 404)
	wantStatus(t, e.do(apiCall{method: "GET", path: "/p/no-such-project/badge.svg"}), 404)
	for _, path := range []string{"/p/" + p + "/badge.svg", "/p/" + p + "/cov/badge.svg?branch=main", "/p/" + p + "/badge.json", "/p/" + p + "/cov/badge.json"} {
		r := e.do(apiCall{method: "GET", path: path})
		wantStatus(t, r, 200)
		if !strings.Contains(string(r.body), "80%") {
			t.Fatalf("%s: %s", path, r)
		}
		again := e.do(apiCall{method: "GET", path: path, header: http.Header{"If-None-Match": {r.header.Get("ETag")}}})
		wantStatus(t, again, http.StatusNotModified)
	}
	r = e.do(apiCall{method: "GET", path: "/p/" + p + "/nothing/badge.svg"})
	if wantStatus(t, r, 200); !strings.Contains(string(r.body), "no report") {
		t.Fatalf("badge of nothing: %s", r)
	}
}
