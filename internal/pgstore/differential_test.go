package pgstore_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testserver"
)

type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestSameAsBolt runs one random sequence of operations on the bbolt store
// and on this one and wants the same answer from both at every step: the
// results (as the API would encode them, with size and digest) or the
// error kinds. It covers what the conformance suite spells out and the
// corners it does not (empty strings, derived names, clearing, days,
// every form of LatestQuery, summaries that round, retention policies set,
// kept and cleared).
func TestSameAsBolt(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { sameAsBolt(t, seed, 400) })
	}
}

func sameAsBolt(t *testing.T, seed uint64, steps int) {
	loc := time.FixedZone("UTC-5", -5*3600)
	sc := &stepClock{now: time.Date(2026, 3, 10, 22, 30, 0, 0, loc)}
	clock := report.Clock{Location: loc, Now: sc.Now}
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "r.db"), clock)
	if err != nil {
		t.Fatal(err)
	}
	defer bolt.Close()
	// Durability is not under test here: spare the disk and the batch delay.
	bolt.DB().NoSync, bolt.DB().MaxBatchDelay = true, time.Microsecond
	pg := open(t, testserver.DSN(t), clock)
	defer pg.Close()

	rng := rand.New(rand.NewPCG(seed, 7))
	pick := func(opts ...string) string { return opts[rng.IntN(len(opts))] }
	maybe := func(opts ...string) *string {
		if rng.IntN(3) == 0 {
			return nil
		}
		v := pick(opts...)
		return &v
	}
	var projects, reports []int64 // every id issued, deleted ones too
	anyOf := func(ids []int64) int64 {
		if len(ids) == 0 || rng.IntN(10) == 0 {
			return 424242
		}
		return ids[rng.IntN(len(ids))]
	}
	// retention is a random policy: nil (none given), zero (none, or clear
	// it), or some fields set, 0 and false among the values.
	retention := func() *report.Retention {
		switch rng.IntN(4) {
		case 0, 1:
			return nil
		case 2:
			return &report.Retention{}
		}
		var r report.Retention
		if rng.IntN(2) == 0 {
			r.KeepLast = ptrTo([]int{0, 1, 5, report.MaxKeepLast}[rng.IntN(4)])
		}
		if rng.IntN(2) == 0 {
			r.MaxAgeDays = ptrTo([]int{0, 30, report.MaxMaxAgeDays}[rng.IntN(3)])
		}
		if rng.IntN(2) == 0 {
			r.KeepNewestPerBranch = ptrTo(rng.IntN(2) == 0)
		}
		return &r
	}
	// summary is a random generator and summary: none, or some figures
	// (coverage that rounds to hundredths, zero counts), or an empty one.
	summary := func() (string, *report.Summary) {
		gen := pick("", "", "coverage.py", "jacoco", "mochawesome")
		switch rng.IntN(4) {
		case 0:
			return gen, nil
		case 1:
			return gen, &report.Summary{}
		}
		var s report.Summary
		if rng.IntN(3) != 0 {
			s.Lines = ptrTo([]float64{0, 100, 87.25, 33.33333, 66.665, 99.999}[rng.IntN(6)])
		}
		for _, f := range []**int64{&s.Passed, &s.Failed, &s.Skipped, &s.Flaky} {
			if rng.IntN(2) == 0 {
				*f = ptrTo(int64(rng.IntN(3) * rng.IntN(500)))
			}
		}
		return gen, &s
	}
	// same compares what the two stores answered.
	same := func(step int, op string, b, p any, berr, perr error) {
		t.Helper()
		if report.KindOf(berr) != report.KindOf(perr) || (berr == nil) != (perr == nil) {
			t.Fatalf("step %d %s: bolt error %v, postgres error %v", step, op, berr, perr)
		}
		if berr != nil {
			return
		}
		bj, _ := json.Marshal(b)
		pj, _ := json.Marshal(p)
		if string(bj) != string(pj) {
			t.Fatalf("step %d %s:\nbolt     %s\npostgres %s", step, op, bj, pj)
		}
	}
	for i := 0; i < steps; i++ {
		switch op := rng.IntN(14); op {
		case 0: // create a project
			bid, err1 := bolt.NextProjectID(ctx)
			pid, err2 := pg.NextProjectID(ctx)
			if err1 != nil || err2 != nil || bid != pid {
				t.Fatalf("step %d: project ids %d %v / %d %v", i, bid, err1, pid, err2)
			}
			in := report.Project{ID: pid, Name: pick("a", "b", "ünï"), Description: maybe("", "d"),
				CoverImage: maybe("/uploads/covers/x.png"), CreatedAt: report.LocalTime{Time: clock.NowLocal()},
				Retention: retention()}
			b, berr := bolt.CreateProject(ctx, in)
			p, perr := pg.CreateProject(ctx, in)
			same(i, "CreateProject", b, p, berr, perr)
			projects = append(projects, pid)
		case 1, 2, 3, 4: // create a report, maybe into a deleted or unknown project
			bid, err1 := bolt.NextReportID(ctx)
			pid, err2 := pg.NextReportID(ctx)
			if err1 != nil || err2 != nil || bid != pid {
				t.Fatalf("step %d: report ids %d %v / %d %v", i, bid, err1, pid, err2)
			}
			at := clock.NowLocal().Add(-time.Duration(rng.IntN(72)) * time.Hour)
			in := report.ReportRecord{
				Report: report.Report{ID: pid, ProjectID: anyOf(projects), FileName: pick("coverage.html", "e2e.md", "r.pdf"),
					FileType: report.MD, FilePath: fmt.Sprintf("/uploads/reports/%d.md", pid), UploadTime: report.LocalTime{Time: at},
					Name: pick("", "", "coverage", "e2e"), Branch: maybe("", "main", "dev"), Commit: maybe("", "3f2c"),
					BuildURL: maybe("https://ci/b/1"), BuildID: maybe("", "1")},
				Size: int64(rng.IntN(1000)), SHA256: "ab",
			}
			in.Generator, in.Summary = summary()
			b, berr := bolt.CreateReport(ctx, in)
			p, perr := pg.CreateReport(ctx, in)
			same(i, "CreateReport", b, p, berr, perr)
			reports = append(reports, pid)
		case 5: // update a project
			c := report.ProjectChange{Name: maybe("n", "m"), Description: maybe("", "e"), CoverImage: maybe("/uploads/covers/y.png", ""),
				Retention: retention()}
			id := anyOf(projects)
			b, bold, berr := bolt.UpdateProject(ctx, id, c)
			p, pold, perr := pg.UpdateProject(ctx, id, c)
			same(i, "UpdateProject", []any{b, bold}, []any{p, pold}, berr, perr)
		case 6: // update a report
			ht := report.HTML
			c := report.ReportChange{FileName: maybe("renamed.html", "e2e.md"), FilePath: maybe("/uploads/reports/z.html"),
				Meta: report.BuildMeta{Name: maybe("", "coverage", "other"), Branch: maybe("", "main", "release"),
					Commit: maybe("", "9a"), BuildURL: maybe("", "https://ci/b/2"), BuildID: maybe("", "2")}}
			if rng.IntN(2) == 0 {
				c.FileType = &ht
			}
			id := anyOf(reports)
			b, berr := bolt.UpdateReport(ctx, id, c)
			p, perr := pg.UpdateReport(ctx, id, c)
			same(i, "UpdateReport", b, p, berr, perr)
		case 7: // delete a report
			id := anyOf(reports)
			b, berr := bolt.DeleteReport(ctx, id)
			p, perr := pg.DeleteReport(ctx, id)
			same(i, "DeleteReport", b, p, berr, perr)
		case 8: // delete a project (rarely: it takes its reports along)
			if rng.IntN(3) != 0 {
				continue
			}
			id := anyOf(projects)
			b, brm, berr := bolt.DeleteProject(ctx, id)
			p, prm, perr := pg.DeleteProject(ctx, id)
			same(i, "DeleteProject", []any{b, brm}, []any{p, prm}, berr, perr)
		case 9: // latest, in every form of query
			q := report.LatestQuery{Project: anyOf(projects)}
			name, branch := pick("coverage", "e2e", "r", "other", "renamed"), pick("", "main", "dev", "release")
			if r, err := bolt.Report(ctx, anyOf(reports)); err == nil && rng.IntN(4) != 0 {
				q.Project, name = r.ProjectID, r.Name // one that exists, mostly
				if r.Branch != nil {
					branch = *r.Branch
				}
			}
			if rng.IntN(3) != 0 {
				q.Name = &name
			}
			if rng.IntN(3) != 0 {
				q.Branch = &branch
			}
			b, berr := bolt.Latest(ctx, q)
			p, perr := pg.Latest(ctx, q)
			same(i, "Latest", b, p, berr, perr)
		case 10: // the clock moves on, possibly past midnight
			sc.add(time.Duration(rng.IntN(300)) * time.Minute)
		case 11: // read one of each
			id := anyOf(projects)
			b, berr := bolt.Project(ctx, id)
			p, perr := pg.Project(ctx, id)
			same(i, "Project", b, p, berr, perr)
			rid := anyOf(reports)
			br, berr := bolt.Report(ctx, rid)
			pr, perr := pg.Report(ctx, rid)
			same(i, "Report", br, pr, berr, perr)
		case 12, 13: // lists
			b, berr := bolt.Projects(ctx)
			p, perr := pg.Projects(ctx)
			same(i, "Projects", b, p, berr, perr)
			var filter *int64
			if rng.IntN(2) == 0 {
				id := anyOf(projects)
				filter = &id
			}
			bl, berr := bolt.Reports(ctx, filter)
			pl, perr := pg.Reports(ctx, filter)
			same(i, "Reports", bl, pl, berr, perr)
			var bp, pp []string
			berr = bolt.FilePaths(ctx, func(s string) error { bp = append(bp, s); return nil })
			perr = pg.FilePaths(ctx, func(s string) error { pp = append(pp, s); return nil })
			same(i, "FilePaths", bp, pp, berr, perr)
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
