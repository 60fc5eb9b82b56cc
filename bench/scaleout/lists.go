package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
	"github.com/reportd/reportd/internal/boltstore"
	"github.com/reportd/reportd/internal/pgstore"
	"github.com/reportd/reportd/internal/report"
)

// listResult is one endpoint on one backend at one size.
type listResult struct {
	Backend  string
	Endpoint string
	Reports  int
	N        int
	P50, P95 time.Duration
	Bytes    int
	Seed     time.Duration // seeding this step took
}

// lists measures GET /api/projects and GET /api/reports?projectId=1 on
// bbolt and on PostgreSQL, growing each store step by step.
func (b *bench) lists(ctx context.Context) error {
	dsn, err := b.pg.CreateDatabase(ctx)
	if err != nil {
		return err
	}
	for _, backend := range []string{"bolt", "postgres"} {
		dataDir := filepath.Join(b.work, "lists-"+backend)
		var env []string
		if backend == "postgres" {
			env = pgEnv(dsn)
		}
		have := 0
		for _, n := range b.sz.Steps {
			t0 := time.Now()
			if err := b.seed(ctx, backend, dataDir, dsn, have, n); err != nil {
				return err
			}
			seed := time.Since(t0)
			logf("%s: seeded to %d reports in %v", backend, n, seed.Round(time.Millisecond))
			have = n
			d, err := b.start(dataDir, env...)
			if err != nil {
				return err
			}
			for _, ep := range []struct{ name, path string }{
				{"GET /api/projects", "/api/projects"},
				{fmt.Sprintf("GET /api/reports?projectId= (%d reports)", b.sz.Target), "/api/reports?projectId=1"},
			} {
				r, err := b.measure(ctx, d.URL()+ep.path)
				if err != nil {
					return fmt.Errorf("%s %s: %w", backend, ep.name, err)
				}
				r.Backend, r.Endpoint, r.Reports, r.Seed = backend, ep.name, n, seed
				b.res.Lists = append(b.res.Lists, r)
				logf("%-8s %-44s %7d reports  n=%3d  p50 %9v  p95 %9v  (%d B)", backend, ep.name, n, r.N, r.P50, r.P95, r.Bytes)
			}
			b.stopAll()
		}
	}
	return nil
}

// seed grows a store from have to n reports, straight through the store
// (no daemon running). Project 1 holds the first Target reports and no
// more; the rest go round-robin over the other projects.
func (b *bench) seed(ctx context.Context, backend, dataDir, dsn string, have, n int) error {
	now := time.Now().Truncate(time.Second)
	var projects []report.Project
	if have == 0 {
		projects = benchkit.Projects(b.sz.Projects, now)
	}
	recs := make([]report.ReportRecord, 0, n-have)
	for i := have + 1; i <= n; i++ {
		t := []report.FileType{report.HTML, report.MD, report.PDF}[i%3]
		p := benchkit.ProjectOf(i, b.sz.Target, b.sz.Projects)
		recs = append(recs, report.ReportRecord{
			Report: report.Report{ID: int64(i), ProjectID: p, FileName: "report-" + strconv.Itoa(i) + t.Ext(), FileType: t,
				FilePath: "/uploads/reports/" + strconv.Itoa(i) + t.Ext(), UploadTime: report.LocalTime{Time: now.AddDate(0, 0, -(i % 30))}},
			Size: 100, SHA256: "0000000000000000000000000000000000000000000000000000000000000000",
		})
	}
	clock := report.Clock{Location: time.Local}
	if backend == "bolt" {
		if err := os.MkdirAll(dataDir, 0o750); err != nil {
			return err
		}
		s, err := boltstore.Open(filepath.Join(dataDir, "reportd.db"), clock)
		if err != nil {
			return err
		}
		defer s.Close()
		return s.BulkLoad(ctx, projects, recs)
	}
	s, err := pgstore.Open(ctx, dsn, clock)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.BulkLoad(ctx, projects, recs)
}

// measure GETs url one request at a time over a kept-alive connection,
// after a warm-up, until Requests or the time budget.
func (b *bench) measure(ctx context.Context, url string) (listResult, error) {
	var ds []time.Duration
	size := 0
	deadline := time.Now().Add(b.sz.Budget)
	for i := -5; i < b.sz.Requests; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		t0 := time.Now()
		resp, err := b.client.Do(req)
		if err != nil {
			return listResult{}, err
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return listResult{}, err
		}
		if resp.StatusCode != http.StatusOK {
			return listResult{}, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		if i >= 0 {
			ds = append(ds, time.Since(t0))
			size = int(n)
			if time.Now().After(deadline) && len(ds) >= 10 {
				break
			}
		}
	}
	slices.Sort(ds)
	return listResult{N: len(ds), P50: benchkit.Pct(ds, 50), P95: benchkit.Pct(ds, 95), Bytes: size}, nil
}
