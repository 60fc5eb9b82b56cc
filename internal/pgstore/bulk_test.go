package pgstore_test

import (
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testserver"
)

// BulkLoad leaves the counters, day counts and sequences as row-by-row
// creation would; two loads add up.
func TestBulkLoad(t *testing.T) {
	loc := time.FixedZone("UTC+8", 8*3600)
	clock := report.Clock{Location: loc}
	s := open(t, testserver.DSN(t), clock)
	defer s.Close()
	at := time.Date(2026, 3, 10, 20, 0, 0, 0, time.UTC) // the 11th in UTC+8
	projects := []report.Project{{ID: 1, Name: "a", CreatedAt: report.LocalTime{Time: at}}, {ID: 5, Name: "b", CreatedAt: report.LocalTime{Time: at}}}
	rec := func(id, project int64, t time.Time) report.ReportRecord {
		return report.ReportRecord{Report: report.Report{ID: id, ProjectID: project, FileName: "r.md", FileType: report.MD,
			FilePath: "/uploads/reports/x.md", UploadTime: report.LocalTime{Time: t}}, Size: 1, SHA256: "00"}
	}
	if err := s.BulkLoad(ctx, projects, []report.ReportRecord{rec(1, 1, at), rec(2, 1, at.Add(-13*time.Hour)), rec(3, 5, at)}); err != nil {
		t.Fatal(err)
	}
	site := rec(9, 1, at)
	site.Kind, site.FileType, site.Entry, site.Files, site.Bytes = report.KindSite, report.HTML, "index.html", 3, 1234
	passed, failed, skipped, flaky := int64(4), int64(2), int64(1), int64(1)
	site.Generator, site.Summary = "playwright", &report.Summary{Passed: &passed, Failed: &failed, Skipped: &skipped, Flaky: &flaky}
	if err := s.BulkLoad(ctx, nil, []report.ReportRecord{site}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Report(ctx, 9); err != nil || got.Kind != report.KindSite || got.Entry != "index.html" || got.Files != 3 || got.Bytes != 1234 {
		t.Fatalf("a site loaded in bulk reads back as %+v %v", got.Report, err)
	}
	if got, err := s.Report(ctx, 9); err != nil || got.Summary == nil || got.Summary.Flaky == nil || *got.Summary.Flaky != flaky ||
		*got.Summary.Passed != passed || *got.Summary.Failed != failed || *got.Summary.Skipped != skipped {
		t.Fatalf("a summary loaded in bulk reads back as %+v %v", got.Summary, err)
	}
	drift, err := s.CounterDrift(ctx)
	if err != nil || len(drift) != 0 {
		t.Fatalf("drift after BulkLoad: %v %v", drift, err)
	}
	p, err := s.Project(ctx, 1)
	if err != nil || p.ReportCount != 3 {
		t.Fatalf("project 1: %+v %v", p, err)
	}
	days, err := s.DayCounts(ctx)
	if err != nil || len(days) != 3 || days[0] != (report.DayCount{Project: 1, Day: "20260310", Count: 1}) || days[1].Count != 2 {
		t.Fatalf("days: %+v %v", days, err)
	}
	if id, err := s.NextReportID(ctx); err != nil || id <= 9 {
		t.Fatalf("next report id %d %v", id, err)
	}
	if id, err := s.NextProjectID(ctx); err != nil || id <= 5 {
		t.Fatalf("next project id %d %v", id, err)
	}
}

// AdvanceSequences moves both sequences forward, never back.
func TestAdvanceSequences(t *testing.T) {
	s := open(t, testserver.DSN(t), report.Clock{})
	defer s.Close()
	if err := s.AdvanceSequences(ctx, 41, 99); err != nil {
		t.Fatal(err)
	}
	if err := s.AdvanceSequences(ctx, 1, 0); err != nil { // back: ignored
		t.Fatal(err)
	}
	if p, r, err := s.Sequences(ctx); err != nil || p != 41 || r != 99 {
		t.Fatalf("sequences %d, %d (%v), want 41, 99", p, r, err)
	}
	if id, err := s.NextReportID(ctx); err != nil || id != 100 {
		t.Errorf("next report id %d (%v), want 100", id, err)
	}
}
