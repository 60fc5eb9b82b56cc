package storetest

import (
	"reflect"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// historyQueries: History answers the newest Limit reports of a name
// (and type, and branch; "" for none; below Before), oldest first, never
// another name's or project's, and follows deletes.
func historyQueries(t *testing.T, s report.MetaStore, c report.Clock) {
	a, b := mustProject(t, s, c, "a"), mustProject(t, s, c, "b")
	add := func(p int64, name, branch string) int64 { t.Helper(); return addNamed(t, s, c, p, name, branch) }
	want := func(q report.HistoryQuery, ids ...int64) {
		t.Helper()
		got, err := s.History(ctx, q)
		if err != nil {
			t.Fatalf("history %+v: %v", q, err)
		}
		gotIDs := []int64{}
		for _, r := range got {
			gotIDs = append(gotIDs, r.ID)
		}
		if ids == nil {
			ids = []int64{}
		}
		if !reflect.DeepEqual(gotIDs, ids) {
			t.Fatalf("history %+v: %v, want %v", q, gotIDs, ids)
		}
	}
	q := func(name string, branch *string, limit int) report.HistoryQuery {
		return report.HistoryQuery{Project: a.ID, Name: name, Branch: branch, Limit: limit}
	}
	want(q("coverage", nil, 10))
	m1 := add(a.ID, "coverage", "main")
	d1 := add(a.ID, "coverage", "dev")
	add(a.ID, "cov", "main") // a prefix of "coverage"
	add(a.ID, "coverage2", "main")
	m2 := add(a.ID, "coverage", "main")
	n1 := add(a.ID, "coverage", "")
	add(b.ID, "coverage", "main")
	m3 := add(a.ID, "coverage", "main")

	want(q("coverage", nil, 10), m1, d1, m2, n1, m3)
	want(q("coverage", nil, 2), n1, m3)
	want(q("coverage", ptr("main"), 10), m1, m2, m3)
	want(q("coverage", ptr("main"), 2), m2, m3)
	want(q("coverage", ptr(""), 10), n1)
	want(q("coverage", ptr("nope"), 10))
	want(q("nothing", nil, 10))
	before := q("coverage", ptr("main"), 10)
	before.Before = m3
	want(before, m1, m2)
	before.Before, before.Limit = m2, 1
	want(before, m1)
	typed := q("coverage", ptr("main"), 10)
	typed.Type = ptr(report.MD)
	want(typed, m1, m2, m3)
	typed.Type = ptr(report.PDF)
	want(typed)

	if _, err := s.DeleteReport(ctx, m2); err != nil {
		t.Fatal(err)
	}
	want(q("coverage", ptr("main"), 10), m1, m3)
}

// resultsRoundTrip: per-test results stored with a report read back as
// given, SetResults replaces and removes them, a report without any has
// nil, and they go with the report and with its project.
func resultsRoundTrip(t *testing.T, s report.MetaStore, c report.Clock) {
	a := mustProject(t, s, c, "a")
	res := &report.Results{
		Tests:     []report.TestResult{{ID: "t1", Title: "adds", Status: report.TestPassed, DurationMs: 12}, {ID: "t2", Title: "Grüße", Status: report.TestFailed, DurationMs: 3, Flaky: true}},
		Files:     []report.FileCoverage{{Path: "a.go", Lines: 87.5}},
		Truncated: true,
	}
	id, err := s.NextReportID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := record(id, a.ID, c.NowLocal())
	rec.Results = res
	if _, err := s.CreateReport(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Results(ctx, id); err != nil || !reflect.DeepEqual(got, res) {
		t.Fatalf("results read back: %+v %v, want %+v", got, err, res)
	}
	plain := mustReport(t, s, c, a.ID, c.NowLocal())
	if got, err := s.Results(ctx, plain.ID); err != nil || got != nil {
		t.Fatalf("a report without results: %+v %v", got, err)
	}
	other := &report.Results{Tests: []report.TestResult{{ID: "x", Title: "x", Status: report.TestSkipped}}}
	if err := s.SetResults(ctx, plain.ID, other); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Results(ctx, plain.ID); err != nil || !reflect.DeepEqual(got, other) {
		t.Fatalf("set results: %+v %v", got, err)
	}
	if err := s.SetResults(ctx, plain.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Results(ctx, plain.ID); err != nil || got != nil {
		t.Fatalf("removed results: %+v %v", got, err)
	}
	if err := s.SetResults(ctx, 1<<40, other); !report.IsKind(err, report.NotFound) {
		t.Fatalf("results of no report: %v", err)
	}
	if _, err := s.Results(ctx, 1<<40); !report.IsKind(err, report.NotFound) {
		t.Fatalf("results of no report: %v", err)
	}
	if err := s.SetResults(ctx, plain.ID, other); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteReport(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Results(ctx, id); !report.IsKind(err, report.NotFound) {
		t.Fatalf("results of a deleted report: %v", err)
	}
	if _, _, err := s.DeleteProject(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	// A report created again under the old id (a restored backup) starts
	// without the deleted one's results.
	again := record(plain.ID, mustProject(t, s, c, "b").ID, c.NowLocal())
	if _, err := s.CreateReport(ctx, again); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Results(ctx, plain.ID); err != nil || got != nil {
		t.Fatalf("results outlived their project: %+v %v", got, err)
	}
}
