package boltstore

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/reportd/reportd/internal/report"
)

// TestDriftAndRepair damages every kind of derived data by hand, checks
// that CounterDrift names each damage, that Recount repairs all of it, and
// that the store is clean afterwards; ClearCover and DropReports as `reportd
// check --repair` uses them.
func TestDriftAndRepair(t *testing.T) {
	ctx := t.Context()
	s, err := Open(filepath.Join(t.TempDir(), "reportd.db"), report.Clock{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cover := "/uploads/covers/1/c.png"
	at := report.LocalTime{Time: time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)}
	for _, id := range []int64{1, 2} {
		if _, err := s.CreateProject(ctx, report.Project{ID: id, Name: "p", CoverImage: &cover, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	for id, p := range map[int64]int64{1: 1, 2: 1, 3: 2} {
		r := report.ReportRecord{Report: report.Report{ID: id, ProjectID: p, FileName: "r.md", FileType: "md",
			FilePath: fmt.Sprintf("/uploads/reports/%d.md", id), UploadTime: at}, Size: 1, SHA256: "ab"}
		if _, err := s.CreateReport(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if d, err := s.CounterDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("fresh store drifts: %v %v", d, err)
	}

	// Damage: report 1 out of the index, an index entry for a report that
	// does not exist, project 2 gone (leaving report 3 without a project, a
	// dangling index entry and a day counter), project 1's count and day
	// counter wrong.
	err = s.db.Update(func(tx *bolt.Tx) error {
		idx, days := tx.Bucket(bucketProjectReports), tx.Bucket(bucketProjectDays)
		must(t, idx.Delete(pairKey(1, 1)))
		must(t, idx.Put(pairKey(1, 99), nil))
		must(t, tx.Bucket(bucketProjects).Delete(idKey(2)))
		// The latest index: report 2's entry lost, report 1 filed under a
		// branch it is not on.
		row := reportRow{Project: 1, Name: "r.md"}
		must(t, tx.Bucket(bucketLatest).Delete(latestKey(1, &row, 2)))
		// The by-branch index (latest_by.go): report 1's entry lost.
		must(t, tx.Bucket(bucketLatestBranch).Delete(latestIndexes[2].key(1, &row, 1)))
		row.Branch = "elsewhere"
		must(t, tx.Bucket(bucketLatest).Put(latestKey(1, &row, 1), nil))
		_, err := updateProjectRow(tx, 1, func(r *projectRow) { r.Count = 42 })
		must(t, err)
		return days.Put(dayKey(1, "20260304"), u64(7))
	})
	must(t, err)

	if r, err := s.Latest(ctx, exact(1, "r", "")); err != nil || r.ID != 1 {
		t.Fatalf("latest with report 2's entry lost: %d %v, want 1", r.ID, err)
	}
	wantKinds := []string{"dayCount", "dayCount", "index-dangling", "index-dangling", "index-missing",
		"latest-branch-dangling", "latest-branch-missing", "latest-dangling", "latest-dangling", "latest-missing",
		"latest-name-dangling", "latest-name-type-branch-dangling", "latest-name-type-dangling", "report-without-project", "reportCount"}
	drift, err := s.CounterDrift(ctx)
	must(t, err)
	if got := kinds(drift); !reflect.DeepEqual(got, wantKinds) {
		t.Fatalf("drift kinds %v, want %v: %v", got, wantKinds, drift)
	}
	fixed, err := s.Recount(ctx)
	must(t, err)
	if !reflect.DeepEqual(fixed, drift) {
		t.Fatalf("Recount fixed %v, CounterDrift found %v", fixed, drift)
	}
	if d, err := s.CounterDrift(ctx); err != nil || len(d) != 0 {
		t.Fatalf("after Recount: %v %v", d, err)
	}
	p, err := s.Project(ctx, 1)
	if err != nil || p.ReportCount != 2 {
		t.Fatalf("project 1 after Recount: %+v %v", p, err)
	}
	if r, err := s.Latest(ctx, exact(1, "r", "")); err != nil || r.ID != 2 {
		t.Fatalf("latest after Recount: %d %v, want 2", r.ID, err)
	}
	if _, err := s.Latest(ctx, exact(1, "r", "elsewhere")); !report.IsKind(err, report.NotFound) {
		t.Fatalf("the stale entry survived Recount: %v", err)
	}

	// The check's repairs: a missing cover is unset, a missing file's report
	// dropped; a cover of a project that is gone needs nothing.
	must(t, s.ClearCover(ctx, 1))
	must(t, s.ClearCover(ctx, 2))
	must(t, s.DropReports(ctx, []int64{2, 404}))
	refs, err := s.Refs(ctx)
	must(t, err)
	if want := []Ref{{Path: "/uploads/reports/1.md", Project: 1, Report: 1}}; !reflect.DeepEqual(refs, want) {
		t.Fatalf("refs after repairs %+v, want %+v", refs, want)
	}
	var paths []string
	must(t, s.FilePaths(ctx, func(p string) error { paths = append(paths, p); return nil }))
	if !reflect.DeepEqual(paths, []string{"/uploads/reports/1.md"}) {
		t.Fatalf("FilePaths = %v", paths)
	}
	if p, err := s.Project(ctx, 1); err != nil || p.CoverImage != nil || p.Name != "p" {
		t.Fatalf("project 1 after ClearCover: %+v %v", p, err)
	}
	if drift, _ := s.CounterDrift(ctx); !reflect.DeepEqual(kinds(drift), []string{"dayCount", "reportCount"}) {
		t.Fatalf("after DropReports, before Recount: %v", drift)
	}
	if r, err := s.Latest(ctx, exact(1, "r", "")); err != nil || r.ID != 1 {
		t.Fatalf("latest after DropReports(2): %d %v, want 1", r.ID, err)
	}
}

func kinds(ds []Drift) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.What)
	}
	slices.Sort(out)
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// exact is the latest query for one (project, name, branch).
func exact(project int64, name, branch string) report.LatestQuery {
	return report.LatestQuery{Project: project, Name: &name, Branch: &branch}
}
