package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
)

// latency is one endpoint's figures at one store size.
type latency struct {
	Endpoint string
	Reports  int
	N        int
	P50, P99 time.Duration
	Bytes    int // body size of the last answer
}

// endpoint is a GET whose URL may vary per request (random report ids).
type endpoint struct {
	name string
	max  int
	url  func(i int) string
}

// scale seeds the store step by step and measures the read endpoints and
// the start-up time at each size. It leaves the daemon running on the
// largest store for the phases that follow.
func (b *bench) scale(ctx context.Context, skip map[string]bool) error {
	have := 0
	for si, n := range b.sz.Steps {
		logf("seeding to %d projects, %d reports", b.sz.Projects, n)
		t0 := time.Now()
		if err := b.seedTo(ctx, have, n); err != nil {
			return err
		}
		b.res.Seed = append(b.res.Seed, seedTime{Reports: n, Took: time.Since(t0)})
		have = n
		last := si == len(b.sz.Steps)-1
		if last && !skip["startup"] {
			if err := b.startup(ctx, n); err != nil {
				return err
			}
		}
		d, err := b.startDaemon(ctx)
		if err != nil {
			return err
		}
		logf("reportd answered ping %v after exec (%d reports)", d.Round(time.Millisecond), n)
		if !skip["scale"] {
			if err := b.measureReads(ctx, n); err != nil {
				return err
			}
		}
		if !last {
			b.stopDaemon()
		}
	}
	return nil
}

// startup restarts the daemon StartupRuns times on the full store and keeps
// every exec-to-ping time.
func (b *bench) startup(ctx context.Context, n int) error {
	var ds []time.Duration
	for range b.sz.StartupRuns {
		d, err := b.startDaemon(ctx)
		if err != nil {
			return err
		}
		b.stopDaemon()
		ds = append(ds, d)
	}
	slices.Sort(ds)
	b.res.Startup = startupTime{Reports: n, Runs: ds}
	logf("start-up with %d reports: %v", n, ds)
	return nil
}

func (b *bench) measureReads(ctx context.Context, n int) error {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	eps := []endpoint{
		{name: "GET /api/projects", max: 400, url: func(int) string { return "/api/projects" }},
		{name: fmt.Sprintf("GET /api/reports?projectId= (%d reports)", b.sz.TargetReports), max: 400,
			url: func(int) string { return "/api/reports?projectId=1" }},
		{name: "GET /api/reports/{id}", max: 1000,
			url: func(int) string { return "/api/reports/" + strconv.Itoa(1+rng.IntN(n)) }},
		{name: "GET /api/reports (all)", max: 60, url: func(int) string { return "/api/reports" }},
	}
	for _, ep := range eps {
		l, err := b.measure(ctx, ep)
		if err != nil {
			return err
		}
		l.Reports = n
		b.res.Latency = append(b.res.Latency, l)
		logf("%-48s %7d reports  n=%4d  p50 %9v  p99 %9v  (%d B)", l.Endpoint, n, l.N, l.P50, l.P99, l.Bytes)
	}
	return nil
}

// measure sends the endpoint's requests one at a time over a kept-alive
// connection, after a short warm-up, until max requests or the budget.
func (b *bench) measure(ctx context.Context, ep endpoint) (latency, error) {
	var ds []time.Duration
	size := 0
	deadline := time.Now().Add(b.sz.LatencyBudget)
	for i := -3; i < ep.max; i++ {
		if err := ctx.Err(); err != nil {
			return latency{}, err
		}
		t0 := time.Now()
		n, err := b.get(ctx, ep.url(i))
		if err != nil {
			return latency{}, fmt.Errorf("%s: %w", ep.name, err)
		}
		d := time.Since(t0)
		if i >= 0 {
			ds = append(ds, d)
			size = n
			if time.Now().After(deadline) && len(ds) >= 5 {
				break
			}
		}
	}
	slices.Sort(ds)
	return latency{Endpoint: ep.name, N: len(ds), P50: benchkit.Pct(ds, 50), P99: benchkit.Pct(ds, 99), Bytes: size}, nil
}

// get reads the whole answer and insists on 200.
func (b *bench) get(ctx context.Context, path string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return int(n), nil
}
