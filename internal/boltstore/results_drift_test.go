package boltstore

import (
	"encoding/binary"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// TestResultsDrift: per-test results kept for a report row that is gone
// are drift ("results-dangling", what `reportd check` reports) and Recount
// (check --repair) drops them; a row dropped because its project is gone
// takes its results with it; results of live reports stay.
func TestResultsDrift(t *testing.T) {
	ctx := t.Context()
	s, err := Open(filepath.Join(t.TempDir(), "reportd.db"), report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := report.LocalTime{Time: time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)}
	for _, id := range []int64{1, 2} {
		if _, err := s.CreateProject(ctx, report.Project{ID: id, Name: "p", CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	res := &report.Results{Tests: []report.TestResult{{ID: "t", Title: "T", Status: report.TestPassed}}}
	for id, p := range map[int64]int64{1: 1, 2: 1, 3: 2} {
		r := report.ReportRecord{Report: report.Report{ID: id, ProjectID: p, FileName: "r.md", FileType: "md",
			FilePath: "/uploads/reports/r.md", UploadTime: at}, Size: 1, SHA256: "ab"}
		if _, err := s.CreateReport(ctx, r); err != nil {
			t.Fatal(err)
		}
		must(t, s.SetResults(ctx, id, res))
	}
	// Damage: report 2's row gone without its results (and its index
	// entries, which are drift of their own), project 2 gone.
	must(t, s.db.Update(func(tx *bolt.Tx) error {
		must(t, tx.Bucket(bucketReports).Delete(idKey(2)))
		return tx.Bucket(bucketProjects).Delete(idKey(2))
	}))
	drift, err := s.CounterDrift(ctx)
	must(t, err)
	var lost []report.Drift
	for _, d := range drift {
		if d.What == "results-dangling" {
			lost = append(lost, d)
		}
	}
	if want := []report.Drift{{What: "results-dangling", Report: 2}}; !reflect.DeepEqual(lost, want) {
		t.Fatalf("results drift %v, want %v (all: %v)", lost, want, drift)
	}
	if got := lost[0].String(); got != "report 2: per-test results kept for a report that does not exist" {
		t.Errorf("String: %q", got)
	}
	fixed, err := s.Recount(ctx)
	if err != nil || !reflect.DeepEqual(fixed, drift) {
		t.Fatalf("Recount fixed %v (%v), found %v", fixed, err, drift)
	}
	if d, err := s.CounterDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("after Recount: %v %v", d, err)
	}
	must(t, s.db.View(func(tx *bolt.Tx) error {
		var keys []int64
		must(t, tx.Bucket(bucketResults).ForEach(func(k, _ []byte) error { keys = append(keys, int64(binary.BigEndian.Uint64(k))); return nil }))
		if !reflect.DeepEqual(keys, []int64{1}) {
			t.Errorf("results kept after Recount: %v, want [1]", keys)
		}
		return nil
	}))
	if got, err := s.Results(ctx, 1); err != nil || !reflect.DeepEqual(got, res) {
		t.Fatalf("report 1's results after Recount: %+v %v", got, err)
	}
}
