package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/report"
)

func ptr[T any](v T) *T { return &v }

func projectsRoundTrip(t *testing.T, s report.MetaStore, c report.Clock) {
	if ps, err := s.Projects(ctx); err != nil || ps == nil || len(ps) != 0 {
		t.Fatalf("empty store: %v %v (want a non-nil empty list)", ps, err)
	}
	a := mustProject(t, s, c, "alpha")
	b := mustProject(t, s, c, "beta")
	if b.ID <= a.ID {
		t.Fatalf("ids not increasing: %d then %d", a.ID, b.ID)
	}
	if a.Description != nil || a.CoverImage != nil {
		t.Fatalf("unset fields must be nil: %+v", a)
	}
	if a.CreatedAt.Location().String() != c.Location.String() || !a.CreatedAt.Equal(c.NowLocal()) {
		t.Fatalf("createdAt %v, want %v in %v", a.CreatedAt, c.NowLocal(), c.Location)
	}
	p, old, err := s.UpdateProject(ctx, a.ID, report.ProjectChange{Name: ptr("alpha2"), Description: ptr("d"), CoverImage: ptr("/uploads/covers/1/x.png")})
	if err != nil || old != nil || p.Name != "alpha2" || *p.Description != "d" || *p.CoverImage != "/uploads/covers/1/x.png" {
		t.Fatalf("update: %+v old=%v err=%v", p, old, err)
	}
	p, old, err = s.UpdateProject(ctx, a.ID, report.ProjectChange{CoverImage: ptr("/uploads/covers/1/y.png")})
	if err != nil || old == nil || *old != "/uploads/covers/1/x.png" || p.Name != "alpha2" {
		t.Fatalf("cover replace: %+v old=%v err=%v", p, old, err)
	}
	if p.Retention != nil {
		t.Fatalf("a new project has no retention policy: %+v", p.Retention)
	}
	keep, no := 5, false
	p, _, err = s.UpdateProject(ctx, a.ID, report.ProjectChange{Retention: &report.Retention{KeepLast: &keep, KeepNewestPerBranch: &no}})
	if err != nil || p.Retention == nil || *p.Retention.KeepLast != 5 || p.Retention.MaxAgeDays != nil || *p.Retention.KeepNewestPerBranch || p.Name != "alpha2" {
		t.Fatalf("set retention: %+v %+v %v", p, p.Retention, err)
	}
	if got, err := s.Project(ctx, a.ID); err != nil || got.Retention == nil || *got.Retention.KeepLast != 5 {
		t.Fatalf("retention read back: %+v %v", got.Retention, err)
	}
	p, _, err = s.UpdateProject(ctx, a.ID, report.ProjectChange{Name: ptr("alpha2")})
	if err != nil || p.Retention == nil || *p.Retention.KeepLast != 5 {
		t.Fatalf("an update without retention keeps it: %+v %v", p.Retention, err)
	}
	p, _, err = s.UpdateProject(ctx, a.ID, report.ProjectChange{Retention: &report.Retention{}})
	if err != nil || p.Retention != nil {
		t.Fatalf("clear retention: %+v %v", p.Retention, err)
	}
	ps, err := s.Projects(ctx)
	if err != nil || len(ps) != 2 || ps[0].ID != a.ID || ps[1].ID != b.ID {
		t.Fatalf("list order: %+v %v", ps, err)
	}
	var paths []string
	s.FilePaths(ctx, func(p string) error { paths = append(paths, p); return nil })
	if len(paths) != 1 || paths[0] != "/uploads/covers/1/y.png" {
		t.Fatalf("FilePaths = %v", paths)
	}
}

func reportsIndex(t *testing.T, s report.MetaStore, fc *fakeClock, c report.Clock) {
	a := mustProject(t, s, c, "a")
	b := mustProject(t, s, c, "b")
	yesterday := c.NowLocal().Add(-24 * time.Hour)
	r1 := mustReport(t, s, c, a.ID, yesterday)
	r2 := mustReport(t, s, c, b.ID, c.NowLocal())
	r3 := mustReport(t, s, c, a.ID, c.NowLocal())
	if total, today := counts(t, s, a.ID); total != 2 || today != 1 {
		t.Fatalf("project a counts = %d/%d, want 2/1", total, today)
	}
	ra, err := s.Reports(ctx, &a.ID)
	if err != nil || len(ra) != 2 || ra[0].ID != r1.ID || ra[1].ID != r3.ID {
		t.Fatalf("per-project list: %+v %v", ra, err)
	}
	all, err := s.Reports(ctx, nil)
	if err != nil || len(all) != 3 || all[0].ID != r1.ID || all[1].ID != r2.ID || all[2].ID != r3.ID {
		t.Fatalf("all reports, id order: %+v %v", all, err)
	}
	none := int64(999)
	if rs, err := s.Reports(ctx, &none); err != nil || rs == nil || len(rs) != 0 {
		t.Fatalf("unknown project lists []: %v %v", rs, err)
	}
	got, err := s.Report(ctx, r1.ID)
	if err != nil || got.SHA256 != "ab" || got.Size != 10 || !got.UploadTime.Equal(yesterday) || got.FileContent != nil {
		t.Fatalf("report round trip: %+v %v", got, err)
	}
	// Tomorrow, today's uploads are no longer "today".
	fc.Set(fc.Now().Add(24 * time.Hour))
	if total, today := counts(t, s, a.ID); total != 2 || today != 0 {
		t.Fatalf("next day counts = %d/%d, want 2/0", total, today)
	}
	fc.Set(fc.Now().Add(-24 * time.Hour))
	if _, err := s.DeleteReport(ctx, r3.ID); err != nil {
		t.Fatal(err)
	}
	if total, today := counts(t, s, a.ID); total != 1 || today != 0 {
		t.Fatalf("after delete counts = %d/%d, want 1/0", total, today)
	}
}

func deleteCascade(t *testing.T, s report.MetaStore, c report.Clock) {
	a := mustProject(t, s, c, "a")
	b := mustProject(t, s, c, "b")
	for i := 0; i < 5; i++ {
		mustReport(t, s, c, a.ID, c.NowLocal())
	}
	kept := mustReport(t, s, c, b.ID, c.NowLocal())
	p, removed, err := s.DeleteProject(ctx, a.ID)
	if err != nil || p.ID != a.ID || len(removed) != 5 {
		t.Fatalf("delete: %+v removed=%d err=%v", p, len(removed), err)
	}
	if _, err := s.Project(ctx, a.ID); !report.IsKind(err, report.NotFound) {
		t.Fatalf("deleted project still there: %v", err)
	}
	all, _ := s.Reports(ctx, nil)
	if len(all) != 1 || all[0].ID != kept.ID {
		t.Fatalf("reports after cascade: %+v", all)
	}
	if rs, _ := s.Reports(ctx, &a.ID); len(rs) != 0 {
		t.Fatalf("index of deleted project still lists %d", len(rs))
	}
	// A report for a deleted project is refused, not orphaned.
	id, _ := s.NextReportID(ctx)
	if _, err := s.CreateReport(ctx, record(id, a.ID, c.NowLocal())); !report.IsKind(err, report.NotFound) {
		t.Fatalf("report into deleted project: %v", err)
	}
}

func updateReport(t *testing.T, s report.MetaStore, c report.Clock) {
	a := mustProject(t, s, c, "a")
	r := mustReport(t, s, c, a.ID, c.NowLocal())
	ht := report.HTML
	got, err := s.UpdateReport(ctx, r.ID, report.ReportChange{FileName: ptr("x.html"), FileType: &ht, FilePath: ptr("/uploads/reports/1.html")})
	if err != nil || got.FileName != "x.html" || got.FileType != report.HTML || got.FilePath != "/uploads/reports/1.html" || got.ProjectID != a.ID {
		t.Fatalf("update: %+v %v", got, err)
	}
	again, _ := s.Report(ctx, r.ID)
	if again.FileName != "x.html" || !again.UploadTime.Equal(r.UploadTime.Time) {
		t.Fatalf("update not stored: %+v", again)
	}
	if total, today := counts(t, s, a.ID); total != 1 || today != 1 {
		t.Fatalf("update changed counters: %d/%d", total, today)
	}
}

func notFound(t *testing.T, s report.MetaStore) {
	checks := map[string]error{}
	_, checks["Project"] = s.Project(ctx, 42)
	_, _, checks["UpdateProject"] = s.UpdateProject(ctx, 42, report.ProjectChange{Name: ptr("x")})
	_, _, checks["DeleteProject"] = s.DeleteProject(ctx, 42)
	_, checks["Report"] = s.Report(ctx, 42)
	_, checks["UpdateReport"] = s.UpdateReport(ctx, 42, report.ReportChange{})
	_, checks["DeleteReport"] = s.DeleteReport(ctx, 42)
	for name, err := range checks {
		if !report.IsKind(err, report.NotFound) {
			t.Errorf("%s of a missing id: %v, want NotFoundError", name, err)
		}
	}
}

func concurrent(t *testing.T, s report.MetaStore, c report.Clock) {
	a := mustProject(t, s, c, "a")
	const writers, each = 16, 25
	var wg sync.WaitGroup
	ids := make(chan int64, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id, err := s.NextReportID(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := s.CreateReport(ctx, record(id, a.ID, c.NowLocal())); err != nil {
					t.Error(err)
					return
				}
				ids <- id
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	var list []int64
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %d issued twice", id)
		}
		seen[id] = true
		list = append(list, id)
	}
	// Delete a third of them concurrently.
	for i, id := range list {
		if i%3 != 0 {
			continue
		}
		wg.Add(1)
		go func(id int64) {
			defer wg.Done()
			if _, err := s.DeleteReport(ctx, id); err != nil {
				t.Error(err)
			}
		}(id)
	}
	wg.Wait()
	want := int64(len(list) - (len(list)+2)/3)
	rs, _ := s.Reports(ctx, &a.ID)
	if total, today := counts(t, s, a.ID); total != want || today != want || int64(len(rs)) != want {
		t.Fatalf("counters %d/%d, listed %d, want %d", total, today, len(rs), want)
	}
}

func reopenIntact(t *testing.T, s report.MetaStore, reopen func() report.MetaStore, c report.Clock) {
	a := mustProject(t, s, c, "a")
	r := mustReport(t, s, c, a.ID, c.NowLocal())
	s = reopen()
	p, err := s.Project(ctx, a.ID)
	if err != nil || p.Name != "a" || p.ReportCount != 1 || p.TodayNewReports != 1 {
		t.Fatalf("after reopen: %+v %v", p, err)
	}
	got, err := s.Report(ctx, r.ID)
	if err != nil || got.FilePath != r.FilePath {
		t.Fatalf("report after reopen: %+v %v", got, err)
	}
	// Ids keep increasing across a reopen.
	next, _ := s.NextReportID(ctx)
	if next <= r.ID {
		t.Fatalf("id %d reused after reopen (last %d)", next, r.ID)
	}
}
