package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// maintainer is the store under test as a report.Maintainer: every store
// the daemon can open must be one (the operator commands of internal/ops
// run on it).
func maintainer(t *testing.T, s report.MetaStore) report.Maintainer {
	t.Helper()
	m, ok := s.(report.Maintainer)
	if !ok {
		t.Fatalf("%T does not implement report.Maintainer", s)
	}
	return m
}

// maintRefs: Refs names every cover (Report 0) and every report's stored
// object (a site's manifest), with its project and report; ClearCover
// drops a cover from them.
func maintRefs(t *testing.T, s report.Maintainer, c report.Clock) {
	a := mustProject(t, s, c, "a")
	id, err := s.NextProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cover := fmt.Sprintf("/uploads/covers/%d/cover.png", id)
	b, err := s.CreateProject(ctx, report.Project{ID: id, Name: "b", CoverImage: &cover, CreatedAt: report.LocalTime{Time: c.NowLocal()}})
	if err != nil {
		t.Fatal(err)
	}
	file := mustReport(t, s, c, a.ID, c.NowLocal())
	sid, err := s.NextReportID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := record(sid, b.ID, c.NowLocal())
	rec.FileType, rec.FilePath, rec.Kind, rec.Entry, rec.Files = report.HTML, report.SiteFilePath(sid, "index.html"), report.KindSite, "index.html", 1
	rec.Size, rec.SHA256 = 0, ""
	if _, err := s.CreateReport(ctx, rec); err != nil {
		t.Fatal(err)
	}
	want := []report.FileRef{
		{Path: cover, Project: b.ID},
		{Path: file.FilePath, Project: a.ID, Report: file.ID},
		{Path: report.SiteManifestPath(sid), Project: b.ID, Report: sid},
	}
	refs, err := s.Refs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(refs, want) {
		t.Fatalf("Refs = %+v, want %+v", refs, want)
	}
	if err := s.ClearCover(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Project(ctx, b.ID); err != nil || p.CoverImage != nil && *p.CoverImage != "" {
		t.Fatalf("after ClearCover the project reads back with cover %v (%v)", p.CoverImage, err)
	}
	if refs, err = s.Refs(ctx); err != nil || !slices.Equal(refs, want[1:]) {
		t.Fatalf("after ClearCover Refs = %+v (%v), want %+v", refs, err, want[1:])
	}
}

// maintDriftRecount: a consistent store has no drift; rows dropped with
// DropReports leave reportCount and the day counter behind, CounterDrift
// names both, Recount fixes and returns them, and the store is clean and
// counts right afterwards.
func maintDriftRecount(t *testing.T, s report.Maintainer, c report.Clock) {
	a := mustProject(t, s, c, "a")
	now := c.NowLocal()
	var ids []int64
	for range 3 {
		ids = append(ids, mustReport(t, s, c, a.ID, now).ID)
	}
	if d, err := s.CounterDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("a consistent store drifts: %v (%v)", d, err)
	}
	if err := s.DropReports(ctx, []int64{ids[0], ids[1], 999999}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Report(ctx, ids[0]); !report.IsKind(err, report.NotFound) {
		t.Fatalf("a dropped report still reads back: %v", err)
	}
	day := c.Date(now).Format("20060102")
	drift, err := s.CounterDrift(ctx)
	if err != nil {
		t.Fatal(err)
	}
	has := func(ds []report.Drift, what string, stored, actual int64) bool {
		return slices.ContainsFunc(ds, func(d report.Drift) bool {
			return d.What == what && d.Project == a.ID && d.Stored == stored && d.Actual == actual && (what != "dayCount" || d.Day == day)
		})
	}
	if !has(drift, "reportCount", 3, 1) || !has(drift, "dayCount", 3, 1) {
		t.Fatalf("after DropReports CounterDrift = %v, want reportCount and dayCount 3 → 1", drift)
	}
	fixed, err := s.Recount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !has(fixed, "reportCount", 3, 1) || !has(fixed, "dayCount", 3, 1) {
		t.Fatalf("Recount fixed %v, want reportCount and dayCount 3 → 1", fixed)
	}
	if d, err := s.CounterDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("after Recount: %v (%v)", d, err)
	}
	if total, today := counts(t, s, a.ID); total != 1 || today != 1 {
		t.Fatalf("after Recount the project counts %d reports, %d today; want 1, 1", total, today)
	}
	days, err := s.DayCounts(ctx)
	if err != nil || !slices.Equal(days, []report.DayCount{{Project: a.ID, Day: day, Count: 1}}) {
		t.Fatalf("DayCounts = %v (%v)", days, err)
	}
}

// maintBulkLoad: BulkLoad keeps the ids it is given, the counters and the
// sequences as CreateProject and CreateReport would; AdvanceSequences moves
// the sequences forward only; Counts counts the rows.
func maintBulkLoad(t *testing.T, s report.Maintainer, c report.Clock) {
	now := c.NowLocal()
	yesterday := now.Add(-24 * time.Hour)
	projects := []report.Project{
		{ID: 5, Name: "five", CreatedAt: report.LocalTime{Time: yesterday}},
		{ID: 9, Name: "nine", CreatedAt: report.LocalTime{Time: yesterday}},
	}
	reports := []report.ReportRecord{record(11, 5, yesterday), record(12, 5, now), record(40, 9, now)}
	if err := s.BulkLoad(ctx, projects, reports); err != nil {
		t.Fatal(err)
	}
	if d, err := s.CounterDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("after BulkLoad: drift %v (%v)", d, err)
	}
	if total, today := counts(t, s, 5); total != 2 || today != 1 {
		t.Fatalf("project 5 counts %d reports, %d today; want 2, 1", total, today)
	}
	days, err := s.DayCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	y, d := c.Date(yesterday).Format("20060102"), c.Date(now).Format("20060102")
	if want := []report.DayCount{{Project: 5, Day: y, Count: 1}, {Project: 5, Day: d, Count: 1}, {Project: 9, Day: d, Count: 1}}; !slices.Equal(days, want) {
		t.Fatalf("DayCounts = %v, want %v", days, want)
	}
	n, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]int64{"projects": 2, "reports": 3, "project_days": 3, "tokens": 0} {
		if got, ok := n[table]; !ok || got != want {
			t.Fatalf("Counts[%q] = %d (present %v), want %d (all: %v)", table, got, ok, want, n)
		}
	}
	seq := func() (int64, int64) {
		t.Helper()
		p, r, err := s.Sequences(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return p, r
	}
	if p, r := seq(); p < 9 || r < 40 {
		t.Fatalf("after BulkLoad the sequences are at %d/%d, below the loaded ids 9/40", p, r)
	}
	if err := s.AdvanceSequences(ctx, 100, 200); err != nil {
		t.Fatal(err)
	}
	if p, r := seq(); p != 100 || r != 200 {
		t.Fatalf("after AdvanceSequences(100, 200) the sequences are at %d/%d", p, r)
	}
	if err := s.AdvanceSequences(ctx, 50, 60); err != nil {
		t.Fatal(err)
	}
	if p, r := seq(); p != 100 || r != 200 {
		t.Fatalf("AdvanceSequences moved the sequences back to %d/%d", p, r)
	}
	if id, err := s.NextProjectID(ctx); err != nil || id <= 100 {
		t.Fatalf("next project id %d (%v), want past 100", id, err)
	}
	if id, err := s.NextReportID(ctx); err != nil || id <= 200 {
		t.Fatalf("next report id %d (%v), want past 200", id, err)
	}
}

// maintPing: an open store answers Ping (the daemon's health checks).
func maintPing(t *testing.T, s report.Maintainer) {
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping on an open store: %v", err)
	}
}
