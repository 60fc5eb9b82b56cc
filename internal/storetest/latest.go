package storetest

import (
	"fmt"
	"testing"

	"github.com/reportd/reportd/internal/report"
)

// latestQueries: every form of LatestQuery (project only, name, branch,
// name and branch, "" for reports without a branch) answers the newest
// match, follows deletes and branch or name changes, and never answers
// another project's report.
func latestQueries(t *testing.T, s report.MetaStore, c report.Clock) {
	a, b := mustProject(t, s, c, "a"), mustProject(t, s, c, "b")
	add := func(p int64, name, branch string) int64 { t.Helper(); return addNamed(t, s, c, p, name, branch) }
	want := func(q report.LatestQuery, id int64) {
		t.Helper()
		got, err := s.Latest(ctx, q)
		switch {
		case id == 0 && !report.IsKind(err, report.NotFound):
			t.Fatalf("latest %s: %d %v, want NotFound", describe(q), got.ID, err)
		case id != 0 && (err != nil || got.ID != id):
			t.Fatalf("latest %s: %d %v, want %d", describe(q), got.ID, err, id)
		}
	}
	q := func(p int64, name, branch *string) report.LatestQuery {
		return report.LatestQuery{Project: p, Name: name, Branch: branch}
	}
	want(q(a.ID, nil, nil), 0)
	covMain := add(a.ID, "coverage", "main")
	e2eDev := add(a.ID, "e2e", "dev")
	covDev := add(a.ID, "coverage", "dev")
	plain := add(a.ID, "cov", "") // a prefix of "coverage", no branch
	other := add(b.ID, "coverage", "main")

	want(q(a.ID, nil, nil), plain)
	want(q(b.ID, nil, nil), other)
	want(q(a.ID, ptr("coverage"), nil), covDev)
	want(q(a.ID, ptr("cov"), nil), plain)
	want(q(a.ID, ptr("e2e"), nil), e2eDev)
	want(q(a.ID, ptr("none"), nil), 0)
	want(q(a.ID, nil, ptr("main")), covMain)
	want(q(a.ID, nil, ptr("dev")), covDev)
	want(q(a.ID, nil, ptr("")), plain)
	want(q(a.ID, nil, ptr("ma")), 0)
	want(q(a.ID, ptr("coverage"), ptr("main")), covMain)
	want(q(a.ID, ptr("e2e"), ptr("main")), 0)
	want(q(b.ID, nil, ptr("dev")), 0)

	// Deletes and changes move every form.
	if _, err := s.DeleteReport(ctx, plain); err != nil {
		t.Fatal(err)
	}
	want(q(a.ID, nil, nil), covDev)
	want(q(a.ID, nil, ptr("")), 0)
	want(q(a.ID, ptr("cov"), nil), 0)
	if _, err := s.UpdateReport(ctx, covDev, report.ReportChange{Meta: report.BuildMeta{Name: ptr("perf"), Branch: ptr("")}}); err != nil {
		t.Fatal(err)
	}
	want(q(a.ID, ptr("coverage"), nil), covMain)
	want(q(a.ID, nil, ptr("dev")), e2eDev)
	want(q(a.ID, nil, ptr("")), covDev)
	want(q(a.ID, ptr("perf"), ptr("")), covDev)
	if _, _, err := s.DeleteProject(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	want(q(a.ID, nil, nil), 0)
	want(q(a.ID, ptr("coverage"), nil), 0)
	want(q(a.ID, nil, ptr("main")), 0)
	want(q(b.ID, ptr("coverage"), nil), other)
}

func describe(q report.LatestQuery) string {
	s := fmt.Sprintf("project %d", q.Project)
	if q.Name != nil {
		s += " name=" + *q.Name
	}
	if q.Branch != nil {
		s += " branch=" + *q.Branch
	}
	return s
}

// summaryRoundTrip: the generator and summary are stored with the row and
// read back exactly; a record without them reads back without them.
func summaryRoundTrip(t *testing.T, s report.MetaStore, c report.Clock) {
	a := mustProject(t, s, c, "a")
	id, err := s.NextReportID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := record(id, a.ID, c.NowLocal())
	lines, passed, failed, skipped := 87.25, int64(41), int64(0), int64(3)
	rec.Generator = "coverage.py"
	rec.Summary = &report.Summary{Lines: &lines, Passed: &passed, Failed: &failed, Skipped: &skipped}
	if _, err := s.CreateReport(ctx, rec); err != nil {
		t.Fatal(err)
	}
	plain := mustReport(t, s, c, a.ID, c.NowLocal())
	if plain.Generator != "" || plain.Summary != nil {
		t.Fatalf("a report without a summary: %q %+v", plain.Generator, plain.Summary)
	}
	check := func(r report.ReportRecord) {
		t.Helper()
		sm := r.Summary
		if r.Generator != "coverage.py" || sm == nil || sm.Lines == nil || *sm.Lines != lines || sm.Passed == nil || *sm.Passed != passed ||
			sm.Failed == nil || *sm.Failed != 0 || sm.Skipped == nil || *sm.Skipped != skipped {
			t.Fatalf("summary read back as %q %+v", r.Generator, sm)
		}
	}
	got, err := s.Report(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	check(got)
	list, err := s.Reports(ctx, &a.ID)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %d %v", len(list), err)
	}
	check(list[0])
	up, err := s.UpdateReport(ctx, id, report.ReportChange{FileName: ptr("renamed.md")})
	if err != nil {
		t.Fatal(err)
	}
	check(up)
	l, err := s.Latest(ctx, report.LatestQuery{Project: a.ID, Name: ptr(report.NameFromFile(rec.FileName))})
	if err != nil || l.ID != id {
		t.Fatalf("latest by name: %d %v, want %d", l.ID, err, id)
	}
	check(l)
}
