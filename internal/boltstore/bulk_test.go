package boltstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/report"
)

// BulkLoad must leave the store exactly as the one-by-one calls would:
// index, counters and id sequences included.
func TestBulkLoadKeepsIndexCountersAndSequences(t *testing.T) {
	ctx := context.Background()
	clock := report.Clock{Location: time.UTC, Now: func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }}
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "reportd.db"), clock)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := clock.NowLocal()
	ps := []report.Project{{ID: 1, Name: "a", CreatedAt: report.LocalTime{Time: now}}, {ID: 2, Name: "b", CreatedAt: report.LocalTime{Time: now}}}
	var rs []report.ReportRecord
	for i := int64(1); i <= 45; i++ {
		at := now
		if i%3 == 0 {
			at = now.AddDate(0, 0, -1)
		}
		rs = append(rs, report.ReportRecord{Report: report.Report{ID: i, ProjectID: 1 + i%2, FileName: fmt.Sprintf("r%d.md", i),
			FileType: report.MD, FilePath: fmt.Sprintf("/uploads/reports/%d.md", i), UploadTime: report.LocalTime{Time: at}}, Size: 3, SHA256: "ab"})
	}
	if err := s.BulkLoad(ctx, ps, rs); err != nil {
		t.Fatal(err)
	}
	p, err := s.Project(ctx, 2)
	if err != nil || p.ReportCount != 23 || p.TodayNewReports != 15 {
		t.Fatalf("project 2: %+v %v; want 23 reports, 15 today", p, err)
	}
	list, err := s.Reports(ctx, &p.ID)
	if err != nil || len(list) != 23 || list[0].ID != 1 || list[22].ID != 45 {
		t.Fatalf("project 2 lists %d reports (%v)", len(list), err)
	}
	if id, _ := s.NextReportID(ctx); id != 46 {
		t.Fatalf("next report id %d, want 46", id)
	}
	if id, _ := s.NextProjectID(ctx); id != 3 {
		t.Fatalf("next project id %d, want 3", id)
	}
}
