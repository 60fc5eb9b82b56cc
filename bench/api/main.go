// Command api benchmarks a real reportd process on loopback: API latency as
// the store grows, start-up time, a 1 GiB upload next to cp, parallel small
// uploads, and file serving next to nginx. bench/run.sh runs it; it prints
// a table and writes the same figures as Markdown (-md).
//
// Every phase is bounded by a request count and a time budget, so the
// whole run fits in a few minutes on a small machine.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
)

// sizes are the knobs that -quick shrinks.
type sizes struct {
	Projects      int
	Steps         []int // report counts at which the API is measured
	TargetReports int   // reports of the measured project
	UploadBytes   int64
	StartupRuns   int
	SmallFor      time.Duration // per concurrency level
	WrkFor        time.Duration // per wrk run
	LatencyBudget time.Duration // per endpoint and step
	SiteModules   int           // modules of the coverage.py site (one page each)
}

var full = sizes{
	Projects: 1000, Steps: []int{10_000, 50_000, 100_000}, TargetReports: 100,
	UploadBytes: 1 << 30, StartupRuns: 5,
	SmallFor: 5 * time.Second, WrkFor: 5 * time.Second, LatencyBudget: 8 * time.Second,
	SiteModules: 10_000,
}

var quick = sizes{
	Projects: 100, Steps: []int{1_000, 5_000}, TargetReports: 100,
	UploadBytes: 64 << 20, StartupRuns: 1,
	SmallFor: time.Second, WrkFor: time.Second, LatencyBudget: 2 * time.Second,
	SiteModules: 300,
}

func main() {
	var (
		bin     = flag.String("reportd", "", "reportd binary to benchmark (required)")
		ctl     = flag.String("reportctl", "", "reportctl binary: the sites phase also times `reportctl upload DIR` (skipped when empty)")
		work    = flag.String("work", "", "scratch directory (default: a new temp dir, removed afterwards)")
		md      = flag.String("md", "", "write the results as Markdown to this file")
		isQuick = flag.Bool("quick", false, "small sizes, for smoke-testing the suite")
		skip    = flag.String("skip", "", "comma-separated phases to skip: scale,startup,upload,small,serve,sites,dedup (the sites phase's Playwright dedup)")
		steps   = flag.String("steps", "", "comma-separated store sizes to measure at, overriding the mode's (for profiling runs)")
		wrkFor  = flag.Duration("wrk-for", 0, "length of each wrk run, overriding the mode's")
		rounds  = flag.Int("serve-rounds", serveRounds, "alternating wrk rounds per server in the serve and sites phases")
	)
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "usage: api -reportd PATH [-quick] [-md FILE]")
		os.Exit(2)
	}
	sz := full
	if *isQuick {
		sz = quick
	}
	if *wrkFor > 0 {
		sz.WrkFor = *wrkFor
	}
	serveRounds = max(1, *rounds)
	if *steps != "" {
		sz.Steps = nil
		for _, v := range splitComma(*steps) {
			n, err := strconv.Atoi(v)
			if err != nil || n < sz.TargetReports {
				fmt.Fprintf(os.Stderr, "bad -steps value %q\n", v)
				os.Exit(2)
			}
			sz.Steps = append(sz.Steps, n)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bin, *ctl, *work, *md, sz, parseSkip(*skip)); err != nil {
		fmt.Fprintln(os.Stderr, "bench/api:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, ctl, work, mdPath string, sz sizes, skip map[string]bool) error {
	work, cleanup, err := benchkit.WorkDir(work, "reportd-bench-")
	if err != nil {
		return err
	}
	defer cleanup()
	bin, err = filepath.Abs(bin)
	if err != nil {
		return err
	}
	if ctl != "" {
		if ctl, err = filepath.Abs(ctl); err != nil {
			return err
		}
	}
	b := &bench{bin: bin, ctl: ctl, work: work, dataDir: filepath.Join(work, "data"), sz: sz}
	defer b.stopDaemon()
	start := time.Now()
	if err := b.scale(ctx, skip); err != nil {
		return fmt.Errorf("scale: %w", err)
	}
	if !skip["upload"] {
		if err := b.bigUpload(ctx); err != nil {
			return fmt.Errorf("upload: %w", err)
		}
	}
	if !skip["small"] {
		if err := b.smallUploads(ctx); err != nil {
			return fmt.Errorf("small uploads: %w", err)
		}
	}
	if !skip["serve"] {
		if err := b.serving(ctx); err != nil {
			return fmt.Errorf("serving: %w", err)
		}
	}
	b.stopDaemon()
	if !skip["sites"] {
		if err := b.sites(ctx, skip["dedup"]); err != nil {
			return fmt.Errorf("sites: %w", err)
		}
	}
	b.res.Elapsed = time.Since(start)
	return benchkit.Results(b.res.markdown(sz), mdPath)
}

func parseSkip(s string) map[string]bool {
	m := map[string]bool{}
	for _, p := range splitComma(s) {
		m[p] = true
	}
	return m
}

// logf is progress on stderr; the figures go to stdout and the Markdown.
var logf = benchkit.Logf
