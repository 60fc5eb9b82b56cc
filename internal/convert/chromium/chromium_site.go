package chromium

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"strings"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// printSite prints the pages of sj in one page of its own (a fresh browser
// context, disposed after the job, as for every job), each under the
// deadline of a job: the entry alone, or with sj.all every in-site page
// reachable from it, breadth first in link order, up to sj.maxPages, and
// every part of multi-part pages. It returns the printed parts in order.
// A browser that died since its last job is only noticed when it is used;
// then the job runs once more on a fresh browser, as a single page's does.
//
// A walk (sj.all) takes a turn at the engine for each page (siteTurn), not
// one for the whole walk, and its budget, convert.site_timeout, counts the
// time its pages hold the engine: a walk waiting for its turn costs nobody
// anything, and a hostile one (pages that never go quiet) holds a slot for
// one page at a time, at most up to its budget.
func (c *chromium) printSite(ctx context.Context, sj siteJob, o printOpts) ([]sitePart, error) {
	for attempt := 0; ; attempt++ {
		parts, crashed, err := c.printSiteOnce(ctx, sj, o)
		if !crashed || attempt > 0 {
			return parts, err
		}
	}
}

// siteWallFactor bounds a walk's wall time, its turns' waits included, at
// this many times its engine-time budget.
const siteWallFactor = 4

// siteTurn waits for a walk's page's turn: a place in the site lane (at
// most ChromiumTabs-1 walk pages print at once, so a slot always remains
// for other jobs), then a slot of the gate. leave gives both back.
func (c *chromium) siteTurn(ctx context.Context, project int64) (leave func(), err error) {
	leaveLane, err := c.siteLane.Enter(ctx, project)
	if err != nil {
		return nil, err
	}
	leaveGate, err := c.gate.Enter(ctx, project)
	if err != nil {
		leaveLane()
		return nil, err
	}
	return func() { leaveGate(); leaveLane() }, nil
}

func (c *chromium) printSiteOnce(ctx context.Context, sj siteJob, o printOpts) (_ []sitePart, crashed bool, _ error) {
	c.printing.Add(1)
	defer c.printing.Add(-1)
	p, err := c.take()
	if err != nil {
		return nil, false, err
	}
	b := p.b
	var bytes int64
	defer func() { c.release(b, true, bytes > int64(c.largeJob)) }()
	defer p.dispose()
	mark, end := c.sup.Watch(b)
	defer end()
	// Each page has the deadline of a job; the whole walk has its budget
	// of engine time, and a bound on its wall time.
	wall := c.cfg.SiteTimeout
	if sj.all {
		wall *= siteWallFactor
	}
	sctx, cancel := context.WithTimeout(p.ctx, wall)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	srv := newSiteServe(sctx, sj.files, c.cfg.AllowNetwork)
	p.site.Store(srv)

	var parts []sitePart
	var used time.Duration // engine time of the walk's pages
	queue, seen := []string{sj.entry}, map[string]bool{sj.entry: true}
	pages := 0
	overBudget := func() error {
		return report.Errorf(report.Conversion, "the site's PDF needed more than %s of engine time (convert.site_timeout) after %d of %d pages found so far; print fewer pages (convert.site_max_pages) or allow more time",
			c.cfg.SiteTimeout, pages, len(queue))
	}
	// A walk past its wall time waited for turns more than it printed: the
	// engines were busy, which is nobody's failure to remember.
	overWall := func() error {
		return report.Errorf(report.Unavailable, "the site's PDF waited and printed for more than %s (%d × convert.site_timeout) after %d of %d pages found so far; the engines are busy: try again later",
			wall, siteWallFactor, pages, len(queue))
	}
	for i := 0; i < len(queue) && pages < sj.maxPages; i++ {
		timeout := c.cfg.JobTimeout
		leave := func() {}
		if sj.all {
			left := c.cfg.SiteTimeout - used
			if left <= 0 {
				return nil, false, overBudget()
			}
			timeout = min(timeout, left)
			if leave, err = c.siteTurn(sctx, sj.project); err != nil {
				if ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
					return nil, false, overWall()
				}
				return nil, false, err
			}
		}
		start := time.Now()
		jctx, jcancel := context.WithTimeout(sctx, timeout)
		pp, links, err := c.sitePage(jctx, srv, sj, queue[i], o, len(parts))
		if ferr := srv.failed(); ferr != nil {
			// A file could not be read (a store or bucket fault): the page
			// may have printed without it, or failed for it.
			err = ferr
		}
		switch {
		case report.IsKind(err, report.Storage) || report.IsKind(err, report.Unavailable):
			// not the site's fault, nor the engine's: said as it is
		case err == nil:
		case p.crashed.Load() && ctx.Err() == nil:
			err = c.crashErr(err, mark, "the site's page "+queue[i]) // the walk's page is gone: it ends here
		default:
			crashed, err = c.jobErr(ctx, jctx, b, err, timeout, "the site's page "+queue[i], -1)
		}
		jcancel()
		if sj.all {
			used += time.Since(start)
			leave()
			idle(sctx) // the page's scripts stop while the walk waits for its next turn
		}
		switch {
		case err == nil:
		case report.IsKind(err, report.Storage) || report.IsKind(err, report.Unavailable):
			return nil, false, err
		case !crashed && ctx.Err() == nil && sj.all && used >= c.cfg.SiteTimeout:
			return nil, false, overBudget()
		case !crashed && errors.Is(sctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil && sj.all:
			return nil, false, overWall()
		case !crashed && errors.Is(sctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
			return nil, false, report.Errorf(report.Conversion, "the site's PDF took longer than %s (convert.site_timeout) after %d of %d pages found so far; print fewer pages (convert.site_max_pages) or allow more time",
				c.cfg.SiteTimeout, pages, len(queue))
		case i > 0:
			return nil, crashed, report.Wrap(report.KindOf(err), err, fmt.Sprintf("page %s: %s", queue[i], report.MessageOf(err)))
		default:
			return nil, crashed, err
		}
		if pp == nil { // a linked page that is not there
			continue
		}
		pages++
		for _, part := range pp {
			if fi, err := os.Stat(part.File); err == nil {
				bytes += fi.Size()
			}
		}
		parts = append(parts, pp...)
		for _, l := range links {
			if !seen[l] {
				seen[l] = true
				queue = append(queue, l)
			}
		}
	}
	c.done.Add(1)
	if pages < len(queue) && pages >= sj.maxPages {
		c.log.Info("site PDF stopped at the page cap", "pages", pages, "found", len(queue), "cap", sj.maxPages)
	}
	return parts, false, nil
}

// idle leaves the page (about:blank), so its scripts and requests stop
// until the walk's next page. Best effort, briefly bounded: the next
// navigation replaces the page anyway.
func idle(ctx context.Context) {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	chromedp.Do(ictx, chromedp.Navigate("about:blank"))
}

// sitePage loads the site's page at pth, waits until it is ready and prints
// it (or each of its parts) into sj.dir, numbering files from n. It returns
// nil parts for a linked page that is missing, and with sj.all the page's
// in-site links.
func (c *chromium) sitePage(ctx context.Context, srv *siteServe, sj siteJob, pth string, o printOpts, n int) ([]sitePart, []string, error) {
	u := srv.url(pth)
	if err := chromedp.Do(ctx, chromedp.Navigate(u)); err != nil {
		return nil, nil, err
	}
	loaded := srv.started.Load()
	if st := srv.docStatus(pth); st != 200 {
		if pth == sj.entry {
			return nil, nil, report.Errorf(report.Conversion, "the site's entry page %s is missing", pth)
		}
		return nil, nil, nil
	}
	if err := c.siteReady(ctx, srv, loaded, sj.generator, o, pth == sj.entry); err != nil {
		return nil, nil, err
	}
	title, err := evalJS[string](ctx, titleJS)
	if err != nil {
		return nil, nil, err
	}
	if title == "" {
		title = pth
	}
	if !sj.all {
		if ok, err := evalJS[bool](ctx, `!!(document.getElementById("files") && document.querySelector("pre.file"))`); err == nil && ok {
			if _, err := showPanes(ctx); err != nil {
				return nil, nil, err
			}
		}
		part := sitePart{File: sj.partFile(n), Title: title}
		return []sitePart{part}, nil, printFile(ctx, o, part.File)
	}
	var links []string
	raw, err := evalJS[[]string](ctx, linksJS)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range raw {
		if p, ok := sitePagePath(l); ok {
			links = append(links, p)
		}
	}
	for _, h := range partHooks {
		list, err := evalJS[[]struct{ ID, Title string }](ctx, h.list)
		if err != nil {
			return nil, nil, err
		}
		if len(list) == 0 {
			continue
		}
		var parts []sitePart
		for _, it := range list {
			if _, err := evalJS[bool](ctx, h.show(it.ID)); err != nil {
				return nil, nil, err
			}
			t := it.Title
			if t == "" {
				t = it.ID
			}
			part := sitePart{File: sj.partFile(n + len(parts)), Title: t}
			if err := printFile(ctx, o, part.File); err != nil {
				return nil, nil, err
			}
			parts = append(parts, part)
		}
		return parts, links, nil
	}
	part := sitePart{File: sj.partFile(n), Title: title}
	return []sitePart{part}, links, printFile(ctx, o, part.File)
}

// sitePagePath turns a link's URL path into a site path, keeping only pages
// (.html, .htm, or a folder's index.html).
func sitePagePath(escaped string) (string, bool) {
	p, err := url.PathUnescape(escaped)
	if err != nil {
		return "", false
	}
	p = sitePath(p)
	switch strings.ToLower(path.Ext(p)) {
	case ".html", ".htm":
		return p, true
	}
	return "", false
}

// sitePath turns a URL's (unescaped) path into a site path: clean,
// relative to the root, never above it; a folder names its index.html.
func sitePath(p string) string {
	c := strings.TrimPrefix(path.Clean("/"+p), "/")
	if c == "" || strings.HasSuffix(p, "/") {
		c = strings.TrimPrefix(c+"/index.html", "/")
	}
	return c
}

// siteReady waits until the loaded page is ready to print (site_ready.go).
// The request's own waitForSelector and waitForExpression apply to the
// entry page (as to a single-file report): what one page of a site waits
// for, its other pages rarely show.
// loaded is the count of the site's requests when the page's load event had fired.
func (c *chromium) siteReady(ctx context.Context, srv *siteServe, loaded int64, generator string, o printOpts, entry bool) error {
	end := time.Now().Add(max(o.waitMax, siteQuietWindow))
	if c.cfg.ScriptWait > 0 {
		// Fonts, then scripts still drawing (quiet.js), at most ScriptWait.
		if _, err := evalJS[bool](ctx, loadedJS(c.cfg.ScriptWait.Milliseconds())); err != nil {
			return err
		}
	}
	if err := srv.quiet(ctx, loaded, siteQuietStatic, siteQuietWindow, end); err != nil {
		return err
	}
	if sel := readySelector(generator); sel != "" {
		q, _ := json.Marshal(sel)
		w := o
		w.waitSelector, w.waitExpression = "", "document.querySelector("+string(q)+") !== null"
		w.waitMax = min(readySelectorWait, max(o.waitMax, time.Second))
		if err := waitFor(ctx, w); err != nil && !report.IsKind(err, report.Conversion) {
			return err // not there in time: printed as it is
		}
	}
	if entry && (o.waitSelector != "" || o.waitExpression != "") {
		if err := waitFor(ctx, o); err != nil {
			return err
		}
	}
	// What the selectors' appearance started (a table drawn from data).
	if c.cfg.ScriptWait > 0 {
		if _, err := evalJS[bool](ctx, settleJS(c.cfg.ScriptWait.Milliseconds())); err != nil {
			return err
		}
	}
	return nil
}

// printFile prints the loaded page into a new file at name.
func printFile(ctx context.Context, o printOpts, name string) error {
	f, err := os.Create(name)
	if err != nil {
		return engine.DiskErr(err, "cannot write the PDF cache")
	}
	err = printPDF(ctx, o, f, nil)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = engine.DiskErr(cerr, "cannot write the PDF cache")
	}
	return err
}

// evalJS evaluates expr in the page, awaiting a promise, and decodes its value.
func evalJS[T any](ctx context.Context, expr string) (T, error) {
	var v T
	res, err := chromedp.Call(ctx, runtime.Evaluate,
		runtime.EvaluateParams{Expression: expr, AwaitPromise: ptr(true), ReturnByValue: ptr(true)})
	if err != nil {
		return v, err
	}
	if res.ExceptionDetails != nil {
		return v, fmt.Errorf("script failed: %s", exceptionText(res.ExceptionDetails))
	}
	if res.Result != nil && len(res.Result.Value) > 0 {
		err = json.Unmarshal(res.Result.Value, &v)
	}
	return v, err
}
