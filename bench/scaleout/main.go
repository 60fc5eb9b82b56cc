// Command scaleout benchmarks reportd on its scale-out backends next to
// bbolt, on loopback, in one bounded run (under 5 minutes on 2 cores):
//
//   - GET /api/projects and the per-project list on bbolt and PostgreSQL
//     side by side, at 1,000 and at 100,000 reports (seeded straight into
//     the stores with BulkLoad: no files, which these reads never open);
//   - upload throughput (reports/s) of 32 concurrent uploaders against one
//     and against two replicas of storage: postgres+s3 (one database, one
//     versitygw bucket);
//   - one 1 GiB upload streamed through the S3 path, with the daemon's
//     peak RSS (VmHWM) before and after.
//
// PostgreSQL and versitygw are the throwaway servers of internal/testserver
// (pg.go, s3.go). `bash bench/run.sh` runs it; alone:
//
//	go build -o /tmp/reportd ./cmd/reportd && go run ./bench/scaleout -reportd /tmp/reportd -md /tmp/scaleout.md
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/reportd/reportd/bench/internal/benchkit"
	"github.com/reportd/reportd/internal/testserver"
)

type sizes struct {
	Projects   int
	Steps      []int // total reports at which the lists are measured
	Target     int   // reports of project 1 (the per-project list)
	Requests   int   // per endpoint and step
	Budget     time.Duration
	UploadFor  time.Duration // per replica count
	Uploaders  int
	UploadSize int   // bytes of each small upload
	BigBytes   int64 // the streamed upload
}

var full = sizes{Projects: 1000, Steps: []int{1_000, 100_000}, Target: 100, Requests: 300, Budget: 8 * time.Second,
	UploadFor: 10 * time.Second, Uploaders: 32, UploadSize: 2 << 10, BigBytes: 1 << 30}

var quick = sizes{Projects: 100, Steps: []int{1_000, 5_000}, Target: 100, Requests: 50, Budget: 2 * time.Second,
	UploadFor: 2 * time.Second, Uploaders: 32, UploadSize: 2 << 10, BigBytes: 64 << 20}

func main() {
	var (
		bin     = flag.String("reportd", "", "reportd binary to benchmark (required)")
		work    = flag.String("work", "", "scratch directory (default: a new temp dir, removed afterwards)")
		md      = flag.String("md", "", "write the results as Markdown to this file")
		isQuick = flag.Bool("quick", false, "small sizes, for smoke-testing")
	)
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "usage: scaleout -reportd PATH [-quick] [-md FILE]")
		os.Exit(2)
	}
	sz := full
	if *isQuick {
		sz = quick
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *bin, *work, *md, sz); err != nil {
		fmt.Fprintln(os.Stderr, "bench/scaleout:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, bin, work, mdPath string, sz sizes) error {
	work, cleanup, err := benchkit.WorkDir(work, "reportd-scaleout-")
	if err != nil {
		return err
	}
	defer cleanup()
	if err := os.MkdirAll(work, 0o750); err != nil {
		return err
	}
	bin, err = filepath.Abs(bin)
	if err != nil {
		return err
	}
	start := time.Now()
	logf("starting PostgreSQL and versitygw")
	pg, err := testserver.StartPG()
	if err != nil {
		return err
	}
	defer pg.Stop()
	s3, err := testserver.StartS3()
	if err != nil {
		return err
	}
	defer s3.Stop()
	b := &bench{bin: bin, work: work, sz: sz, pg: pg, s3: s3}
	defer b.stopAll()
	if err := b.lists(ctx); err != nil {
		return fmt.Errorf("lists: %w", err)
	}
	if err := b.uploads(ctx); err != nil {
		return fmt.Errorf("uploads: %w", err)
	}
	b.res.Elapsed = time.Since(start)
	return benchkit.Results(b.res.markdown(sz), mdPath)
}

// logf is progress on stderr; the figures go to stdout and the Markdown.
var logf = benchkit.Logf
