package chromium

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// This file is the engine's API for package convert, whose Manager routes
// HTML, Markdown and site jobs here (through its gate) and keeps the
// cache, the failure memory, variants, page trimming and site merges.

// Engine is the Chromium engine: one warm, sandboxed browser (chromium.go).
type Engine = chromium

// Config is what the engine reads of convert.Config, under the same names;
// convert.New fills it.
type Config struct {
	ChromiumPath     string
	ChromiumTabs     int
	ChromiumSpares   int
	QueueSize        int
	JobTimeout       time.Duration
	ScriptWait       time.Duration
	SiteTimeout      time.Duration
	MaxJobsPerWorker int
	MaxWorkerRSS     int64
	AllowNetwork     bool
}

// New returns the engine; it starts no browser (Warm does, or the first job).
func New(cfg *Config, log *slog.Logger, met *engine.Metrics, box *engine.Sandbox, workDir string) *Engine {
	return newChromium(cfg, log, met, box, workDir)
}

// Usable reports why the engine cannot run here (not installed, no
// sandbox), or nil.
func (c *chromium) Usable() error { return c.usable() }

// Enter waits for a job's slot once the engine is usable; leave gives it back.
func (c *chromium) Enter(ctx context.Context, projectID int64) (leave func(), err error) {
	return c.enter(ctx, projectID)
}

// Warm starts the browser and makes the spare pages.
func (c *chromium) Warm() { c.warm() }

// Print renders body, an HTML document, to a PDF written to out; the
// caller holds a slot (Enter).
func (c *chromium) Print(ctx context.Context, body []byte, o PrintOpts, out io.Writer) error {
	return c.print(ctx, body, o, out)
}

// Close stops the browser; nothing starts after it.
func (c *chromium) Close() { c.close() }

// Gate is the engine's gate (slots, queue, per-project turns); jobs that
// use Chromium's time without printing through it (Markdown views, page
// trimming) wait there too.
func (c *chromium) Gate() *engine.Gate { return c.gate }

// Supervisor runs the browser (tests and EngineRSS read it).
func (c *chromium) Supervisor() *engine.Supervisor[*browser] { return c.sup }

// Sandbox is the sandbox the browser runs in.
func (c *chromium) Sandbox() *engine.Sandbox { return c.box }

// Installed reports whether Chromium's program was found.
func (c *chromium) Installed() bool { return c.missing == nil }

// Counts for tests: browsers launched, browsers replaced, documents printed.
func (c *chromium) Launches() int64 { return c.launches.Load() }
func (c *chromium) Restarts() int64 { return c.restarts.Load() }
func (c *chromium) Prints() int64   { return c.done.Load() }

// LargeJob is the input or output size that makes a job large (memcheck.go);
// SetLargeJob changes it (tests).
func (c *chromium) LargeJob() int     { return c.largeJob }
func (c *chromium) SetLargeJob(n int) { c.largeJob = n }

// PrintOpts are the print settings of one job.
type PrintOpts = printOpts

// DocOpts are an HTML document's defaults on paper: a known multi-pane
// report (body; chromium_panes.go) prints every pane.
func DocOpts(paper string, body []byte) PrintOpts {
	return printOpts{params: htmlPrintParams(paper), allPanes: allPanes(body)}
}

// SiteOpts are the defaults of a site's pages on paper.
func SiteOpts(paper string) PrintOpts { return printOpts{params: htmlPrintParams(paper)} }

// MarkdownOpts are rendered Markdown's defaults on paper; none of the
// document's script runs.
func MarkdownOpts(paper string) PrintOpts {
	return printOpts{params: markdownPrintParams(paper), noScript: true}
}

// Apply sets the requested options over the defaults; waitMax bounds
// waitForSelector and waitForExpression.
func (o *printOpts) Apply(p report.PrintOptions, waitMax time.Duration) { o.apply(p, waitMax) }

// AllPanes reports whether body is a known multi-pane report.
func AllPanes(body []byte) bool { return allPanes(body) }

// The embedded inputs of every print, for convert's cache key (variantOf).
// VariantInputs hands them out to change (convert's test that the key
// follows them): the scripts by file name and the sites' ready selectors.
func VariantInputs() (scripts map[string]*string, readySel map[string]string) {
	return map[string]*string{"quiet.js": &quietJS, "panes.js": &panesJS}, readySelectors
}

// SiteAnswers bounds the files of one site job read and answered at once
// (chromium_siteserve.go).
const SiteAnswers = siteAnswers

func QuietJS() string     { return quietJS }
func PanesJS() string     { return panesJS }
func SiteScripts() string { return siteScripts() }

// SiteFiles opens one file of a site by its path relative to the site root
// ("index.html", "css/a.css"), with its content type ("" picks none). A
// missing file is an error that errors.Is fs.ErrNotExist or of kind
// report.NotFound: the page then gets a 404, as from a web server.
type SiteFiles func(ctx context.Context, path string) (io.ReadCloser, string, error)

// missing reports whether err from SiteFiles means "no such file".
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || report.IsKind(err, report.NotFound)
}

// SitePart is one printed page or part of a site job: a PDF of its own and
// the title of its bookmark.
type SitePart = sitePart

type sitePart struct {
	File  string `json:"file"`
	Title string `json:"title"`
}

// SiteJob is what the engine needs to print a site.
type SiteJob struct {
	Entry     string
	Files     SiteFiles
	Generator string
	All       bool // scope=site: follow links, print every part
	MaxPages  int  // pages printed at most (convert.site_max_pages)
	Dir       string
	Project   int64 // whose turn each page of a walk takes (engine/gate.go)
}

type siteJob struct {
	entry     string
	files     SiteFiles
	generator string
	all       bool
	maxPages  int
	dir       string
	project   int64
}

func (s siteJob) partFile(n int) string { return fmt.Sprintf("%s/part-%05d.pdf", s.dir, n) }

// PrintSite prints a site's entry page, or with All every page it links
// (chromium_site.go), into parts in j.Dir.
func (c *chromium) PrintSite(ctx context.Context, j SiteJob, o PrintOpts) ([]SitePart, error) {
	return c.printSite(ctx, siteJob{entry: j.Entry, files: j.Files, generator: j.Generator,
		all: j.All, maxPages: j.MaxPages, dir: j.Dir, project: j.Project}, o)
}
