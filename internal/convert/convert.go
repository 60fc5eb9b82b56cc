// Package convert turns stored reports into PDFs with warm, supervised,
// sandboxed engines: one Chromium giving each HTML and Markdown job a fresh
// browser context, a pool of LibreOffice workers for PPT and PPTX, and a
// validated passthrough for PDF. Every engine process runs in a bubblewrap
// sandbox (engine/sandbox.go). Results are cached on disk by report and content,
// with an LRU size cap.
package convert

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/reportd/reportd/internal/convert/chromium"
	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/convert/markdown"
	"github.com/reportd/reportd/internal/convert/office"
	"github.com/reportd/reportd/internal/report"
)

// Config configures the engines and the cache. Zero fields take the values
// of DefaultConfig.
type Config struct {
	Paper                string        // "A4" (default) or "Letter"; a CSS @page size in the document wins
	AllowNetwork         bool          // false: HTML may load only data: URLs and itself; all other fetches are blocked
	ScriptWait           time.Duration // longest wait after load while scripts still draw (default 1s; usually ~0)
	ChromiumPath         string        // default: chromium-headless-shell, then chromium, from PATH
	SofficePath          string        // default "soffice"
	PythonPath           string        // default "/usr/bin/python3" (Debian's, which has python3-uno)
	BwrapPath            string        // bubblewrap, default "bwrap" from PATH; engines run in its sandbox
	Unsandboxed          bool          // where the sandbox cannot run, run engines without it instead of refusing
	OfficeWorkers        int           // default max(1, NumCPU/2)
	ChromiumTabs         int           // pages printing at once; default max(2, NumCPU)
	ChromiumSpares       int           // pages made ahead of jobs, each a fresh browser context; default autoSpares (spares.go)
	JobTimeout           time.Duration // per conversion, default 60s; a timed-out worker is killed and replaced
	MaxJobsPerWorker     int           // restart an engine process after this many jobs, default 200
	MaxWorkerRSS         int64         // restart an engine process above this resident memory, default 1 GiB
	QueueSize            int           // jobs that may wait per engine, default 32; beyond that: Unavailable
	CacheDir             string        // required, e.g. <data-dir>/cache/pdf
	HideDirs             []string      // never visible to an engine, even under a system path it reads (the data directory)
	CacheMaxBytes        int64         // total cache cap with LRU eviction, default 1 GiB; <0 means no cap
	DeckMaxBytes         int64         // a .pptx may expand to this many bytes, default 512 MiB (office/defuse.go)
	SmallDeckBytes       int64         // decks up to this size have their own worker (office/lanes.go); default 1 MiB, <0: no lane
	FailureTTL           time.Duration // a failed conversion is answered from memory this long, default 2m; <0: never
	MaxVariantsPerReport int           // cached print variants (PDFs with print options) per report, default 8; <0: no cap
	TrimMaxBytes         int64         // pageRanges of a stored PDF only up to this size, default 256 MiB (pdfpages_proc.go)
	SiteMaxPages         int           // scope=site prints at most this many pages of a site, default 200 (site.go)
	SiteTimeout          time.Duration // engine time of a whole scope=site walk (every page, not each), default 3m (chromium/chromium_site.go)
	Registerer           prometheus.Registerer
	Logger               *slog.Logger
}

// DefaultConfig returns the defaults; the caller sets CacheDir.
func DefaultConfig() Config {
	return Config{
		Paper:                "A4",
		ScriptWait:           time.Second,
		SofficePath:          "soffice",
		PythonPath:           "/usr/bin/python3",
		OfficeWorkers:        max(1, runtime.NumCPU()/2),
		ChromiumTabs:         max(2, runtime.NumCPU()),
		JobTimeout:           60 * time.Second,
		MaxJobsPerWorker:     200,
		MaxWorkerRSS:         1 << 30,
		QueueSize:            32,
		CacheMaxBytes:        1 << 30,
		DeckMaxBytes:         512 << 20,
		SmallDeckBytes:       1 << 20,
		FailureTTL:           2 * time.Minute,
		TrimMaxBytes:         256 << 20,
		MaxVariantsPerReport: 8,
		SiteMaxPages:         200,
		SiteTimeout:          3 * time.Minute,
	}
}

func (c *Config) fill() error {
	d := DefaultConfig()
	switch c.Paper {
	case "":
		c.Paper = d.Paper
	case "A4", "Letter":
	default:
		return fmt.Errorf("convert: paper must be A4 or Letter, not %q", c.Paper)
	}
	if c.ScriptWait == 0 {
		c.ScriptWait = d.ScriptWait
	}
	if c.SofficePath == "" {
		c.SofficePath = d.SofficePath
	}
	if c.PythonPath == "" {
		c.PythonPath = d.PythonPath
	}
	if c.OfficeWorkers <= 0 {
		c.OfficeWorkers = d.OfficeWorkers
	}
	if c.ChromiumTabs <= 0 {
		c.ChromiumTabs = d.ChromiumTabs
	}
	if c.JobTimeout <= 0 {
		c.JobTimeout = d.JobTimeout
	}
	if c.MaxJobsPerWorker <= 0 {
		c.MaxJobsPerWorker = d.MaxJobsPerWorker
	}
	if c.MaxWorkerRSS == 0 {
		c.MaxWorkerRSS = d.MaxWorkerRSS
	}
	if c.ChromiumSpares <= 0 {
		c.ChromiumSpares = autoSpares(c.ChromiumTabs, c.MaxWorkerRSS, memTotal())
	}
	if c.QueueSize <= 0 {
		c.QueueSize = d.QueueSize
	}
	if c.CacheMaxBytes == 0 {
		c.CacheMaxBytes = d.CacheMaxBytes
	}
	if c.DeckMaxBytes <= 0 {
		c.DeckMaxBytes = d.DeckMaxBytes
	}
	if c.SmallDeckBytes == 0 {
		c.SmallDeckBytes = d.SmallDeckBytes
	}
	if c.MaxVariantsPerReport == 0 {
		c.MaxVariantsPerReport = d.MaxVariantsPerReport
	}
	if c.TrimMaxBytes <= 0 {
		c.TrimMaxBytes = d.TrimMaxBytes
	}
	if c.SiteTimeout <= 0 {
		c.SiteTimeout = d.SiteTimeout
	}
	if c.SiteMaxPages <= 0 {
		c.SiteMaxPages = d.SiteMaxPages
	}
	if c.FailureTTL == 0 {
		c.FailureTTL = d.FailureTTL
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// renderVersion changes whenever Go code changes what the same input
// renders to, so old cache files stop matching. What is embedded (the
// scripts run in every page, the Markdown stylesheet (with its footer), the
// scripts and ready selectors of site jobs: chromium/site_ready.go) and the
// settings that shape output are hashed into the cache key too (variantOf),
// so a change to them needs no bump. 2: every pane of go tool cover -html
// reports printed (chromium/panes.js).
const renderVersion = "2"

// engineGeneration changes whenever what an engine may do while rendering
// changes, so PDFs rendered under weaker isolation stop matching. 2: engines
// sandboxed, one browser context per HTML job (PDFs cached before could hold
// another report's content).
const engineGeneration = "2"

// variantOf names what the engines print today (Manager.variant): the
// versions above, every embedded input of a print and the settings that
// shape output. Each part is length-prefixed, so no two lists of parts
// hash alike.
func variantOf(cfg *Config) string {
	h := sha256.New()
	for _, part := range []string{
		renderVersion, engineGeneration,
		chromium.QuietJS(), chromium.PanesJS(), markdown.CSS, chromium.SiteScripts(),
		cfg.Paper, strconv.FormatBool(cfg.AllowNetwork), cfg.ScriptWait.String(),
	} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil)[:4])
}

// Manager owns the engines and the cache.
type Manager struct {
	cfg     Config
	log     *slog.Logger
	met     *engine.Metrics
	cache   *cache
	chrome  *chromium.Engine
	office  *office.Engine
	offCfg  office.Config // what office reads of cfg (officeConfig)
	md      *markdown.Pool
	fails   *failures
	variant string
	workDir string

	flight    singleflight.Group
	ctx       context.Context // ends at Close; conversions run under it, not under a caller's
	cancel    context.CancelFunc
	startOnce sync.Once
	prepare   chan struct{} // bounds background conversions
	mu        sync.Mutex
	closed    bool
	walks     map[int64]bool // reports whose scope=site PDF is being printed (site.go)
	bg        sync.WaitGroup
}

// New checks the configuration and opens the cache; it starts no process.
func New(cfg Config) (*Manager, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	met, err := engine.NewMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	c, err := openCache(cfg.CacheDir, cfg.CacheMaxBytes, cfg.MaxVariantsPerReport)
	if err != nil {
		return nil, err
	}
	work, err := makeWorkDir()
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, log: cfg.Logger, met: met, cache: c, workDir: work,
		prepare: make(chan struct{}, max(1, cfg.OfficeWorkers))}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	box := engine.NewSandbox(m.cfg.BwrapPath, m.cfg.Unsandboxed, append([]string{m.cfg.CacheDir}, m.cfg.HideDirs...), m.log)
	m.chrome = chromium.New(m.chromiumConfig(), m.log, met, box, work)
	m.offCfg = officeConfig(&m.cfg)
	m.office = office.New(&m.offCfg, m.log, met, box, work)
	m.md = markdown.NewPool(m.cfg.ChromiumTabs, m.cfg.MaxJobsPerWorker, m.log, met)
	m.fails = newFailures(m.cfg.FailureTTL)
	m.variant = variantOf(&m.cfg)
	return m, nil
}

// officeConfig is what the LibreOffice engine (convert/office) reads of cfg.
func officeConfig(cfg *Config) office.Config {
	return office.Config{
		SofficePath:      cfg.SofficePath,
		PythonPath:       cfg.PythonPath,
		Workers:          cfg.OfficeWorkers,
		QueueSize:        cfg.QueueSize,
		JobTimeout:       cfg.JobTimeout,
		MaxJobsPerWorker: cfg.MaxJobsPerWorker,
		MaxWorkerRSS:     cfg.MaxWorkerRSS,
		DeckMaxBytes:     cfg.DeckMaxBytes,
		SmallDeckBytes:   cfg.SmallDeckBytes,
	}
}

// Generation names what the engines print today: the render version, the
// engine generation, the embedded scripts and stylesheet, and the settings
// that shape output. It changes whenever the same report would print
// differently; cached PDFs and their ETags follow it.
func (m *Manager) Generation() string { return m.variant }

// Start warms the engines in the background and returns at once. Engines
// that die later restart lazily, on the next job.
func (m *Manager) Start(ctx context.Context) {
	m.startOnce.Do(func() {
		m.office.Start()
		m.bg.Add(1)
		go func() {
			defer m.bg.Done()
			m.md.Warm()
			m.chrome.Warm()
		}()
	})
}

// Job is one report to convert.
type Job struct {
	ReportID   int64
	ProjectID  int64 // engines serve waiting jobs project by project (engine/gate.go)
	Type       report.FileType
	Src        string              // absolute path of the stored original; unused with Site
	ContentKey string              // hex sha256 of the original's bytes (of a site: of its manifest)
	Print      report.PrintOptions // checked for Type by the caller (PrintOptions.CheckFor)
	// Site, for an HTML report, prints it from its files under an origin of
	// its own (site.go): a site report, or a single-file one with
	// scope=site. Print.Scope says whether the entry alone or the site.
	Site *Site
}

func (j Job) check() error {
	if j.Site != nil {
		if j.Type != report.HTML || j.Site.Files == nil {
			return report.Errorf(report.Internal, "convert: a site job is an HTML job with a file provider")
		}
	} else if j.Print.Scope != "" {
		return report.Errorf(report.Internal, "convert: scope=site needs the report's files (Job.Site)")
	} else if !filepath.IsAbs(j.Src) {
		return report.Errorf(report.Internal, "convert: source path must be absolute")
	}
	if _, err := hex.DecodeString(j.ContentKey); err != nil || j.ContentKey == "" {
		return report.Errorf(report.Internal, "convert: content key must be hex")
	}
	return nil
}

// PDF returns an open file holding the report as PDF: the cached copy, or
// for a PDF report the validated original. The caller closes it. Errors are
// *report.Error. Concurrent calls for the same job share one conversion.
func (m *Manager) PDF(ctx context.Context, job Job) (*os.File, error) {
	if err := job.check(); err != nil {
		return nil, err
	}
	if err := job.Print.CheckFor(job.Type); err != nil {
		return nil, err
	}
	if job.Type.Info().Engine == report.EnginePassthroughPDF && job.Print.IsZero() {
		return openPDF(job.Src)
	}
	path := m.cache.path(job.ReportID, job.ContentKey, m.printVariant(job.Print))
	if f := m.cache.open(path); f != nil {
		m.met.Cache(true)
		return f, nil
	}
	m.met.Cache(false)
	if err := m.fails.get(path); err != nil {
		return nil, err
	}
	if k := m.walkKey(job); k != "" {
		if err := m.fails.get(k); err != nil {
			return nil, err
		}
	}
	// A put never evicts its own file, but another put may before we open it.
	for range 3 {
		ch := m.flight.DoChan(path, func() (any, error) { return nil, m.convert(job, path) })
		select {
		case r := <-ch:
			if r.Err != nil {
				return nil, r.Err
			}
		case <-ctx.Done():
			return nil, report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
		}
		if f := m.cache.open(path); f != nil {
			return f, nil
		}
	}
	return nil, report.Errorf(report.Unavailable, "the PDF cache is too small for this report")
}

// walkKey is where the failure memory keeps a failed site walk
// (scope=site) of job's report and content, whatever its print options:
// a walk's failure is charged to the report, so varying scale or paper
// does not buy another walk of a site that failed. "" for other jobs.
func (m *Manager) walkKey(job Job) string {
	if job.Site == nil || job.Print.Scope != report.ScopeSite {
		return ""
	}
	return m.cache.path(job.ReportID, job.ContentKey, m.variant+"-walk")
}

// openPDF returns the stored PDF after checking it is one.
func openPDF(src string) (*os.File, error) {
	f, err := os.Open(src)
	if err != nil {
		return nil, report.Wrap(report.Storage, err, "the report file is missing")
	}
	info, err := f.Stat()
	if err == nil {
		err = checkPDF(f, info.Size())
	}
	if err != nil {
		f.Close()
		return nil, report.Wrap(report.Conversion, err, err.Error())
	}
	return f, nil
}

// convert renders job into the cache at path.
func (m *Manager) convert(job Job, path string) (err error) {
	start := time.Now()
	defer func() {
		err = engine.AsStorage(err) // a full disk is not the document's fault: never remembered
		result := "ok"
		if err != nil {
			result = "error"
			if report.IsKind(err, report.Unavailable) {
				result = "busy"
			}
		}
		m.met.Converted(string(job.Type), result, time.Since(start))
		m.log.Debug("PDF converted", "report", job.ReportID, "type", job.Type, "result", result, "took", time.Since(start))
		m.fails.put(job.ReportID, path, err)
		if k := m.walkKey(job); k != "" {
			m.fails.put(job.ReportID, k, err)
		}
		if err != nil && !report.IsKind(err, report.Unavailable) {
			m.log.Warn("PDF conversion failed", "report", job.ReportID, "type", job.Type, "err", err)
		}
	}()
	m.Start(m.ctx)
	tmp, err := m.cache.tempFile()
	if err != nil {
		return engine.DiskErr(err, "cannot write the PDF cache")
	}
	defer os.Remove(tmp.Name()) // a no-op once it is renamed into the cache
	// Routing by the type's engine, from the type table (report.TypeInfo).
	switch eng := job.Type.Info().Engine; {
	case job.Site != nil:
		err = m.printSite(job, tmp)
		if cerr := tmp.Close(); err == nil && cerr != nil {
			err = engine.DiskErr(cerr, "cannot write the PDF cache")
		}
	case eng == report.EngineChromiumHTML, eng == report.EngineChromiumMarkdown:
		err = m.printDoc(job, tmp)
		if cerr := tmp.Close(); err == nil && cerr != nil {
			err = engine.DiskErr(cerr, "cannot write the PDF cache")
		}
	case eng == report.EnginePassthroughPDF: // with pageRanges, the only option a PDF takes
		tmp.Close()
		err = m.trimDoc(job, tmp.Name())
	case eng == report.EngineOffice:
		tmp.Close()
		if err = job.Print.CheckFor(job.Type); err != nil {
			return err
		}
		if err = checkPresentation(job.Src, job.Type); err == nil {
			err = m.office.Convert(m.ctx, job.ProjectID, job.Type, job.Src, tmp.Name())
		}
	default:
		tmp.Close()
		return report.Errorf(report.Conversion, "cannot convert files of type %q", job.Type)
	}
	if err != nil {
		return err
	}
	if err := checkPDFFile(tmp.Name()); err != nil {
		return report.Wrap(report.Conversion, err, "the engine produced no valid PDF")
	}
	if err := m.cache.put(tmp.Name(), path); err != nil {
		return engine.DiskErr(err, "cannot write the PDF cache")
	}
	return nil
}

func (m *Manager) printDoc(job Job, out *os.File) error {
	src, err := os.ReadFile(job.Src)
	if err != nil {
		return report.Wrap(report.Storage, err, "the report file is missing")
	}
	leave, err := m.chrome.Enter(m.ctx, job.ProjectID)
	if err != nil {
		return err
	}
	defer leave()
	o := chromium.DocOpts(m.cfg.Paper, src)
	if job.Type.Info().Engine == report.EngineChromiumMarkdown {
		if err := job.Print.CheckFor(job.Type); err != nil {
			return err
		}
		// Under the gate and the job's deadline, in a process that dies at it.
		t0 := time.Now()
		if src, err = m.md.Render(m.ctx, src, m.cfg.JobTimeout); err != nil {
			return err
		}
		m.log.Debug("markdown render", "took", time.Since(t0))
		// Markdown's output may hold raw HTML: the engine runs none of its script.
		o = chromium.MarkdownOpts(m.cfg.Paper)
	}
	o.Apply(job.Print, m.waitMax())
	return m.chrome.Print(m.ctx, src, o, out)
}

// Prepare converts job in the background (convert on upload), so the first
// request is a cache hit. It never blocks: when background work is already
// at its bound, the job is left for the first request.
func (m *Manager) Prepare(job Job) {
	if job.Type.Info().Engine == report.EnginePassthroughPDF {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	select {
	case m.prepare <- struct{}{}:
	default:
		m.log.Debug("background conversion skipped: busy", "report", job.ReportID)
		return
	}
	m.bg.Add(1)
	go func() {
		defer m.bg.Done()
		defer func() { <-m.prepare }()
		f, err := m.PDF(m.ctx, job)
		if err != nil {
			m.log.Info("background conversion failed", "report", job.ReportID, "err", err)
			return
		}
		f.Close()
	}()
}

// Forget deletes every cached PDF of the report and the failures
// remembered for it.
func (m *Manager) Forget(reportID int64) error {
	m.fails.forget(reportID)
	if err := m.cache.forget(reportID); err != nil {
		return report.Wrap(report.Storage, err, "cannot delete cached PDFs")
	}
	return nil
}

// Close stops the engines, killing their process groups, and waits for them.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	m.mu.Unlock()
	m.cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); m.chrome.Close() }()
	go func() { defer wg.Done(); m.office.Close() }()
	wg.Wait()
	m.bg.Wait()
	m.md.Close()
	return os.RemoveAll(m.workDir)
}

var workSeq atomic.Int64

// makeWorkDir creates the directory for engine profiles,
// <tmp>/reportd-convert-<pid>-<n>, and first removes those of processes that
// are gone: a daemon killed with SIGKILL cannot clean up after itself.
func makeWorkDir() (string, error) {
	tmp := os.TempDir()
	if old, err := filepath.Glob(filepath.Join(tmp, "reportd-convert-*-*")); err == nil {
		for _, dir := range old {
			pid, err := strconv.Atoi(strings.Split(filepath.Base(dir), "-")[2])
			if err == nil && pid != os.Getpid() && !engine.Alive(pid) {
				os.RemoveAll(dir)
			}
		}
	}
	dir := filepath.Join(tmp, fmt.Sprintf("reportd-convert-%d-%d", os.Getpid(), workSeq.Add(1)))
	return dir, os.MkdirAll(dir, 0o700)
}

// chromiumConfig is what the Chromium engine reads of the configuration.
func (m *Manager) chromiumConfig() *chromium.Config {
	c := &m.cfg
	return &chromium.Config{
		ChromiumPath: c.ChromiumPath, ChromiumTabs: c.ChromiumTabs, ChromiumSpares: c.ChromiumSpares,
		QueueSize: c.QueueSize, JobTimeout: c.JobTimeout, ScriptWait: c.ScriptWait, SiteTimeout: c.SiteTimeout,
		MaxJobsPerWorker: c.MaxJobsPerWorker, MaxWorkerRSS: c.MaxWorkerRSS, AllowNetwork: c.AllowNetwork,
	}
}
