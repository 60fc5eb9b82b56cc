// Package service is the daemon's implementation of report.Service: the
// validation and write ordering that keep the metadata store and the file
// store in step. The HTTP layer depends on it, not on the stores.
package service

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/convert"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/ops"
	"github.com/reportd/reportd/internal/report"
)

// Config holds the service's limits and switches.
type Config struct {
	Version        string
	MaxUploadBytes int64 // per report file; 0 = unlimited
	MaxCoverBytes  int64
	// MaxInlineContent is the largest html/md text the report detail
	// carries in fileContent; larger ones are omitted (0: 8 MiB).
	MaxInlineContent      int64
	CoverFetchTimeout     time.Duration
	AllowPrivateCoverURLs bool
	// CoverAddrAllowed overrides which addresses cover downloads may dial
	// (checked at every dial, redirects included). nil: any address when
	// AllowPrivateCoverURLs, else none that is loopback, private or link-local.
	CoverAddrAllowed func(net.IP) bool
	ConvertOnUpload  bool
	Clock            report.Clock
	Logger           *slog.Logger
	// Retention is the server-wide retention policy (config retention.*).
	Retention report.Policy
	// OnPrune, if set, hears about every prune that deleted (metrics).
	OnPrune func(res report.PruneResult, took time.Duration, err error)
	// Blobs, if set, stores report files and covers instead of the data
	// directory's uploads/ (storage: postgres+s3). Engines then read a
	// copy fetched into tmp/ for each conversion, and the start-up sweep
	// leaves the store alone (it clears tmp/ only).
	Blobs blob.Store
	// Locker, with Blobs, shares converted PDFs in Blobs under pdf/
	// (pdfshared.go): every replica finds them there, and one conversion
	// per PDF runs across replicas. nil: PDFs stay in the engines' local
	// cache.
	Locker Locker
	// OnSharedPDF, if set, hears about the shared PDF cache (metrics):
	// "hit" and "miss" for each request's first look into the bucket,
	// "converted" for each PDF this replica wrote there.
	OnSharedPDF func(result string)
	// OnSiteIngest, if set, hears how each stored site was read
	// (metrics): path "streamed" (as it arrived), or "staged" (from the
	// staged copy) with the reason (ingestPath).
	OnSiteIngest func(path, reason string)
	// Sites bounds site uploads and sets their GC's grace (config sites.*).
	Sites SiteLimits
}

// Converter turns stored reports into PDFs: *convert.Manager, whose Job
// the service fills (a site job through siteJob, sitepdf.go).
type Converter interface {
	PDF(ctx context.Context, job convert.Job) (*os.File, error)
	// MarkdownHTML renders a Markdown report to the HTML its PDF prints.
	MarkdownHTML(ctx context.Context, job convert.Job) ([]byte, error)
	Prepare(job convert.Job)
	Forget(reportID int64) error
	// Generation names what the engines print today: it changes whenever
	// the same report and options would print differently (new rendering
	// code, scripts, stylesheet, settings, isolation), so a PDF's ETag
	// must change with it.
	Generation() string
}

// Service implements report.Service over a MetaStore, a blob store for the
// stored bytes (report files and covers) and a file Dir for staging uploads
// and the start-up sweep.
type Service struct {
	cfg         Config
	meta        report.MetaStore
	files       *files.Dir // the start-up sweep
	blobs       blob.Store // report files, covers and sites, keyed by files.Key of their API path; staging in its blob.TempDir
	conv        Converter
	pdfs        PDFCache
	coverClient *http.Client
	log         *slog.Logger
	pruneMu     sync.Mutex    // held by the one prune that deletes
	siteMu      sync.RWMutex  // ingests share it, site GC holds it alone
	siteStreams chan struct{} // a slot per site read as it arrives (TryStreamSite)
	gcMu        sync.Mutex    // one site GC at a time
	gcRuns      atomic.Uint64 // site GC generation: odd while one runs (site.Options.GCRuns)
	gcWanted    atomic.Int64  // site GCs asked for since the last one started
	variants    variants      // background precompression of site files
}

var _ report.Service = (*Service)(nil)

// New wires the service. conv may be nil: PDFs are then passed through and
// other types fail with a ConversionError.
func New(cfg Config, meta report.MetaStore, dir *files.Dir, conv Converter) *Service {
	if cfg.CoverFetchTimeout == 0 {
		cfg.CoverFetchTimeout = 10 * time.Second
	}
	if cfg.MaxCoverBytes == 0 {
		cfg.MaxCoverBytes = 10 << 20
	}
	if cfg.MaxInlineContent == 0 {
		cfg.MaxInlineContent = 8 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if conv == nil {
		conv = passthrough{}
	}
	allowed := cfg.CoverAddrAllowed
	switch {
	case allowed != nil:
	case cfg.AllowPrivateCoverURLs:
		allowed = anyIP
	default:
		allowed = publicIP
	}
	s := &Service{
		cfg: cfg, meta: meta, files: dir, conv: conv, log: cfg.Logger,
		coverClient: newCoverClient(allowed, cfg.CoverFetchTimeout),
		siteStreams: make(chan struct{}, maxSiteStreams),
	}
	if cfg.Blobs != nil {
		s.blobs = cfg.Blobs
	} else if dir != nil { // some tests need no files
		s.blobs = dir.Blobs()
	}
	s.variants.s = s
	s.pdfs = localPDFs{s}
	if cfg.Blobs != nil && cfg.Locker != nil {
		s.pdfs = newSharedPDFs(s, cfg.Blobs, cfg.Locker)
	}
	return s
}

// Close stops background conversions (convert on upload) and
// precompression and waits for them; call it before closing the engines
// and the stores.
func (s *Service) Close() error {
	s.variants.close()
	return s.pdfs.Close()
}

func (s *Service) Ping(ctx context.Context) (report.Ping, error) {
	return report.Ping{Version: s.cfg.Version, Timestamp: time.Now().UTC().Truncate(time.Millisecond)}, nil
}

// Sweep removes temp files and files that no row refers to. Run it before
// serving: anything unreferenced then was never acknowledged. The search
// is ops.Orphans, the one behind reportd check and the bucket sweep.
func (s *Service) Sweep(ctx context.Context) ([]string, error) {
	removed, err := ops.ClearStaging(filepath.Join(s.files.Base(), "tmp"))
	if err != nil || s.cfg.Blobs != nil {
		// The files are not in uploads/: never walk the store (orphan
		// objects wait for a periodic sweep, docs/scale-out.md).
		return removed, err
	}
	keys, err := ops.RemoveOrphans(ctx, s.blobs, nil, time.Time{}, ops.PathSet(s.meta))
	for _, k := range keys {
		removed = append(removed, files.APIPath(k))
	}
	return removed, err
}

// OpenStatic opens a file below /uploads/ for static serving. Anything
// that is not a stored object is NotFound.
func (s *Service) OpenStatic(p string) (blob.Object, error) {
	return s.open(context.Background(), p)
}

// open opens the stored object of an API path. With the local store the
// object is an *os.File underneath (blob.OSFile), which net/http sends with
// sendfile.
func (s *Service) open(ctx context.Context, p string) (blob.Object, error) {
	key, err := files.Key(p)
	if err != nil {
		return nil, err
	}
	o, err := s.blobs.Open(ctx, key)
	var re *report.Error
	switch {
	case err == nil:
		return o, nil
	case errors.Is(err, blob.ErrNotFound):
		return nil, report.Wrap(report.NotFound, err, "file not found")
	case errors.As(err, &re): // the store's own kind: S3 down is not a 404
		return nil, err
	}
	return nil, report.Wrap(report.Storage, err, "cannot read the stored file")
}

// place stores a staged upload under the API path p: the durable step
// between reserving the id and committing the row. The upload arrived
// whole, so placing it is not abandoned when the client goes (as before
// the blob store); ctx still carries its values.
func (s *Service) place(ctx context.Context, st *files.Staged, p string) error {
	key, err := files.Key(p)
	if err != nil {
		return err
	}
	return st.Place(context.WithoutCancel(ctx), s.blobs, key, blob.PutOptions{})
}

// OpenReport opens a report's stored file for preview and download.
func (s *Service) OpenReport(ctx context.Context, id int64) (report.ReportRecord, blob.Object, error) {
	rec, err := s.meta.Report(ctx, id)
	if err != nil {
		return rec, nil, err
	}
	if rec.IsSite() {
		return rec, nil, report.Errorf(report.NotFound, "report %d is a site: it has no single file (open it on the content origin or download it as a zip)", id)
	}
	o, err := s.open(ctx, rec.FilePath)
	if err != nil {
		return rec, nil, report.Wrap(report.Storage, err, "the report's file is missing")
	}
	return rec, o, nil
}

// PDF returns the report as PDF, printed with opts: a local file (sent
// with sendfile) or, with a shared cache, the object in the bucket.
func (s *Service) PDF(ctx context.Context, id int64, opts report.PrintOptions) (report.ReportRecord, blob.Object, error) {
	rec, err := s.meta.Report(ctx, id)
	if err != nil {
		return rec, nil, err
	}
	if err := opts.CheckFor(rec.FileType); err != nil {
		return rec, nil, err
	}
	o, err := s.pdfs.PDF(ctx, rec, opts)
	return rec, o, err
}

// PDFGeneration names what the engines print today (Converter.Generation);
// a converted PDF's ETag includes it.
func (s *Service) PDFGeneration() string { return s.conv.Generation() }

// MarkdownHTML returns a Markdown report rendered to HTML by the engines'
// renderer, the document its PDF is printed from.
//
// fresh, if given, is asked first: when it says the caller's copy of rec's
// rendering is current, nothing is rendered and the bytes are nil.
func (s *Service) MarkdownHTML(ctx context.Context, id int64, fresh func(report.ReportRecord) bool) (report.ReportRecord, []byte, error) {
	rec, err := s.meta.Report(ctx, id)
	if err != nil {
		return rec, nil, err
	}
	if fresh != nil && rec.FileType == report.MD && fresh(rec) {
		return rec, nil, nil
	}
	job, release, err := s.job(ctx, rec)
	if err != nil {
		return rec, nil, err
	}
	// The renderer reads the copy before it returns, cancelled or not:
	// nothing reads it after.
	b, err := s.conv.MarkdownHTML(ctx, job)
	release()
	return rec, b, err
}

// job describes rec for the engines, which read the original by path.
// A store with local files (blob.Pather) hands its own path and release
// does nothing; any other store's object is copied into tmp/ and release
// removes the copy: call it once nothing reads the copy any more.
func (s *Service) job(ctx context.Context, rec report.ReportRecord) (convert.Job, func(), error) {
	job := convert.Job{ReportID: rec.ID, ProjectID: rec.ProjectID, Type: rec.FileType, ContentKey: rec.SHA256}
	if rec.IsSite() { // printed through siteJob (sitepdf.go)
		return job, nil, report.Errorf(report.Validation, "report %d is a site: it has no single file to convert", rec.ID)
	}
	key, err := files.Key(rec.FilePath)
	if err != nil {
		return job, nil, err
	}
	if lp, ok := s.blobs.(blob.Pather); ok {
		job.Src, err = lp.LocalPath(key)
		return job, func() {}, err
	}
	tmp, err := s.fetchCopy(ctx, key, path.Ext(rec.FilePath))
	if err != nil {
		return job, nil, err
	}
	job.Src = tmp
	return job, func() { os.Remove(tmp) }, nil
}

// enginePDF asks the engines for rec's PDF printed with opts. With local
// files the engines read the stored file. With a fetched copy they run
// detached from ctx: a conversion whose caller left still ends (and fills
// the cache), and its copy is removed the moment it ends, not later.
func (s *Service) enginePDF(ctx context.Context, rec report.ReportRecord, opts report.PrintOptions) (*os.File, error) {
	// Sites (and scope=site of an html file) read their files through
	// the manifest, with no copy to release (sitepdf.go).
	if job, ok := s.siteJob(rec, opts); ok {
		job.Print = opts
		return s.conv.PDF(ctx, job)
	}
	job, release, err := s.job(ctx, rec)
	if err != nil {
		return nil, err
	}
	job.Print = opts
	if _, local := s.blobs.(blob.Pather); local {
		defer release()
		return s.conv.PDF(ctx, job)
	}
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := s.conv.PDF(context.WithoutCancel(ctx), job)
		release()
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.f, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
	}
}

// fetchCopy streams the object of key into a new file in the store's
// staging area (named with ext, which some engines go by) and returns its
// absolute path.
func (s *Service) fetchCopy(ctx context.Context, key, ext string) (string, error) {
	o, err := s.blobs.Open(ctx, key)
	if err != nil {
		return "", report.Wrap(report.Storage, err, "the report's file is missing")
	}
	defer o.Close()
	f, err := os.CreateTemp(s.tempDir(), "engine-*"+ext)
	if err != nil {
		return "", report.Wrap(report.Storage, err, "cannot copy the report for the engines")
	}
	_, err = io.Copy(f, o)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", report.Wrap(report.Storage, err, "cannot copy the report for the engines")
	}
	return f.Name(), nil
}

func (s *Service) forget(id int64) {
	if err := s.conv.Forget(id); err != nil {
		s.log.Warn("forget cached PDF", "report", id, "err", err)
	}
}

func (s *Service) removeFile(p string) {
	key, err := files.Key(p)
	if err == nil {
		err = s.blobs.Delete(context.Background(), key)
	}
	if err != nil {
		// The start-up sweep removes it later; the row is already gone.
		s.log.Warn("remove file", "path", p, "err", err)
	}
}

func reportPath(id int64, t report.FileType) string {
	return files.UploadsPrefix + "reports/" + strconv.FormatInt(id, 10) + t.Ext()
}

func coverDir(project int64) string {
	return files.UploadsPrefix + "covers/" + strconv.FormatInt(project, 10)
}

// passthrough is the converter when no engines are configured.
type passthrough struct{}

func (passthrough) PDF(ctx context.Context, job convert.Job) (*os.File, error) {
	if job.Type.Info().Engine != report.EnginePassthroughPDF {
		return nil, report.Errorf(report.Conversion, "no PDF engine for %s reports in this daemon", job.Type)
	}
	if !job.Print.IsZero() {
		return nil, report.Errorf(report.Conversion, "this daemon has no PDF engines to apply print options")
	}
	return os.Open(job.Src)
}
func (passthrough) MarkdownHTML(context.Context, convert.Job) ([]byte, error) {
	return nil, report.Errorf(report.Conversion, "no Markdown renderer in this daemon (engines are off)")
}
func (passthrough) Prepare(convert.Job) {}
func (passthrough) Forget(int64) error  { return nil }
func (passthrough) Generation() string  { return "" }

// readAllString reads size bytes (more if the file grew) into one string,
// without the extra copy of io.ReadAll and a []byte-to-string conversion.
func readAllString(f io.Reader, size int64) (string, error) {
	var b strings.Builder
	b.Grow(int(size))
	_, err := io.Copy(&b, f)
	return b.String(), err
}

// Limits returns the upload and cover size limits (0 = unlimited).
func (s *Service) Limits() (upload, cover int64) { return s.cfg.MaxUploadBytes, s.cfg.MaxCoverBytes }
