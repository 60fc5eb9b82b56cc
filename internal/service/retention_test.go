package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/apitest"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/service"
)

// clockEnv starts the stack with a service clock the test moves: uploads
// get its time, so reports can be made old.
func clockEnv(t *testing.T) (*apitest.Env, *atomic.Int64) {
	var now atomic.Int64
	now.Store(time.Now().Unix())
	e := apitest.Start(t, apitest.Options{Service: func(sc *service.Config) {
		sc.Clock.Now = func() time.Time { return time.Unix(now.Load(), 0) }
	}})
	return e, &now
}

func upload(t *testing.T, svc *service.Service, project int64, file, branch string) report.Report {
	t.Helper()
	meta := report.BuildMeta{}
	if branch != "" {
		meta.Branch = &branch
	}
	r, err := svc.UploadReport(context.Background(), report.ReportUpload{ProjectID: project, FileType: report.FileType(strings.TrimPrefix(filepath.Ext(file), ".")),
		File: report.Upload{FileName: file, Body: strings.NewReader("# " + file + "\n")}, Meta: meta})
	if err != nil {
		t.Error(err) // Error, not Fatal: writers call it on their own goroutines
	}
	return r
}

// checkClean fails the test if reportd check finds orphans, missing
// files or drifting counters and index entries.
func checkClean(t *testing.T, e *apitest.Env) {
	t.Helper()
	rep, err := e.Server.CheckIdle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clean(false) {
		t.Fatalf("check: missing %v, orphans %v, drift %v", rep.MissingFiles, rep.Orphans, rep.Drift)
	}
}

func TestRetentionDryRunThenApply(t *testing.T) {
	e, now := clockEnv(t)
	ctx := context.Background()
	p := e.CreateProject("ret")
	start := time.Now()
	now.Store(start.AddDate(0, 0, -60).Unix())
	var all []report.Report
	for range 4 {
		all = append(all, upload(t, e.Svc, p.ID, "cov.html", "main")) // 1-4: 60 days old
		now.Add(int64(24 * time.Hour / time.Second))
	}
	now.Store(start.Unix())
	all = append(all, upload(t, e.Svc, p.ID, "cov.html", "main"), // 5: today
		upload(t, e.Svc, p.ID, "cov.html", "dev"), // 6
		upload(t, e.Svc, p.ID, "lint.md", "main"), // 7
		upload(t, e.Svc, p.ID, "lint.md", "main"), // 8
		upload(t, e.Svc, p.ID, "x.md", ""))        // 9
	keep := 2
	if _, err := e.Svc.SetRetention(ctx, p.ID, report.Retention{KeepLast: &keep}); err != nil {
		t.Fatal(err)
	}

	dry, err := e.Svc.Prune(ctx, service.PruneRequest{ProjectID: &p.ID, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []int64{all[0].ID, all[1].ID, all[2].ID}
	if !dry.DryRun || fmt.Sprint(ids(dry.Reports)) != fmt.Sprint(want) || dry.Bytes != 3*int64(len("# cov.html\n")) {
		t.Fatalf("dry run: %+v, want ids %v", dry, want)
	}
	if got, _ := e.Svc.GetProject(ctx, p.ID); got.ReportCount != 9 || got.TodayNewReports != 5 {
		t.Fatalf("a dry run deleted something: %+v", got)
	}
	for _, r := range all {
		if _, err := os.Stat(filepath.Join(e.DataDir, r.FilePath)); err != nil {
			t.Fatalf("a dry run removed a file: %v", err)
		}
	}

	// The age rule on top, from the request: the 60-day-old report 4 goes too.
	age := 30
	res, err := e.Svc.Prune(ctx, service.PruneRequest{ProjectID: &p.ID, Override: report.Retention{MaxAgeDays: &age}})
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, all[3].ID)
	if res.DryRun || fmt.Sprint(ids(res.Reports)) != fmt.Sprint(want) {
		t.Fatalf("apply: %v, want %v", ids(res.Reports), want)
	}
	for i, r := range all {
		_, err := os.Stat(filepath.Join(e.DataDir, r.FilePath))
		if gone := i < 4; gone != os.IsNotExist(err) {
			t.Errorf("report %d: file gone %v, want %v (%v)", r.ID, !gone, gone, err)
		}
	}
	got, _ := e.Svc.GetProject(ctx, p.ID)
	if got.ReportCount != 5 || got.TodayNewReports != 5 {
		t.Fatalf("counters after prune: %+v", got)
	}
	for _, g := range []struct{ name, branch string }{{"cov", "main"}, {"cov", "dev"}, {"lint", "main"}, {"x", ""}} {
		if _, err := e.Store.Latest(ctx, report.LatestQuery{Project: p.ID, Name: &g.name, Branch: &g.branch}); err != nil {
			t.Errorf("latest %s@%s: %v", g.name, g.branch, err)
		}
	}
	if l, _ := e.Store.Latest(ctx, exactLatest(p.ID, "cov", "main")); l.ID != all[4].ID {
		t.Errorf("latest cov@main is %d, want %d", l.ID, all[4].ID)
	}
	checkClean(t, e)
	if again, err := e.Svc.Prune(ctx, service.PruneRequest{ProjectID: &p.ID}); err != nil || len(again.Reports) != 0 {
		t.Fatalf("a second prune: %+v %v", again, err)
	}
}

// Retention while 12 clients upload into the same project: whatever
// interleaving, the counters equal a recount, no file is orphaned or
// missing, and the newest report of every name and branch survives.
func TestRetentionUnderConcurrentUploads(t *testing.T) {
	e := apitest.Start(t, apitest.Options{})
	ctx := context.Background()
	p := e.CreateProject("busy")
	keep := 3
	if _, err := e.Svc.SetRetention(ctx, p.ID, report.Retention{KeepLast: &keep}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 12, 15
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		newest = map[string]int64{}
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				name, branch := []string{"cov.html", "lint.md"}[(w+i)%2], []string{"main", "dev"}[w%2]
				r := upload(t, e.Svc, p.ID, name, branch)
				mu.Lock()
				k := r.Name + "@" + branch
				newest[k] = max(newest[k], r.ID)
				mu.Unlock()
			}
		}()
	}
	stop := make(chan struct{})
	var (
		pruned  atomic.Int64
		pruners sync.WaitGroup
	)
	for range 2 { // two at once: one of each pair may find the other running
		pruners.Add(1)
		go func() {
			defer pruners.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := e.Svc.Prune(ctx, service.PruneRequest{ProjectID: &p.ID})
				switch {
				case report.IsKind(err, report.Unavailable):
					time.Sleep(time.Millisecond)
				case err != nil:
					t.Error(err)
					return
				}
				pruned.Add(int64(len(res.Reports)))
			}
		}()
	}
	wg.Wait()
	close(stop)
	pruners.Wait()
	res, err := e.Svc.Prune(ctx, service.PruneRequest{ProjectID: &p.ID})
	if err != nil {
		t.Fatal(err)
	}
	pruned.Add(int64(len(res.Reports)))

	reps, err := e.Svc.ListReports(ctx, &p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 4*keep {
		t.Errorf("%d reports left, want %d (3 of each of 4 groups)", len(reps), 4*keep)
	}
	if int(pruned.Load())+len(reps) != writers*each {
		t.Errorf("removed %d + left %d != uploaded %d", pruned.Load(), len(reps), writers*each)
	}
	got, _ := e.Svc.GetProject(ctx, p.ID)
	if got.ReportCount != int64(len(reps)) || got.TodayNewReports != int64(len(reps)) {
		t.Errorf("counters %d/%d, recount %d", got.ReportCount, got.TodayNewReports, len(reps))
	}
	left := map[int64]bool{}
	for _, r := range reps {
		left[r.ID] = true
	}
	for k, id := range newest {
		name, branch, _ := strings.Cut(k, "@")
		if !left[id] {
			t.Errorf("the newest %s (%d) was removed", k, id)
		}
		if l, err := e.Store.Latest(ctx, report.LatestQuery{Project: p.ID, Name: &name, Branch: &branch}); err != nil || l.ID != id {
			t.Errorf("latest %s: %d %v, want %d", k, l.ID, err, id)
		}
	}
	checkClean(t, e)
}

func TestRetentionPolicyInheritance(t *testing.T) {
	e := apitest.Start(t, apitest.Options{Service: func(sc *service.Config) {
		sc.Retention = report.Policy{KeepLast: 10, MaxAgeDays: 90, KeepNewestPerBranch: true}
	}})
	ctx := context.Background()
	p := e.CreateProject("inherit")
	v, err := e.Svc.GetRetention(ctx, p.ID)
	if err != nil || !v.Retention.IsZero() || v.Effective != e.Svc.RetentionDefault() {
		t.Fatalf("no policy: %+v %v", v, err)
	}
	zero, no := 0, false
	v, err = e.Svc.SetRetention(ctx, p.ID, report.Retention{KeepLast: &zero, KeepNewestPerBranch: &no})
	if err != nil || v.Effective != (report.Policy{MaxAgeDays: 90}) || *v.KeepLast != 0 || v.MaxAgeDays != nil {
		t.Fatalf("set: %+v %v", v, err)
	}
	if got, _ := e.Svc.GetProject(ctx, p.ID); got.Retention == nil || *got.Retention.KeepLast != 0 {
		t.Fatalf("project JSON retention: %+v", got.Retention)
	}
	bad := -1
	if _, err := e.Svc.SetRetention(ctx, p.ID, report.Retention{KeepLast: &bad}); !report.IsKind(err, report.Validation) {
		t.Fatalf("negative keepLast: %v", err)
	}
	if _, err := e.Svc.Prune(ctx, service.PruneRequest{ProjectID: &p.ID, Override: report.Retention{MaxAgeDays: &bad}}); !report.IsKind(err, report.Validation) {
		t.Fatalf("negative override: %v", err)
	}
	if v, err = e.Svc.SetRetention(ctx, p.ID, report.Retention{}); err != nil || !v.Retention.IsZero() {
		t.Fatalf("clear: %+v %v", v, err)
	}
	if got, _ := e.Svc.GetProject(ctx, p.ID); got.Retention != nil {
		t.Fatalf("cleared policy still on the project: %+v", got.Retention)
	}
	missing := int64(999)
	if _, err := e.Svc.Prune(ctx, service.PruneRequest{ProjectID: &missing}); !report.IsKind(err, report.NotFound) {
		t.Fatalf("prune of a missing project: %v", err)
	}
}

func ids(items []report.PruneItem) []int64 {
	out := []int64{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// exactLatest asks for the newest report of one name on one branch.
func exactLatest(project int64, name, branch string) report.LatestQuery {
	return report.LatestQuery{Project: project, Name: &name, Branch: &branch}
}
