// Package bucketsweep is the periodic clean-up of the bucket of storage:
// postgres+s3, where no start-up sweep can see what a crash left: objects
// under reports/ and covers/ that no row references (a replica died between
// writing the object and committing the row, or between deleting the row
// and the object), shared PDFs under pdf/ whose content no report has any
// more, and multipart uploads a dead replica left open. One replica sweeps
// at a time (a PostgreSQL try-lock); the others skip the pass.
//
// Nothing younger than the grace period is removed: an upload writes its
// object before it commits its row, so a young object may be about to be
// referenced.
package bucketsweep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/ops"
)

// Refs lists what the metadata references (pgstore.Store).
type Refs interface {
	// FilePaths calls fn with every cover and report file path
	// ("/uploads/reports/7.html").
	FilePaths(ctx context.Context, fn func(path string) error) error
	// ContentKeys calls fn with the sha256 of every report's file.
	ContentKeys(ctx context.Context, fn func(sha string) error) error
}

// Locker takes a cluster-wide lock without waiting (pgstore.Store.TryLock).
type Locker interface {
	TryLock(ctx context.Context, name string) (unlock func(), ok bool, err error)
}

// Step is one more clean-up run in the same pass, under the same lock
// (site.GC for the site objects under cas/ and sites/).
type Step func(ctx context.Context) error

// Config wires a Sweeper.
type Config struct {
	Store  blob.Store
	Refs   Refs
	Locker Locker
	// Grace: objects and uploads younger than this are kept.
	Grace time.Duration
	// AbortStale aborts multipart uploads older than its argument and says
	// how many (s3store.Store.AbortStale); nil: the store has none.
	AbortStale func(ctx context.Context, olderThan time.Duration) (int, error)
	// Steps run after the sweep's own, in order; an error is logged and
	// the next step still runs.
	Steps []Step
	// PDFPrefix is where the shared PDFs are ("pdf/"): <prefix><sha[:2]>/<sha>/...
	PDFPrefix string
	Log       *slog.Logger
	// Registerer, if set, gets reportd_bucket_sweep_* counters.
	Registerer prometheus.Registerer
}

// Result counts what one pass removed.
type Result struct {
	Ran     bool // false: another replica holds the lock, nothing was done
	Reports int  // objects under reports/
	Covers  int  // objects under covers/
	PDFs    int  // objects under the PDF prefix
	Uploads int  // multipart uploads aborted
}

// lockName is the try-lock a pass holds.
const lockName = "bucket-sweep"

// Sweeper runs passes.
type Sweeper struct {
	cfg     Config
	log     *slog.Logger
	removed *prometheus.CounterVec
	passes  *prometheus.CounterVec
}

// New checks cfg and registers the counters.
func New(cfg Config) (*Sweeper, error) {
	if cfg.Store == nil || cfg.Refs == nil || cfg.Locker == nil {
		return nil, errors.New("bucketsweep: Store, Refs and Locker are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Sweeper{cfg: cfg, log: cfg.Log,
		removed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reportd_bucket_sweep_removed_total",
			Help: "Objects the bucket sweep removed (kind: report, cover, pdf) and multipart uploads it aborted (upload).",
		}, []string{"kind"}),
		passes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "reportd_bucket_sweep_passes_total",
			Help: "Bucket sweep passes by result: ok, error, or skipped (another replica was sweeping).",
		}, []string{"result"}),
	}
	for _, k := range []string{"report", "cover", "pdf", "upload"} {
		s.removed.WithLabelValues(k)
	}
	for _, r := range []string{"ok", "error", "skipped"} {
		s.passes.WithLabelValues(r)
	}
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(s.removed); err != nil {
			return nil, err
		}
		if err := cfg.Registerer.Register(s.passes); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Loop runs a pass soon after start and then every interval until ctx
// ends.
func (s *Sweeper) Loop(ctx context.Context, interval time.Duration) {
	first := time.NewTimer(time.Second)
	defer first.Stop()
	select {
	case <-ctx.Done():
		return
	case <-first.C:
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.Once(ctx) // logged inside
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Once runs one pass if no other replica is sweeping.
func (s *Sweeper) Once(ctx context.Context) (res Result, err error) {
	unlock, ok, err := s.cfg.Locker.TryLock(ctx, lockName)
	if err != nil {
		s.passes.WithLabelValues("error").Inc()
		s.log.Warn("bucket sweep: cannot take the lock", "err", err)
		return res, err
	}
	if !ok {
		s.passes.WithLabelValues("skipped").Inc()
		s.log.Debug("bucket sweep skipped: another replica is sweeping")
		return res, nil
	}
	defer unlock()
	res.Ran = true
	start := time.Now()
	err = s.pass(ctx, &res)
	for i, step := range s.cfg.Steps {
		if serr := step(ctx); serr != nil {
			s.log.Warn("bucket sweep: extra step failed", "step", i, "err", serr)
			err = errors.Join(err, serr)
		}
	}
	result := "ok"
	if err != nil {
		result = "error"
		s.log.Warn("bucket sweep failed", "err", err)
	}
	s.passes.WithLabelValues(result).Inc()
	s.log.Info("bucket sweep", "reports", res.Reports, "covers", res.Covers, "pdfs", res.PDFs,
		"uploads_aborted", res.Uploads, "took", time.Since(start).Round(time.Millisecond))
	return res, err
}

// candidate is an object old enough to go if nothing references it.
type candidate struct {
	key  string
	kind string
}

func (s *Sweeper) pass(ctx context.Context, res *Result) error {
	cutoff := time.Now().Add(-s.cfg.Grace)
	// Report files and covers no row references: the one orphan search
	// (ops.Orphans), which lists first and reads the references after.
	orphans, err := ops.Orphans(ctx, s.cfg.Store, []string{"reports/", "covers/"}, cutoff, ops.PathSet(s.cfg.Refs), nil)
	if err != nil {
		return err
	}
	var cands []candidate
	for _, o := range orphans {
		kind := "report"
		if strings.HasPrefix(o.Key, "covers/") {
			kind = "cover"
		}
		cands = append(cands, candidate{o.Key, kind})
	}
	// Shared PDFs whose content no report has: list first, then read the
	// content references, for the same reason.
	if s.cfg.PDFPrefix != "" {
		err := s.cfg.Store.Walk(ctx, s.cfg.PDFPrefix, func(i blob.Info) error {
			if !i.ModTime.After(cutoff) {
				cands = append(cands, candidate{i.Key, "pdf"})
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("list %s: %w", s.cfg.PDFPrefix, err)
		}
	}
	shas := map[string]bool{}
	if s.cfg.PDFPrefix != "" {
		if err := s.cfg.Refs.ContentKeys(ctx, func(sha string) error { shas[sha] = true; return nil }); err != nil {
			return fmt.Errorf("read content references: %w", err)
		}
	}
	var errs []error
	for _, c := range cands {
		if c.kind == "pdf" && shas[pdfContent(s.cfg.PDFPrefix, c.key)] {
			continue
		}
		if err := s.cfg.Store.Delete(ctx, c.key); err != nil {
			errs = append(errs, err)
			continue
		}
		s.removed.WithLabelValues(c.kind).Inc()
		s.log.Info("bucket sweep removed an unreferenced object", "key", c.key)
		switch c.kind {
		case "report":
			res.Reports++
		case "cover":
			res.Covers++
		case "pdf":
			res.PDFs++
		}
	}
	if s.cfg.AbortStale != nil {
		n, err := s.cfg.AbortStale(ctx, s.cfg.Grace)
		res.Uploads = n
		s.removed.WithLabelValues("upload").Add(float64(n))
		if n > 0 {
			s.log.Info("bucket sweep aborted stale multipart uploads", "count", n)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("abort stale uploads: %w", err))
		}
	}
	return errors.Join(errs...)
}

// pdfContent is the sha of a PDF key <prefix><sha[:2]>/<sha>/<variant>.pdf,
// or "" for a key of another shape (which then goes: nothing references it).
func pdfContent(prefix, key string) string {
	parts := strings.Split(strings.TrimPrefix(key, prefix), "/")
	if len(parts) != 3 {
		return ""
	}
	return parts[1]
}
