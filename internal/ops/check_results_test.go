package ops_test

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
)

// TestCheckResultsOfGoneReports: on bbolt, per-test results left behind by
// a report row that is gone (the row deleted from the file by hand) are
// drift in `reportd check` and dropped by --repair, the live report's
// results staying. PostgreSQL's foreign key (ON DELETE CASCADE) rules this
// damage out there.
func TestCheckResultsOfGoneReports(t *testing.T) {
	clock := report.Clock{Location: time.UTC}
	data := t.TempDir()
	dir, err := files.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	path := filepath.Join(t.TempDir(), "reportd.db")
	meta, err := boltstore.Open(path, clock)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := meta.NextProjectID(ctx)
	if _, err := meta.CreateProject(ctx, report.Project{ID: pid, Name: "p", CreatedAt: report.LocalTime{Time: clock.NowLocal()}}); err != nil {
		t.Fatal(err)
	}
	res := &report.Results{Tests: []report.TestResult{{ID: "t", Title: "T", Status: report.TestFailed}}}
	var ids []int64
	for range 2 {
		id, _ := meta.NextReportID(ctx)
		key, body := fmt.Sprintf("reports/%d.md", id), "# r\n"
		if _, err := dir.Blobs().Put(ctx, key, strings.NewReader(body), blob.PutOptions{Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := meta.CreateReport(ctx, report.ReportRecord{Report: report.Report{ID: id, ProjectID: pid, FileName: "r.md",
			FileType: report.MD, FilePath: files.APIPath(key), UploadTime: report.LocalTime{Time: clock.NowLocal()}}, Size: int64(len(body)), Results: res}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	meta.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		k := binary.BigEndian.AppendUint64(nil, uint64(ids[1]))
		return tx.Bucket([]byte("reports")).Delete(k) // its results stay behind
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if meta, err = boltstore.Open(path, clock); err != nil {
		t.Fatal(err)
	}
	defer meta.Close()
	st := ops.Stores{Meta: meta, Files: dir.Blobs(), DataDir: data, StagingDir: filepath.Join(data, "tmp")}

	rep, err := ops.Check(ctx, st, false)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range rep.Drift {
		found = found || (d.What == "results-dangling" && d.Report == ids[1])
	}
	if !found {
		t.Fatalf("check did not name the results of report %d: %+v", ids[1], rep.Drift)
	}
	rep, err = ops.Check(ctx, st, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Repaired, "\n"), "per-test results kept for a report that does not exist") {
		t.Errorf("repair: %+v", rep)
	}
	if rep, err := ops.Check(ctx, st, false); err != nil || len(rep.Drift) != 0 {
		t.Fatalf("after repair: %+v %v", rep.Drift, err)
	}
	if got, err := meta.Results(ctx, ids[0]); err != nil || got == nil || len(got.Tests) != 1 {
		t.Fatalf("the live report's results after repair: %+v %v", got, err)
	}
}
