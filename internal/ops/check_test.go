package ops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
	"github.com/reportd/reportd/internal/site"
	"github.com/reportd/reportd/internal/testserver"
)

// A throwaway PostgreSQL on loopback for this test binary (internal/testserver).
func TestMain(m *testing.M) { testserver.Main(m) }

var ctx = context.Background()

// openers are the metadata stores Check runs on, each on a fresh store,
// with the policy the daemon's registry gives them.
var openers = []struct {
	name   string
	shared bool
	open   func(t *testing.T, clock report.Clock) report.Maintainer
}{
	{"bolt", false, func(t *testing.T, clock report.Clock) report.Maintainer {
		s, err := boltstore.Open(filepath.Join(t.TempDir(), "reportd.db"), clock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
	{"postgres", true, func(t *testing.T, clock report.Clock) report.Maintainer {
		s, err := pgstore.Open(ctx, testserver.DSN(t), clock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
}

// TestCheckOverBothStores: one Check finds, on either metadata store over
// a real data directory, a row whose file is gone, a row whose file has
// other bytes, an orphan and the counters' drift, never calls a site's
// content object or a cached PDF an orphan, and repairs by each store's
// policy: with the store to itself it drops the bad rows and removes
// orphans and staged files; beside running daemons it keeps rows for the
// operator and leaves young objects alone.
func TestCheckOverBothStores(t *testing.T) {
	for _, o := range openers {
		t.Run(o.name, func(t *testing.T) {
			clock := report.Clock{Location: time.UTC}
			meta := o.open(t, clock)
			data := t.TempDir()
			dir, err := files.Open(data)
			if err != nil {
				t.Fatal(err)
			}
			defer dir.Close()
			fs := dir.Blobs()
			put := func(key, body string) {
				t.Helper()
				if _, err := fs.Put(ctx, key, strings.NewReader(body), blob.PutOptions{Size: int64(len(body))}); err != nil {
					t.Fatal(err)
				}
			}
			age := func(key string) {
				t.Helper()
				old := time.Now().Add(-time.Hour)
				if err := os.Chtimes(filepath.Join(data, "uploads", filepath.FromSlash(key)), old, old); err != nil {
					t.Fatal(err)
				}
			}
			pid, _ := meta.NextProjectID(ctx)
			p, err := meta.CreateProject(ctx, report.Project{ID: pid, Name: "p", CreatedAt: report.LocalTime{Time: clock.NowLocal()}})
			if err != nil {
				t.Fatal(err)
			}
			var ids []int64
			for i := range 3 {
				id, _ := meta.NextReportID(ctx)
				body := fmt.Sprintf("# report %d\n", i)
				key := fmt.Sprintf("reports/%d.md", id)
				put(key, body)
				if _, err := meta.CreateReport(ctx, report.ReportRecord{Report: report.Report{ID: id, ProjectID: p.ID, FileName: "r.md",
					FileType: report.MD, FilePath: files.APIPath(key), UploadTime: report.LocalTime{Time: clock.NowLocal()}}, Size: int64(len(body))}); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			st := ops.Stores{Meta: meta, Files: fs, Shared: o.shared}
			if !o.shared {
				st.DataDir, st.StagingDir = data, filepath.Join(data, "tmp")
			}
			if rep, err := ops.Check(ctx, st, false); err != nil || !rep.Clean(false) || rep.Counts["reports"] != 3 {
				t.Fatalf("fresh stores: %+v %v", rep, err)
			}

			// Damage.
			if err := fs.Delete(ctx, fmt.Sprintf("reports/%d.md", ids[0])); err != nil {
				t.Fatal(err)
			}
			put(fmt.Sprintf("reports/%d.md", ids[1]), "other bytes, other size\n")
			put("reports/9999.md", "old orphan")
			age("reports/9999.md")
			put("reports/9998.md", "young orphan")
			put(site.ObjectPrefix+"ab/cdef", "site content")
			put(service.PDFPrefix+"1.pdf", "%PDF-")
			age(site.ObjectPrefix + "ab/cdef")
			age(service.PDFPrefix + "1.pdf")
			if err := os.WriteFile(filepath.Join(data, "tmp", "upload-1"), []byte("half"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := meta.DropReports(ctx, ids[2:]); err != nil { // reportCount and the day now drift
				t.Fatal(err)
			}

			rep, err := ops.Check(ctx, st, false)
			if err != nil {
				t.Fatal(err)
			}
			var missing []int64
			for _, m := range rep.MissingFiles {
				missing = append(missing, m.Report)
			}
			wantOrphans := []string{"/uploads/reports/9999.md"} // the young one is an upload in flight
			wantStaged := []string{}
			if !o.shared {
				wantOrphans = []string{"uploads/reports/9998.md", "uploads/reports/9999.md"}
				wantStaged = []string{"tmp/upload-1"}
			}
			// The dropped row's file is an orphan too (old enough only without grace).
			if !o.shared {
				wantOrphans = append([]string{fmt.Sprintf("uploads/reports/%d.md", ids[2])}, wantOrphans...)
				slices.Sort(wantOrphans)
			}
			if !slices.Equal(missing, ids[:2]) || !slices.Equal(rep.Orphans, wantOrphans) || !slices.Equal(rep.Staged, wantStaged) || len(rep.Drift) == 0 || rep.Clean(false) {
				t.Fatalf("damaged: missing %v (want %v), orphans %v (want %v), staged %v (want %v), drift %v",
					missing, ids[:2], rep.Orphans, wantOrphans, rep.Staged, wantStaged, rep.Drift)
			}

			rep, err = ops.Check(ctx, st, true)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(rep.Repaired, "\n")
			for _, want := range []string{"fixed: project", "removed orphan " + wantOrphans[len(wantOrphans)-1]} {
				if !strings.Contains(got, want) {
					t.Errorf("repaired lacks %q:\n%s", want, got)
				}
			}
			_, youngErr := fs.Stat(ctx, "reports/9998.md")
			for _, key := range []string{site.ObjectPrefix + "ab/cdef", service.PDFPrefix + "1.pdf"} {
				if _, err := fs.Stat(ctx, key); err != nil {
					t.Errorf("repair removed the derived object %s: %v", key, err)
				}
			}
			if o.shared {
				if rep.Clean(true) || !strings.Contains(strings.Join(rep.Unfixable, "\n"), "still missing (restore the object or delete the report)") {
					t.Errorf("shared: rows whose object is gone must be left for the operator: %+v", rep)
				}
				if youngErr != nil {
					t.Errorf("shared: a young object was removed: %v", youngErr)
				}
				return
			}
			if !rep.Clean(true) || !strings.Contains(got, "dropped report") || !strings.Contains(got, "removed staged file tmp/upload-1") || youngErr == nil {
				t.Errorf("exclusive repair: %+v (young object: %v)", rep, youngErr)
			}
			if rep, err := ops.Check(ctx, st, false); err != nil || !rep.Clean(false) || rep.Counts["reports"] != 0 {
				t.Errorf("after repair: %+v %v", rep, err)
			}
		})
	}
}
