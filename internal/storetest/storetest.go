// Package storetest is the conformance suite for report.MetaStore and
// report.Maintainer. Every implementation (bbolt, PostgreSQL) runs it from
// its own tests.
package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

// Opener opens the implementation under test on a fresh, empty store each
// time it is called with a new t; reopen closes and reopens the same one.
type Opener func(t *testing.T, clock report.Clock) (store report.MetaStore, reopen func() report.MetaStore)

// fakeClock is a settable clock in a fixed, non-UTC zone.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

// Run runs every conformance test.
func Run(t *testing.T, open Opener) {
	loc := time.FixedZone("UTC+8", 8*3600)
	newStore := func(t *testing.T) (report.MetaStore, func() report.MetaStore, *fakeClock, report.Clock) {
		fc := &fakeClock{now: time.Date(2026, 3, 10, 12, 0, 0, 0, loc)}
		clock := report.Clock{Location: loc, Now: fc.Now}
		s, reopen := open(t, clock)
		return s, reopen, fc, clock
	}
	t.Run("ProjectsRoundTrip", func(t *testing.T) { s, _, _, c := newStore(t); projectsRoundTrip(t, s, c) })
	t.Run("ReportsIndexAndCounters", func(t *testing.T) { s, _, fc, c := newStore(t); reportsIndex(t, s, fc, c) })
	t.Run("DeleteProjectCascades", func(t *testing.T) { s, _, _, c := newStore(t); deleteCascade(t, s, c) })
	t.Run("UpdateReport", func(t *testing.T) { s, _, _, c := newStore(t); updateReport(t, s, c) })
	t.Run("BuildMetadata", func(t *testing.T) { s, _, _, c := newStore(t); buildMeta(t, s, c) })
	t.Run("LatestIndex", func(t *testing.T) { s, _, _, c := newStore(t); latest(t, s, c) })
	t.Run("LatestQueries", func(t *testing.T) { s, _, _, c := newStore(t); latestQueries(t, s, c) })
	t.Run("LatestNameType", func(t *testing.T) { s, _, _, c := newStore(t); latestNameType(t, s, c) })
	t.Run("History", func(t *testing.T) { s, _, _, c := newStore(t); historyQueries(t, s, c) })
	t.Run("Results", func(t *testing.T) { s, _, _, c := newStore(t); resultsRoundTrip(t, s, c) })
	t.Run("ProjectSlugs", func(t *testing.T) { s, _, _, c := newStore(t); projectSlugs(t, s, c) })
	t.Run("Summary", func(t *testing.T) { s, _, _, c := newStore(t); summaryRoundTrip(t, s, c) })
	t.Run("SummaryFlaky", func(t *testing.T) { s, _, _, c := newStore(t); flakyRoundTrip(t, s, c) })
	t.Run("Sites", func(t *testing.T) { s, _, _, c := newStore(t); sitesRoundTrip(t, s, c) })
	t.Run("NotFound", func(t *testing.T) { s, _, _, _ := newStore(t); notFound(t, s) })
	t.Run("ConcurrentCountersExact", func(t *testing.T) { s, _, _, c := newStore(t); concurrent(t, s, c) })
	t.Run("ReopenKeepsEverything", func(t *testing.T) { s, reopen, _, c := newStore(t); reopenIntact(t, s, reopen, c) })
	t.Run("MaintenanceRefs", func(t *testing.T) { s, _, _, c := newStore(t); maintRefs(t, maintainer(t, s), c) })
	t.Run("MaintenanceDriftRecount", func(t *testing.T) { s, _, _, c := newStore(t); maintDriftRecount(t, maintainer(t, s), c) })
	t.Run("MaintenanceBulkLoad", func(t *testing.T) { s, _, _, c := newStore(t); maintBulkLoad(t, maintainer(t, s), c) })
	t.Run("MaintenancePing", func(t *testing.T) { s, _, _, _ := newStore(t); maintPing(t, maintainer(t, s)) })
}

var ctx = context.Background()

func mustProject(t *testing.T, s report.MetaStore, c report.Clock, name string) report.Project {
	t.Helper()
	id, err := s.NextProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(ctx, report.Project{ID: id, Name: name, CreatedAt: report.LocalTime{Time: c.NowLocal()}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustReport(t *testing.T, s report.MetaStore, c report.Clock, project int64, at time.Time) report.ReportRecord {
	t.Helper()
	id, err := s.NextReportID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.CreateReport(ctx, record(id, project, at))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func record(id, project int64, at time.Time) report.ReportRecord {
	return report.ReportRecord{
		Report: report.Report{ID: id, ProjectID: project, FileName: fmt.Sprintf("r%d.md", id), FileType: report.MD,
			FilePath: fmt.Sprintf("/uploads/reports/%d.md", id), UploadTime: report.LocalTime{Time: at}},
		Size: 10, SHA256: "ab",
	}
}

func counts(t *testing.T, s report.MetaStore, id int64) (total, today int64) {
	t.Helper()
	p, err := s.Project(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := s.Projects(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range ps {
		if q.ID == id && (q.ReportCount != p.ReportCount || q.TodayNewReports != p.TodayNewReports) {
			t.Fatalf("list and detail disagree: %+v vs %+v", q, p)
		}
	}
	return p.ReportCount, p.TodayNewReports
}

// addNamed stores a new report named name on branch ("" for none) in
// project p and returns its id.
func addNamed(t *testing.T, s report.MetaStore, c report.Clock, p int64, name, branch string) int64 {
	t.Helper()
	id, err := s.NextReportID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := record(id, p, c.NowLocal())
	rec.Name = name
	if branch != "" {
		rec.Branch = ptr(branch)
	}
	if _, err := s.CreateReport(ctx, rec); err != nil {
		t.Fatal(err)
	}
	return id
}
