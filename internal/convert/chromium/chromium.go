package chromium

import (
	"context"
	_ "embed"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// quietJS is installed in every page before any page script runs. It tracks
// short timers, animation frames and fetches so that, after the load event,
// the print waits only while a page is still drawing (a chart library's
// animation, say), and not a fixed delay. See chromium.render.
//
//go:embed quiet.js
var quietJS string

// docHost is the parent domain of the origins uploaded HTML is served from
// inside the browser: each job gets its own, j<N>.reportd.invalid. The
// document never gets a file:// origin, so it cannot read local files; its
// relative links point at its own host, which serves nothing else.
const docHost = "reportd.invalid"

// browserStartTimeout bounds a browser start and a page's creation.
const browserStartTimeout = 60 * time.Second

// chromium is one warm, sandboxed browser. A job runs in a page of its own:
// a fresh browser context (cookies, storage, cache, windows and timers of
// nobody else) that is disposed after that one job. Pages are made ahead of
// jobs, a few spares at a time, so a job does not wait for one.
//
// The browser's supervision is in chromium_browser.go, pages and their
// request interception in chromium_page.go, printing in chromium_render.go.
type chromium struct {
	cfg      *Config
	log      *slog.Logger
	met      *engine.Metrics
	box      *engine.Sandbox
	workDir  string // each browser gets a fresh profile under it
	path     string
	missing  error
	gate     *engine.Gate
	siteLane *engine.Gate  // pages of site walks at once: ChromiumTabs-1, at least 1 (chromium_site.go)
	spare    chan *jobPage // pages made ahead, each for one job
	spares   atomic.Int64  // pages ready in spare or being made
	making   atomic.Bool   // a refill is making pages
	helping  atomic.Bool   // a second maker, while idle (help)
	printing atomic.Int64  // jobs between take and the end of their print
	jobEnd   atomic.Int64  // when the last job released its browser (UnixNano)
	reaper   reaper        // frozen pages of finished jobs, disposed once idle (chromium_retire.go)
	quit     chan struct{}
	wg       sync.WaitGroup // browser shutdowns in flight
	quitMu   sync.Mutex     // orders a shutdown's wg.Add before close's Wait

	sup *engine.Supervisor[*browser] // starts, checks and replaces the browser

	seq      atomic.Int64 // document origins, unique per job
	launches atomic.Int64
	done     atomic.Int64 // prints, for tests
	restarts atomic.Int64

	largeJob int // bytes of input or output that make a job large (memcheck.go)
}

func newChromium(cfg *Config, log *slog.Logger, met *engine.Metrics, box *engine.Sandbox, workDir string) *chromium {
	c := &chromium{
		workDir: workDir,
		cfg:     cfg,
		log:     log,
		met:     met,
		box:     box,
		gate:    engine.NewGate(cfg.ChromiumTabs, cfg.QueueSize, met.QueueDepth("chromium")),
		spare:   make(chan *jobPage, cfg.ChromiumSpares),
		quit:    make(chan struct{}),

		largeJob: largeJobBytes,
	}
	// A walk waits here for each page's turn: one page per walk at most.
	c.siteLane = engine.NewGate(max(1, cfg.ChromiumTabs-1), cfg.QueueSize, nil)
	c.sup = c.newBrowserSupervisor()
	c.path = cfg.ChromiumPath
	if c.path == "" {
		for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser"} {
			if p, err := exec.LookPath(name); err == nil {
				c.path = p
				break
			}
		}
	}
	if p, err := engine.AbsPath(c.path); c.path == "" || err != nil {
		c.missing = engine.Fault(report.Errorf(report.Conversion,
			"HTML and Markdown conversion need Chromium, which is not installed: install chromium-headless-shell"))
	} else {
		c.path = p
	}
	return c
}

// usable reports why the engine cannot run, or nil.
func (c *chromium) usable() error {
	if c.missing != nil {
		return c.missing
	}
	return c.box.Ready()
}

// enter waits for a job's slot of the conversion gate once the engine is
// usable; leave gives the slot back.
func (c *chromium) enter(ctx context.Context, projectID int64) (leave func(), err error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	return c.gate.Enter(ctx, projectID)
}

// warm starts the browser and makes the spare pages, so the first jobs are fast.
func (c *chromium) warm() {
	if err := c.usable(); err != nil {
		c.log.Warn("HTML conversion disabled", "err", err)
		return
	}
	b, err := c.browserFor()
	if err != nil {
		c.log.Warn("Chromium warm-up failed", "err", err)
		return
	}
	c.release(b, false, false)
	c.refill()
}

// print renders body (an HTML document) to PDF and writes it to out. The
// caller holds a slot of c.gate (Manager.printDoc).
func (c *chromium) print(ctx context.Context, body []byte, o printOpts, out io.Writer) error {
	if err := c.usable(); err != nil {
		return err
	}
	// A browser that died since its last job is only noticed when it is
	// used; then the job runs once more on a fresh browser.
	for attempt := 0; ; attempt++ {
		crashed, err := c.printOnce(ctx, body, o, out)
		if !crashed || attempt > 0 {
			return err
		}
		if f, ok := out.(interface {
			Truncate(int64) error
			Seek(int64, int) (int64, error)
		}); ok {
			f.Truncate(0)
			f.Seek(0, io.SeekStart)
		}
	}
}

func (c *chromium) close() {
	select {
	case <-c.quit:
		return
	default:
	}
	// No idle check or job starts a browser from now on; the current one
	// stops, in use or not (its pages die with it).
	c.sup.Close()
	c.quitMu.Lock()
	select {
	case <-c.quit:
	default:
		close(c.quit)
	}
	c.quitMu.Unlock()
	c.wg.Wait() // shutdowns that started before
}

// withDeadline runs fn and cancels its context with cancel if it takes too long.
func withDeadline(d time.Duration, cancel func(), fn func() error) error {
	t := time.AfterFunc(d, cancel)
	defer t.Stop()
	return fn()
}
