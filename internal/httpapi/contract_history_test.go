package httpapi_test

import (
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/httpapi"
	"github.com/reportd/reportd/internal/report"
)

// contractHistory exercises history and compare within the contract flow:
// two builds of one report name on main, then the history by id and by
// slug, and comparisons with and without a base.
func contractHistory(t *testing.T, e *apiEnv, project int64) {
	t.Helper()
	cov, err := os.ReadFile("../detect/testdata/coveragepy-6.5.0-index.html")
	if err != nil {
		t.Fatal(err)
	}
	p := strconv.FormatInt(project, 10)
	var ids []int64
	for _, commit := range []string{"c1", "c2"} {
		r := e.do(multipartCall("POST", "/api/reports", field("projectId", p), field("fileType", "html"),
			field("name", "hist"), field("branch", "main"), field("commit", commit), file("file", "index.html", cov)))
		wantStatus(t, r, 201)
		ids = append(ids, decode[report.Report](t, r).ID)
	}
	slug := decode[report.Project](t, e.do(apiCall{method: "GET", path: "/api/projects/" + p})).Slug
	for _, ref := range []string{p, slug} {
		r := e.do(apiCall{method: "GET", path: "/api/projects/" + ref + "/history?name=hist&branch=main&limit=10"})
		wantStatus(t, r, 200)
		pts := decode[[]report.HistoryPoint](t, r)
		if len(pts) != 2 || pts[0].ReportID != ids[0] || pts[1].ReportID != ids[1] || *pts[1].Commit != "c2" || pts[1].Summary == nil {
			t.Fatalf("history by %s: %s", ref, r)
		}
	}
	r := e.do(apiCall{method: "GET", path: "/api/projects/" + p + "/history?name=hist&limit=1"})
	if pts := decode[[]report.HistoryPoint](t, r); len(pts) != 1 || pts[0].ReportID != ids[1] {
		t.Fatalf("history limit=1 keeps the newest: %s", r)
	}
	r = e.do(apiCall{method: "GET", path: "/api/projects/" + p + "/history?name=nothing"})
	if wantStatus(t, r, 200); string(r.body) != "[]\n" && string(r.body) != "[]" {
		t.Fatalf("history of nothing: %s", r)
	}
	for _, q := range []string{"", "?name=hist&limit=0", "?name=hist&limit=1001", "?name=hist&type=doc"} {
		r := e.do(apiCall{method: "GET", path: "/api/projects/" + p + "/history" + q, raw: true})
		if wantStatus(t, r, 500); decode[httpapi.ErrorBody](t, r).Type != string(report.Validation) {
			t.Fatalf("history%s: %s", q, r)
		}
	}
	wantStatus(t, e.do(apiCall{method: "GET", path: "/api/projects/no-such-project/history?name=hist"}), 500)

	for _, base := range []string{"", "?base=previous", "?base=branch:main", "?base=" + strconv.FormatInt(ids[0], 10)} {
		r := e.do(apiCall{method: "GET", path: "/api/reports/" + strconv.FormatInt(ids[1], 10) + "/compare" + base})
		wantStatus(t, r, 200)
		c := decode[report.Comparison](t, r)
		if c.Base == nil || c.Base.ReportID != ids[0] || c.Head.ReportID != ids[1] || c.Delta == nil || c.Delta.Lines == nil || *c.Delta.Lines != 0 {
			t.Fatalf("compare%s: %s", base, r)
		}
	}
	r = e.do(apiCall{method: "GET", path: "/api/reports/" + strconv.FormatInt(ids[0], 10) + "/compare"})
	wantStatus(t, r, 200)
	if c := decode[report.Comparison](t, r); c.Base != nil || c.Delta != nil || c.NewFailures == nil {
		t.Fatalf("compare without a base: %s", r)
	}
	r = e.do(apiCall{method: "GET", path: "/api/reports/" + strconv.FormatInt(ids[0], 10) + "/compare?base=sideways", raw: true})
	if wantStatus(t, r, 500); decode[httpapi.ErrorBody](t, r).Type != string(report.Validation) {
		t.Fatalf("compare with a bad base: %s", r)
	}
	contractTrend(t, e, project)
	contractHistoryFlaky(t, e, project)
}

// contractHistoryFlaky: a mochawesome test that passed and then failed on
// the same commit is marked flaky at the second point of the history, not
// at the first; a point without flaky tests has no flaky field.
func contractHistoryFlaky(t *testing.T, e *apiEnv, project int64) {
	t.Helper()
	passed, err := os.ReadFile("../detect/testdata/mochawesome.html")
	if err != nil {
		t.Fatal(err)
	}
	const pass = "&quot;state&quot;:&quot;passed&quot;,&quot;pass&quot;:true,&quot;fail&quot;:false"
	failed := strings.Replace(string(passed), pass, "&quot;state&quot;:&quot;failed&quot;,&quot;pass&quot;:false,&quot;fail&quot;:true", 1)
	if failed == string(passed) {
		t.Fatal("the mochawesome fixture no longer has a passed test to flip")
	}
	p := strconv.FormatInt(project, 10)
	var ids []int64
	for _, body := range [][]byte{passed, []byte(failed)} {
		r := e.do(multipartCall("POST", "/api/reports", field("projectId", p), field("fileType", "html"),
			field("name", "flaky-hist"), field("branch", "main"), field("commit", "f1"), file("file", "mochawesome.html", body)))
		wantStatus(t, r, 201)
		ids = append(ids, decode[report.Report](t, r).ID)
	}
	r := e.do(apiCall{method: "GET", path: "/api/projects/" + p + "/history?name=flaky-hist&flaky=true"})
	wantStatus(t, r, 200)
	pts := decode[[]report.HistoryPoint](t, r)
	if len(pts) != 2 || pts[0].ReportID != ids[0] || len(pts[0].Flaky) != 0 || len(pts[1].Flaky) != 1 ||
		!strings.HasPrefix(pts[1].Flaky[0].Title, "adds") || strings.Count(string(r.body), `"flaky":[`) != 1 {
		t.Fatalf("history with a test that flipped on one commit: %s", r)
	}
	r = e.do(apiCall{method: "GET", path: "/api/reports/" + strconv.FormatInt(ids[1], 10) + "/compare"})
	if c := decode[report.Comparison](t, r); len(c.Flaky) != 1 || c.Flaky[0] != pts[1].Flaky[0] {
		t.Fatalf("compare's flaky list and the history's differ: %s", r)
	}
}

// contractTrend: the trend sparkline of a name with two builds has two
// points; of nothing, an empty grey one; both cached like badges.
func contractTrend(t *testing.T, e *apiEnv, project int64) {
	t.Helper()
	p := strconv.FormatInt(project, 10)
	for _, q := range []string{"", "?metric=lines&branch=main", "?metric=passed", "?metric=failed", "?metric=duration"} {
		r := e.do(apiCall{method: "GET", path: "/p/" + p + "/hist/trend.svg" + q})
		wantStatus(t, r, 200)
		body := string(r.body)
		if !strings.HasPrefix(body, "<svg") || !strings.Contains(body, "<title") || !strings.Contains(body, "<desc") {
			t.Fatalf("trend%s: %s", q, r)
		}
		if q == "" && (!strings.Contains(body, "<polyline") || strings.Count(strings.Split(strings.Split(body, `points="`)[1], `"`)[0], ",") != 2) {
			t.Fatalf("trend of two builds: %s", body)
		}
		again := e.do(apiCall{method: "GET", path: "/p/" + p + "/hist/trend.svg" + q, header: http.Header{"If-None-Match": {r.header.Get("ETag")}}})
		wantStatus(t, again, http.StatusNotModified)
	}
	r := e.do(apiCall{method: "GET", path: "/p/" + p + "/nothing/trend.svg"})
	if wantStatus(t, r, 200); strings.Contains(string(r.body), "<polyline") || !strings.Contains(string(r.body), "stroke-dasharray") {
		t.Fatalf("trend of nothing: %s", r)
	}
	wantStatus(t, e.do(apiCall{method: "GET", path: "/p/no-such-project/hist/trend.svg"}), 404)
	r = e.do(apiCall{method: "GET", path: "/p/" + p + "/hist/trend.svg?metric=speed", raw: true})
	if r.status == 200 || !strings.Contains(string(r.body), "ValidationError") {
		t.Fatalf("trend of an unknown metric: %s", r)
	}
}
