package httpapi_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// margeEscape escapes as marge's escape-html does.
var margeEscape = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "'", "&#39;", "<", "&lt;", ">", "&gt;")

// mochawesomePage is a mochawesome inline report (marge's <body
// data-raw="…">) of the tests named, each passed or failed.
func mochawesomePage(t *testing.T, states map[string]string) []byte {
	t.Helper()
	var tests []map[string]any
	var passes, failures int
	names := make([]string, 0, len(states))
	for n := range states {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		st := states[n]
		if st == "passed" {
			passes++
		} else {
			failures++
		}
		tests = append(tests, map[string]any{"title": n, "fullTitle": "suite " + n, "state": st, "duration": 7,
			"pass": st == "passed", "fail": st == "failed", "pending": false, "uuid": fmt.Sprint(len(tests))})
	}
	data := struct { // stats first, as mochawesome writes it
		Stats   map[string]any `json:"stats"`
		Results []any          `json:"results"`
	}{
		map[string]any{"suites": 1, "tests": len(states), "passes": passes, "pending": 0, "failures": failures, "skipped": 0},
		[]any{map[string]any{"uuid": "r", "title": "", "file": "test/app.js", "tests": []any{}, "suites": []any{map[string]any{"title": "suite", "file": "test/app.js", "tests": tests, "suites": []any{}}}}},
	}
	b, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`<!doctype html><html><head><title>Mochawesome Report</title></head><body data-raw="` + margeEscape.Replace(string(b)) + `" data-config="{}"><div id="report"></div></body></html>`)
}

// TestCompareTestLists: builds on main where one test flips, then a pull
// request branch; compare names new failures, fixes, still failing and
// flaky tests from the per-test results stored at upload.
func TestCompareTestLists(t *testing.T) {
	e := newAPIEnv(t, envOpts{})
	wantStatus(t, e.do(jsonCall("POST", "/api/projects", map[string]any{"name": "Trends"})), 201)
	upload := func(branch, commit string, states map[string]string) int64 {
		t.Helper()
		r := e.do(multipartCall("POST", "/api/reports", field("projectId", "1"), field("fileType", "html"), field("name", "unit"),
			field("branch", branch), field("commit", commit), file("file", "mochawesome.html", mochawesomePage(t, states))))
		wantStatus(t, r, 201)
		rep := decode[report.Report](t, r)
		if rep.Generator != "mochawesome" || rep.Summary == nil {
			t.Fatalf("upload: %s", r)
		}
		return rep.ID
	}
	compare := func(id int64, base string) report.Comparison {
		t.Helper()
		r := e.do(apiCall{method: "GET", path: "/api/reports/" + strconv.FormatInt(id, 10) + "/compare" + base})
		wantStatus(t, r, 200)
		return decode[report.Comparison](t, r)
	}
	ids := func(refs []report.TestRef) []string {
		out := []string{}
		for _, r := range refs {
			out = append(out, r.Title)
		}
		return out
	}
	want := func(what string, got []report.TestRef, titles ...string) {
		t.Helper()
		if titles == nil {
			titles = []string{}
		}
		if !slices.Equal(ids(got), titles) {
			t.Fatalf("%s: %v, want %v", what, ids(got), titles)
		}
	}
	b1 := upload("main", "c1", map[string]string{"a": "passed", "b": "passed", "c": "failed"})
	b2 := upload("main", "c2", map[string]string{"a": "failed", "b": "passed", "c": "failed"})
	c := compare(b2, "")
	if c.Base == nil || c.Base.ReportID != b1 || c.Delta == nil || *c.Delta.Failed != 1 || *c.Delta.Passed != -1 {
		t.Fatalf("b2 vs b1: %+v", c)
	}
	want("new failures", c.NewFailures, "suite a")
	want("still failing", c.StillFailing, "suite c")
	want("fixed", c.Fixed)
	want("flaky", c.Flaky)
	b3 := upload("main", "c3", map[string]string{"a": "passed", "b": "passed", "c": "failed"})
	c = compare(b3, "?base=previous")
	want("fixed", c.Fixed, "suite a")
	want("flaky after two changes", c.Flaky, "suite a") // passed, failed, passed

	// A pull request: its first build compares with main's newest.
	pr := upload("feature", "c4", map[string]string{"a": "passed", "b": "failed", "c": "passed"})
	c = compare(pr, "?base=branch:main")
	if c.Base == nil || c.Base.ReportID != b3 {
		t.Fatalf("pr vs main: %+v", c.Base)
	}
	want("pr new failures", c.NewFailures, "suite b")
	want("pr fixed", c.Fixed, "suite c")
	if c = compare(pr, ""); c.Base != nil || c.Delta != nil {
		t.Fatalf("first build of a branch has no previous: %+v", c)
	}
	want("no base: every failure is new", c.NewFailures, "suite b")
	// The same commit run twice, once failing: flaky at once.
	again := upload("feature", "c4", map[string]string{"a": "passed", "b": "passed", "c": "passed"})
	want("same commit passed and failed", compare(again, "").Flaky, "suite b")

	// History: every build of main, oldest first, with its figures.
	r := e.do(apiCall{method: "GET", path: "/api/projects/trends/history?name=unit&branch=main"})
	pts := decode[[]report.HistoryPoint](t, r)
	if len(pts) != 3 || pts[0].ReportID != b1 || pts[2].ReportID != b3 || *pts[1].Summary.Failed != 2 || *pts[1].Commit != "c2" {
		t.Fatalf("history: %s", r)
	}
}
