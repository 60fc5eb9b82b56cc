package pgstore_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testserver"
)

// A project delete racing uploads, report deletes and updates into the same
// project: every call either succeeds or says NotFound (no deadlock, no
// serialization failure), nothing is orphaned, and every report is
// accounted for exactly once (deleted on its own or returned by the
// project delete).
func TestDeleteProjectRaces(t *testing.T) {
	clock := report.Clock{Location: time.UTC}
	s := open(t, testserver.DSN(t), clock)
	defer s.Close()
	for round := 0; round < 5; round++ {
		id, _ := s.NextProjectID(ctx)
		if _, err := s.CreateProject(ctx, report.Project{ID: id, Name: "p", CreatedAt: report.LocalTime{Time: clock.NowLocal()}}); err != nil {
			t.Fatal(err)
		}
		var created []int64
		add := func() error {
			rid, err := s.NextReportID(ctx)
			if err != nil {
				return err
			}
			_, err = s.CreateReport(ctx, report.ReportRecord{Report: report.Report{ID: rid, ProjectID: id, FileName: "r.md",
				FileType: report.MD, FilePath: fmt.Sprintf("/uploads/reports/%d.md", rid), UploadTime: report.LocalTime{Time: clock.NowLocal()}}})
			if err == nil {
				created = append(created, rid)
			}
			return err
		}
		for i := 0; i < 20; i++ {
			if err := add(); err != nil {
				t.Fatal(err)
			}
		}
		initial := append([]int64(nil), created...)
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			gone     = map[int64]int{}
			uploads  atomic.Int64
			failures = make(chan error, 100)
		)
		allowed := func(err error) {
			if err != nil && !report.IsKind(err, report.NotFound) {
				failures <- err
			}
		}
		for w := 0; w < 4; w++ { // deleters of single reports
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < len(initial); i += 4 {
					r, err := s.DeleteReport(ctx, initial[i])
					allowed(err)
					if err == nil {
						mu.Lock()
						gone[r.ID]++
						mu.Unlock()
					}
				}
			}(w)
		}
		for w := 0; w < 2; w++ { // uploaders and renamers
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < 10; i++ {
					rid, _ := s.NextReportID(ctx)
					_, err := s.CreateReport(ctx, report.ReportRecord{Report: report.Report{ID: rid, ProjectID: id, FileName: "n.md",
						FileType: report.MD, FilePath: "x", UploadTime: report.LocalTime{Time: clock.NowLocal()}}})
					allowed(err)
					if err == nil {
						uploads.Add(1)
					}
					_, err = s.UpdateReport(ctx, initial[(i*7+w)%len(initial)], report.ReportChange{Meta: report.BuildMeta{Branch: ptr("b")}})
					allowed(err)
				}
			}(w)
		}
		wg.Add(1)
		var removed []report.ReportRecord
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(round) * 3 * time.Millisecond)
			var err error
			_, removed, err = s.DeleteProject(ctx, id)
			allowed(err)
		}()
		wg.Wait()
		close(failures)
		for err := range failures {
			t.Fatalf("round %d: %v", round, err)
		}
		for _, r := range removed {
			gone[r.ID]++
		}
		want := len(initial) + int(uploads.Load())
		n := 0
		for rid, c := range gone {
			if c > 1 {
				t.Fatalf("round %d: report %d removed %d times", round, rid, c)
			}
			n += c
		}
		if n != want {
			t.Fatalf("round %d: %d reports removed, %d were created", round, n, want)
		}
		var orphans int
		if err := s.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM reports WHERE project_id = $1)
			+ (SELECT count(*) FROM project_days WHERE project_id = $1)`, id).Scan(&orphans); err != nil || orphans != 0 {
			t.Fatalf("round %d: %d rows left of the deleted project (%v)", round, orphans, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
