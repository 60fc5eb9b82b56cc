package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/report"
)

// seedTo grows the store to `reports` reports straight through the bbolt
// store (the daemon must be stopped), with a tiny real file for each, so
// the start-up sweep and the detail endpoint see a realistic data dir.
//
// Project 1 gets the first TargetReports reports and no more, so the
// per-project list measures the same 100 rows at every size; the rest go
// round-robin over the other projects (100 each at 100,000).
func (b *bench) seedTo(ctx context.Context, have, reports int) error {
	dir := filepath.Join(b.dataDir, "uploads", "reports")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	store, err := boltstore.Open(filepath.Join(b.dataDir, "reportd.db"), report.Clock{Location: time.Local})
	if err != nil {
		return err
	}
	defer store.Close()
	now := time.Now().Truncate(time.Second)
	var projects []report.Project
	if have == 0 {
		projects = benchkit.Projects(b.sz.Projects, now)
	}
	recs := make([]report.ReportRecord, 0, reports-have)
	for i := have + 1; i <= reports; i++ {
		t := []report.FileType{report.HTML, report.MD, report.PDF}[i%3]
		body := tinyFile(t, i)
		sum := sha256.Sum256(body)
		rec := report.ReportRecord{
			Report: report.Report{ID: int64(i), ProjectID: benchkit.ProjectOf(i, b.sz.TargetReports, b.sz.Projects), FileName: "report-" + strconv.Itoa(i) + t.Ext(),
				FileType: t, FilePath: "/uploads/reports/" + strconv.Itoa(i) + t.Ext(),
				UploadTime: report.LocalTime{Time: now.AddDate(0, 0, -(i % 30))}},
			Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:]),
		}
		if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(i)+t.Ext()), body, 0o640); err != nil {
			return err
		}
		recs = append(recs, rec)
	}
	return store.BulkLoad(ctx, projects, recs)
}

func tinyFile(t report.FileType, i int) []byte {
	switch t {
	case report.HTML:
		return fmt.Appendf(nil, "<!doctype html><title>Report %d</title><h1>Report %d</h1><p>Seeded for the benchmark.</p>\n", i, i)
	case report.MD:
		return fmt.Appendf(nil, "# Report %d\n\nSeeded for the benchmark.\n", i)
	}
	return fmt.Appendf(nil, "%%PDF-1.4\n%% report %d\n%%%%EOF\n", i)
}
