package convert

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/fetch"
	cdpio "github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/report"
)

// quietJS is installed in every tab before any page script runs. It tracks
// short timers, animation frames and fetches so that, after the load event,
// the print waits only while a page is still drawing (a chart library's
// animation, say), and not a fixed delay. See chromium.settle.
//
//go:embed quiet.js
var quietJS string

// docHost is the origin uploaded HTML is served from inside the browser. The
// document never gets a file:// origin, so it cannot read local files; its
// relative links point at this host, which serves nothing else.
const docHost = "reportd.invalid"

const disabledFeatures = "Translate,BlinkGenPropertyTrees,BackForwardCache," +
	"ProactivelySwapBrowsingInstance,RenderDocument,MediaRouter,OptimizationHints"

// browserStartTimeout bounds a browser start and a tab's creation.
const browserStartTimeout = 60 * time.Second

// chromium is one warm browser with a pool of reused tabs. A tab is the unit
// of work: a job takes one, navigates it, prints, and puts it back.
type chromium struct {
	cfg     *Config
	log     *slog.Logger
	met     *metrics
	workDir string // each browser gets a fresh profile under it
	path    string
	missing error
	gate    *gate
	tabs    chan *tab // idle tabs; a tab whose browser is gone is rebuilt on use
	quit    chan struct{}
	wg      sync.WaitGroup // browser shutdowns in flight

	mu  sync.Mutex
	cur *browser

	seq      atomic.Int64 // document URLs, unique per navigation
	launches atomic.Int64
	done     atomic.Int64 // prints, for tests
	replaced atomic.Int64 // prints whose document replaced an inert page's, for tests
	restarts atomic.Int64
}

type browser struct {
	ctx      context.Context // the browser's root chromedp context
	cancel   func()          // closes the browser and its allocator
	pid      int
	jobs     int // under chromium.mu
	inflight int // under chromium.mu
	retired  bool
	stopOnce sync.Once
}

type tab struct {
	s     *session // the open page; nil until first use or after a failure
	doc   atomic.Pointer[servedDoc]
	allow bool // AllowNetwork
	// inert: the page open in s was served from docHost and could run no
	// code (see canReuse), so the next inert document may replace its
	// content in place instead of navigating. Only the job holding the tab
	// touches it.
	inert bool
}

// session is one open page of one browser. Its fields never change, so the
// event goroutine can read them without locks.
type session struct {
	t      *tab
	b      *browser
	ctx    context.Context
	cancel context.CancelFunc
}

type servedDoc struct {
	url  string
	body []byte
}

func newChromium(cfg *Config, log *slog.Logger, met *metrics, workDir string) *chromium {
	c := &chromium{
		workDir: workDir,
		cfg:     cfg,
		log:     log,
		met:     met,
		gate:    newGate(cfg.ChromiumTabs, cfg.QueueSize, met.queueDepth("chromium")),
		tabs:    make(chan *tab, cfg.ChromiumTabs),
		quit:    make(chan struct{}),
	}
	c.path = cfg.ChromiumPath
	if c.path == "" {
		for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser"} {
			if p, err := exec.LookPath(name); err == nil {
				c.path = p
				break
			}
		}
	}
	if _, err := exec.LookPath(c.path); c.path == "" || err != nil {
		c.missing = report.Errorf(report.Conversion,
			"HTML and Markdown conversion need Chromium, which is not installed: install chromium-headless-shell")
	}
	for range cfg.ChromiumTabs {
		c.tabs <- &tab{allow: cfg.AllowNetwork}
	}
	return c
}

// warm starts the browser and opens every tab, so the first jobs are fast.
func (c *chromium) warm() {
	if c.missing != nil {
		c.log.Warn("HTML conversion disabled", "err", c.missing)
		return
	}
	var ts []*tab
	for range cap(c.tabs) {
		select {
		case t := <-c.tabs:
			ts = append(ts, t)
		default:
		}
	}
	defer func() {
		for _, t := range ts {
			c.tabs <- t
		}
	}()
	b, err := c.browserFor()
	if err != nil {
		c.log.Warn("Chromium warm-up failed", "err", err)
		return
	}
	defer c.release(b, false)
	for _, t := range ts {
		if err := c.ready(t, b); err != nil {
			c.log.Warn("Chromium warm-up failed", "err", err)
			return
		}
	}
}

// browserFor returns the current browser, starting one if there is none or
// the last one died. It counts the caller as in flight.
func (c *chromium) browserFor() (*browser, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b := c.cur; b != nil {
		select {
		case <-b.ctx.Done():
			c.log.Warn("Chromium exited; starting a new one")
			c.restarts.Add(1)
			c.met.restarted("chromium", "crash")
			c.retireLocked(b)
		default:
			b.inflight++
			return b, nil
		}
	}
	select {
	case <-c.quit:
		return nil, report.Errorf(report.Unavailable, "conversion engines are shutting down")
	default:
	}
	b, err := c.launch()
	if err != nil {
		return nil, err
	}
	c.cur = b
	b.inflight++
	return b, nil
}

func (c *chromium) launch() (*browser, error) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(c.path),
		chromedp.Flag("no-sandbox", true), // reportd runs as root in containers
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("font-render-hinting", "none"),
		// A print farm never goes back: no back-forward cache, and no new
		// browsing instance per navigation, so a reused tab stays cheap.
		chromedp.Flag("disable-features", disabledFeatures),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			// Own group so a kill reaches every helper process; die with reportd.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		}),
	)
	if shmLarge() {
		// chromedp's defaults move shared memory to /tmp for containers
		// whose /dev/shm is tiny; where it is big, memory beats a disk.
		opts = append(opts, chromedp.Flag("disable-dev-shm-usage", false))
	}
	if c.cfg.AllowNetwork {
		// The document's origin is a made-up public host; Chromium's Private
		// Network Access checks would then refuse intranet and loopback
		// addresses, which is where an intranet report's assets live.
		opts = append(opts, chromedp.Flag("disable-features", disabledFeatures+
			",BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,"+
			"PrivateNetworkAccessRespectPreflightResults,LocalNetworkAccessChecks"))
	} else {
		// Belt and braces beside the request interception: WebSockets are not
		// seen by the Fetch domain, so send everything to a dead proxy.
		opts = append(opts,
			chromedp.ProxyServer("http://127.0.0.1:9"),
			chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	}
	// A fresh profile per browser, under the manager's work directory, so a
	// killed daemon leaves nothing behind that the next start does not sweep.
	profile := filepath.Join(c.workDir, fmt.Sprintf("chromium-%d", c.launches.Add(1)))
	opts = append(opts, chromedp.UserDataDir(profile))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	err := withDeadline(browserStartTimeout, bcancel, func() error { return chromedp.Do(bctx) })
	if err != nil {
		bcancel()
		acancel()
		os.RemoveAll(profile)
		return nil, report.Wrap(report.Conversion, err, "Chromium could not start")
	}
	b := &browser{ctx: bctx}
	if p := chromedp.FromContext(bctx).Browser.Process(); p != nil {
		b.pid = p.Pid
	}
	b.cancel = func() {
		// Kill first: a graceful close waits on the browser, which may be
		// the thing that hangs. The profile is throwaway anyway.
		killGroup(b.pid)
		bcancel()
		acancel()
		os.RemoveAll(profile)
	}
	c.log.Debug("Chromium ready", "pid", b.pid, "path", c.path)
	return b, nil
}

// retireLocked stops handing out b; it shuts down once its last job ends.
func (c *chromium) retireLocked(b *browser) {
	if c.cur == b {
		c.cur = nil
	}
	b.retired = true
	if b.inflight == 0 {
		c.shutdown(b)
	}
}

func (c *chromium) shutdown(b *browser) {
	b.stopOnce.Do(func() {
		select {
		case <-c.quit: // closing: close waits for it right here
			b.cancel()
			return
		default:
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			b.cancel()
		}()
	})
}

// release ends a job on b, and retires b after too many jobs or too much
// memory. A replacement starts in the background, ahead of the next job.
func (c *chromium) release(b *browser, job bool) {
	c.mu.Lock()
	b.inflight--
	if job {
		b.jobs++
	}
	reason := ""
	switch {
	case b.retired || !job:
	case b.jobs >= c.cfg.MaxJobsPerWorker:
		reason = "jobs"
	}
	// Memory is measured every 8th job, outside the lock: reading /proc
	// takes milliseconds that other jobs should not wait for.
	measure := reason == "" && job && !b.retired && c.cfg.MaxWorkerRSS > 0 && b.jobs%8 == 0
	if reason == "" && b.retired && b.inflight == 0 {
		c.shutdown(b)
	}
	c.mu.Unlock()
	if measure && overMemory(b.pid, c.cfg.MaxWorkerRSS) {
		reason = "memory"
	}
	if reason == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.retired {
		return
	}
	c.restarts.Add(1)
	c.met.restarted("chromium", reason)
	c.log.Info("Chromium replaced", "reason", reason, "jobs", b.jobs)
	c.retireLocked(b)
	go c.warm()
}

// ready makes t a live page of browser b.
func (c *chromium) ready(t *tab, b *browser) error {
	if t.s != nil && t.s.b == b && t.s.ctx.Err() == nil {
		return nil
	}
	t.close()
	s := &session{t: t, b: b}
	s.ctx, s.cancel = chromedp.NewContext(b.ctx, chromedp.WithListener(s.onEvent))
	err := withDeadline(browserStartTimeout, s.cancel, func() error {
		return chromedp.Do(s.ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{}); err != nil {
				return err
			}
			_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
				page.AddScriptToEvaluateOnNewDocumentParams{Source: quietJS})
			return err
		}))
	})
	if err != nil {
		s.cancel()
		return report.Wrap(report.Conversion, err, "Chromium could not open a tab")
	}
	t.s = s
	return nil
}

func (t *tab) close() {
	if s := t.s; s != nil {
		// Closing a page whose renderer hangs waits on the browser: never block a job on it.
		go s.cancel()
	}
	t.s = nil
	t.inert = false
}

// onEvent runs on the tab's reader goroutine; it must not send commands, so
// answers go out from their own goroutines.
func (s *session) onEvent(ev any) {
	switch e := ev.(type) {
	case *fetch.EventRequestPaused:
		go s.answer(e)
	case *page.EventJavascriptDialogOpening:
		// alert() and friends would stall the page until answered.
		go chromedp.Call(s.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	}
}

// answer serves the document itself from memory, lets other requests out
// only when AllowNetwork is set and only to http(s), and fails the rest.
func (s *session) answer(e *fetch.EventRequestPaused) {
	ctx, t := s.ctx, s.t
	if d := t.doc.Load(); d != nil && e.Request.URL == d.url {
		ct := "text/html"
		if utf8.Valid(d.body) {
			ct += "; charset=utf-8"
		}
		chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{
			RequestID:    e.RequestID,
			ResponseCode: 200,
			ResponseHeaders: []*fetch.HeaderEntry{
				{Name: "Content-Type", Value: ct},
				{Name: "Cache-Control", Value: "no-store"},
			},
			Body: d.body,
		})
		return
	}
	if u, err := url.Parse(e.Request.URL); err == nil && t.allow &&
		(u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != docHost {
		chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		return
	}
	chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{
		RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient,
	})
}

// printOpts are the Page.printToPDF settings of one job.
type printOpts struct {
	params page.PrintToPDFParams
	settle bool // wait for scripts to finish drawing
}

// print renders body (an HTML document) to PDF and writes it to out. The
// caller holds a slot of c.gate (Manager.printDoc).
func (c *chromium) print(ctx context.Context, body []byte, o printOpts, out io.Writer) error {
	if c.missing != nil {
		return c.missing
	}
	var t *tab
	select {
	case t = <-c.tabs:
	case <-ctx.Done():
		return report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
	case <-c.quit:
		return report.Errorf(report.Unavailable, "conversion engines are shutting down")
	}
	defer func() { c.tabs <- t }()
	// A browser that died since its last job is only noticed when it is
	// used; then the job runs once more on a fresh browser.
	for attempt := 0; ; attempt++ {
		crashed, err := c.printOn(ctx, t, body, o, out)
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

// printOn runs one attempt on tab t; crashed reports that the browser died.
func (c *chromium) printOn(ctx context.Context, t *tab, body []byte, o printOpts, out io.Writer) (crashed bool, err error) {
	b, err := c.browserFor()
	if err != nil {
		return false, err
	}
	defer c.release(b, true)
	if err := c.ready(t, b); err != nil {
		// A browser that cannot open a tab is wedged: replace it as a whole.
		c.mu.Lock()
		if !b.retired {
			c.restarts.Add(1)
			c.met.restarted("chromium", "hang")
			c.log.Warn("Chromium cannot open a tab; replacing it", "err", err)
			c.retireLocked(b)
		}
		c.mu.Unlock()
		return false, err
	}

	timeout := c.cfg.JobTimeout
	jctx, cancel := context.WithTimeout(t.s.ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	err = c.render(jctx, t, body, o, out)
	if err == nil {
		c.done.Add(1)
		return false, nil
	}
	// The tab's state is unknown now: throw it away; a hung renderer dies with it.
	t.close()
	var re *report.Error
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) || b.ctx.Err() != nil && ctx.Err() == nil:
		c.mu.Lock()
		if !b.retired {
			c.restarts.Add(1)
			c.met.restarted("chromium", "crash")
			c.log.Warn("Chromium exited; starting a new one", "err", err)
			c.retireLocked(b)
		}
		c.mu.Unlock()
		return true, report.Wrap(report.Conversion, err, "Chromium crashed while rendering the document")
	case errors.As(err, &re):
		return false, err
	case errors.Is(err, context.DeadlineExceeded) || jctx.Err() != nil && ctx.Err() == nil:
		c.met.restarted("chromium-tab", "timeout")
		return false, report.Wrap(report.Conversion, err, fmt.Sprintf("conversion timed out after %s", timeout))
	case ctx.Err() != nil:
		return false, report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
	}
	return false, report.Wrap(report.Conversion, err, "Chromium failed to render the document")
}

func (c *chromium) render(ctx context.Context, t *tab, body []byte, o printOpts, out io.Writer) error {
	t0 := time.Now()
	reuse := !o.settle && canReuse(body)
	how := "navigate"
	if reuse && t.inert {
		how = "replace"
		c.replaced.Add(1)
		if err := replaceContent(ctx, body); err != nil {
			return err
		}
	} else {
		t.inert = false
		d := &servedDoc{url: fmt.Sprintf("http://%s/%d/report.html", docHost, c.seq.Add(1)), body: body}
		t.doc.Store(d)
		err := chromedp.Do(ctx, chromedp.Navigate(d.url))
		t.doc.Store(nil)
		if err != nil {
			return err
		}
		t.inert = reuse
	}
	t1 := time.Now()
	if o.settle && c.cfg.ScriptWait > 0 {
		expr := fmt.Sprintf("window.__reportdSettle ? window.__reportdSettle(%d) : true", c.cfg.ScriptWait.Milliseconds())
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr, chromedp.EvalAwaitPromise)); err != nil {
			return err
		}
	}
	t2 := time.Now()
	p := o.params
	p.TransferMode = page.PrintToPDFTransferModeReturnAsStream
	res, err := chromedp.Call(ctx, page.PrintToPDF, p)
	t3 := time.Now()
	defer func() {
		c.log.Debug("chromium print", "how", how, "load", t1.Sub(t0), "settle", t2.Sub(t1), "print", t3.Sub(t2), "read", time.Since(t3))
	}()
	if err != nil {
		if strings.Contains(err.Error(), "Printing failed") {
			return report.Wrap(report.Conversion, err, "Chromium could not print the document")
		}
		return err
	}
	defer chromedp.Call(ctx, cdpio.Close, cdpio.CloseParams{Handle: res.Stream})
	for {
		r, err := chromedp.Call(ctx, cdpio.Read, cdpio.ReadParams{Handle: res.Stream, Size: 1 << 20})
		if err != nil {
			return err
		}
		if _, err := out.Write(r.Data); err != nil {
			return err
		}
		if r.EOF {
			return nil
		}
	}
}

func (c *chromium) close() {
	select {
	case <-c.quit:
		return
	default:
		close(c.quit)
	}
	c.wg.Wait() // shutdowns that started before
	c.mu.Lock()
	b := c.cur
	c.cur = nil
	if b != nil {
		b.retired = true
	}
	c.mu.Unlock()
	if b != nil {
		c.shutdown(b) // synchronous now that quit is closed
	}
}

// withDeadline runs fn and cancels its context with cancel if it takes too long.
func withDeadline(d time.Duration, cancel func(), fn func() error) error {
	t := time.AfterFunc(d, cancel)
	defer t.Stop()
	return fn()
}
