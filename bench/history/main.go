// Command history measures GET /api/projects/{id}/history's store query,
// MetaStore.History, on both stores: 100,000 reports (bulk-loaded) over
// 1,000 projects, of which project 1 holds 2,000 builds of one report name
// (half on main), and prints the p50/p95/p99 of reading the newest 1,000
// points of that name (any branch, and main only) and, for comparison, the
// newest 100.
//
//	go run ./bench/history                 # both stores (PostgreSQL via internal/testserver)
//	go run ./bench/history -stores bolt    # bbolt only
//	go run ./bench/history -reports 20000  # a smaller table
//
// The target is p50 ≤ 5 ms for 1,000 points at 100,000 reports. The last
// column is the CPU time this process spent per query (see cpuTime).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/testserver"
)

const (
	projects = 1000
	builds   = 2000 // of project 1's "coverage"
)

type loader interface {
	report.MetaStore
	BulkLoad(ctx context.Context, ps []report.Project, rs []report.ReportRecord) error
}

func main() {
	n := flag.Int("reports", 100_000, "reports in the store")
	runs := flag.Int("runs", 200, "queries measured per case")
	stores := flag.String("stores", "bolt,postgres", "stores to measure")
	flag.Parse()
	if err := run(*n, *runs, strings.Split(*stores, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "bench/history:", err)
		os.Exit(1)
	}
}

func run(n, runs int, stores []string) error {
	ctx := context.Background()
	clock := report.Clock{Location: time.UTC}
	ps, rs := data(n)
	fmt.Printf("| store | reports | query | points | p50 | p95 | p99 | CPU of this process per query |\n|---|---|---|---|---|---|---|---|\n")
	for _, name := range stores {
		var s loader
		switch name {
		case "bolt":
			dir, err := os.MkdirTemp("", "bench-history-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			b, err := boltstore.Open(filepath.Join(dir, "reportd.db"), clock)
			if err != nil {
				return err
			}
			defer b.Close()
			s = b
		case "postgres":
			srv, err := testserver.StartPG()
			if err != nil {
				return err
			}
			defer srv.Stop()
			dsn, err := srv.CreateDatabase(ctx)
			if err != nil {
				return err
			}
			p, err := pgstore.Open(ctx, dsn, clock)
			if err != nil {
				return err
			}
			defer p.Close()
			s = p
		default:
			return fmt.Errorf("unknown store %q", name)
		}
		if err := s.BulkLoad(ctx, ps, rs); err != nil {
			return err
		}
		main := "main"
		for _, c := range []struct {
			what   string
			branch *string
			limit  int
		}{{"name", nil, 1000}, {"name+branch", &main, 1000}, {"name", nil, 100}} {
			want := c.limit
			if c.branch != nil {
				want = min(c.limit, builds/2)
			}
			q := report.HistoryQuery{Project: 1, Name: "coverage", Branch: c.branch, Limit: c.limit}
			var took []time.Duration
			var cpu0 time.Duration
			for i := 0; i < runs+10; i++ {
				if i == 10 {
					cpu0 = cpuTime()
				}
				t0 := time.Now()
				got, err := s.History(ctx, q)
				d := time.Since(t0)
				if err != nil || len(got) != want {
					return fmt.Errorf("%s %s: %d points, %v", name, c.what, len(got), err)
				}
				if i >= 10 { // warm-up
					took = append(took, d)
				}
			}
			cpu := (cpuTime() - cpu0) / time.Duration(runs)
			slices.Sort(took)
			pct := func(p float64) string { return ms(took[int(float64(len(took)-1)*p)]) }
			fmt.Printf("| %s | %d | %s | %d | %s | %s | %s | %s |\n", name, n, c.what, want, pct(0.50), pct(0.95), pct(0.99), ms(cpu))
		}
	}
	return nil
}

// cpuTime is the user + system CPU time of this process: on a busy
// machine a better measure of a query's own cost than the wall clock
// (for bolt all of it; for postgres the client's share: the server's
// runs in its own processes).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

// data is projects projects and n reports: project 1's first builds
// reports are its "coverage" builds (even ones on main, odd on a
// feature branch, with summaries), the rest spread over the other
// projects under a few names.
func data(n int) ([]report.Project, []report.ReportRecord) {
	now := time.Now().UTC().Truncate(time.Second)
	ps := make([]report.Project, projects)
	for i := range ps {
		ps[i] = report.Project{ID: int64(i + 1), Name: fmt.Sprintf("project-%d", i+1), CreatedAt: report.LocalTime{Time: now}}
	}
	rs := make([]report.ReportRecord, n)
	names := []string{"coverage", "e2e", "unit", "lint"}
	for i := range rs {
		id := int64(i + 1)
		r := report.ReportRecord{Report: report.Report{ID: id, FileName: fmt.Sprintf("r-%d.html", id), FileType: report.HTML,
			FilePath: fmt.Sprintf("/uploads/reports/%d.html", id), UploadTime: report.LocalTime{Time: now.Add(time.Duration(i-n) * time.Minute)}},
			Size: 1234, SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
		branch := "main"
		if i%2 == 1 {
			branch = "feature"
		}
		r.Branch = &branch
		commit := fmt.Sprintf("%040x", i)
		r.Commit = &commit
		lines, passed, failed := 50+float64(i%50), int64(100+i%7), int64(i%3)
		r.Summary = &report.Summary{Lines: &lines, Passed: &passed, Failed: &failed}
		if i < builds {
			r.ProjectID, r.Name = 1, "coverage"
		} else {
			r.ProjectID, r.Name = 2+int64(i)%(projects-1), names[i%len(names)]
		}
		rs[i] = r
	}
	return ps, rs
}
