package chromium

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/inspector"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// jobPage is a single-use tab: a target in a browser context of its own, with
// request interception on and quiet.js installed. One job uses it, then it is
// disposed with its context, so nothing a document leaves behind (windows,
// timers, storage, cache, service workers) meets another document.
type jobPage struct {
	b      *browser
	ctx    context.Context
	cancel context.CancelFunc
	allow  bool   // AllowNetwork
	origin string // http://j<n>.reportd.invalid, this page's alone
	doc    atomic.Pointer[servedDoc]
	site   atomic.Pointer[siteServe] // a site job's files, under its own origin
	// crashed: the page's renderer died (killed over the memory cap,
	// memcap.go, or crashed); the page is cancelled, ending its job's calls,
	// which would otherwise wait for a renderer that never answers.
	crashed atomic.Bool
}

type servedDoc struct {
	url  string
	body []byte
}

// newPage makes a page in browser b, which the caller holds in flight.
func (c *chromium) newPage(b *browser) (*jobPage, error) {
	p := &jobPage{b: b, allow: c.cfg.AllowNetwork, origin: fmt.Sprintf("http://j%d.%s", c.seq.Add(1), docHost)}
	p.ctx, p.cancel = chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(p.onEvent))
	var t1, t2 time.Time
	t0 := time.Now()
	err := withDeadline(browserStartTimeout, p.cancel, func() error {
		return chromedp.Do(p.ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			t1 = time.Now()
			if err := quietDomains(ctx); err != nil {
				return err
			}
			if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{}); err != nil {
				return err
			}
			if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
				page.AddScriptToEvaluateOnNewDocumentParams{Source: quietJS}); err != nil {
				return err
			}
			// Open the page's origin now, with an empty document: the job's
			// navigation is then same-origin and reuses this renderer
			// process, instead of starting one while the user waits.
			if err := p.load(ctx, "/", warmDoc()); err != nil {
				return err
			}
			t2 = time.Now()
			// No print ahead of the job: it used to pay a renderer's
			// first print here, but that costs more CPU (~19 ms a job,
			// 162 vs 143 ms per job in all) than it saves the job, and
			// on 2 cores CPU is what back-to-back jobs wait for
			// (BENCHMARKS.md, 2026-11-24).
			return nil
		}))
	})
	if err != nil {
		go p.cancel()
		return nil, engine.Fault(report.Wrap(report.Conversion, err, "Chromium could not open a page"))
	}
	// target: Target.createBrowserContext, createTarget (a new renderer),
	// attach and chromedp's domain set-up; load: the origin's warm document.
	c.log.Debug("chromium page", "target", t1.Sub(t0), "load", t2.Sub(t1))
	return p, nil
}

// quietDomains turns off the protocol domains chromedp enables on every
// tab that a print does not use. With DOM and CSS on, the renderer reports
// every node and style sheet of the report, and chromedp fetches the
// document after every load; with Network and Log on, every request and
// console line is sent over the pipe. A job needs only Page (navigation),
// Runtime (evaluation) and Fetch (which it enables itself).
func quietDomains(ctx context.Context) error {
	for _, cmd := range []func(context.Context) error{
		func(ctx context.Context) error { _, err := chromedp.Call(ctx, css.Disable, cdp.Empty{}); return err },
		func(ctx context.Context) error { _, err := chromedp.Call(ctx, dom.Disable, cdp.Empty{}); return err },
		func(ctx context.Context) error {
			_, err := chromedp.Call(ctx, network.Disable, cdp.Empty{})
			return err
		},
		func(ctx context.Context) error { _, err := chromedp.Call(ctx, cdplog.Disable, cdp.Empty{}); return err },
	} {
		if err := cmd(ctx); err != nil {
			return err
		}
	}
	return nil
}

// load navigates p to path on its origin, serving body from memory.
func (p *jobPage) load(ctx context.Context, path string, body []byte) error {
	d := &servedDoc{url: p.origin + path, body: body}
	p.doc.Store(d)
	defer p.doc.Store(nil)
	return chromedp.Do(ctx, chromedp.Navigate(d.url))
}

// loadedJS resolves once a document written with Page.setDocumentContent
// and its fonts are loaded, as a navigation would have waited for load,
// and then, when settle is above 0, once its scripts stop drawing or settle
// milliseconds have passed (quiet.js): one round trip for both.
func loadedJS(settle int64) string {
	return fmt.Sprintf(`new Promise(r => {
  const done = () => document.fonts.ready.then(() =>
    %d > 0 && window.__reportdSettle ? Promise.resolve(window.__reportdSettle(%d)).then(() => r(true), () => r(true)) : r(true));
  document.readyState === 'complete' ? done() : addEventListener('load', done, {once: true});
})`, settle, settle)
}

// settleJS waits, after a navigation, for scripts that still draw.
func settleJS(settle int64) string {
	return fmt.Sprintf("window.__reportdSettle ? window.__reportdSettle(%d) : true", settle)
}

// put makes body the page's document. The page is fresh and holds only
// warmDoc, which runs nothing, so writing body over it in place
// (Page.setDocumentContent) leaves body alone in the page as surely as a
// navigation, and skips the navigation's cost. The protocol carries the
// markup as a string, so a document that is not UTF-8 is navigated to
// instead, served with the bytes as they are, for its own charset to apply.
//
// settle (milliseconds, 0: none) is the longest wait for scripts that still
// draw after the load (Config.ScriptWait; see quiet.js).
func (p *jobPage) put(ctx context.Context, body []byte, settle int64) error {
	if !utf8.Valid(body) {
		if err := p.load(ctx, "/report.html", body); err != nil || settle <= 0 {
			return err
		}
		_, err := chromedp.Call(ctx, runtime.Evaluate,
			runtime.EvaluateParams{Expression: settleJS(settle), AwaitPromise: ptr(true), ReturnByValue: ptr(true)})
		return err
	}
	frame := cdp.FrameID(chromedp.FromContext(ctx).Target.TargetID) // a tab's main frame has its target's id
	if _, err := chromedp.Call(ctx, page.SetDocumentContent,
		page.SetDocumentContentParams{FrameID: frame, HTML: string(body)}); err != nil {
		return err
	}
	_, err := chromedp.Call(ctx, runtime.Evaluate,
		runtime.EvaluateParams{Expression: loadedJS(settle), AwaitPromise: ptr(true), ReturnByValue: ptr(true)})
	return err
}

// dispose closes the page and its browser context, in the background:
// closing a page whose renderer hangs waits on the browser.
func (p *jobPage) dispose() { go p.cancel() }

// take returns a page for one job, holding its browser in flight: a spare
// if one is ready, else a new one made now.
func (c *chromium) take() (*jobPage, error) {
	for {
		var p *jobPage
		select {
		case p = <-c.spare:
			c.spares.Add(-1)
		default:
		}
		if p == nil {
			break
		}
		c.refill()
		if c.claim(p) {
			return p, nil
		}
		p.dispose()
	}
	// A browser that cannot open a page is dead or wedged: replace it as a
	// whole and try once more on a fresh one (a browser killed a moment ago
	// is still current until chromedp notices its exit).
	for attempt := 0; ; attempt++ {
		b, err := c.browserFor()
		if err != nil {
			return nil, err
		}
		p, err := c.newPage(b)
		if err == nil {
			c.refill()
			return p, nil
		}
		c.retire(b, "hang", err)
		c.release(b, false, false)
		if attempt > 0 {
			return nil, err
		}
	}
}

// claim counts a job in flight on p's browser, unless that browser is gone.
func (c *chromium) claim(p *jobPage) bool {
	return c.sup.Hold(p.b, func() bool { return p.b.ctx.Err() == nil && p.ctx.Err() == nil })
}

// refill makes pages in the background until cap(spare) are ready, one
// at a time while jobs print: a page costs a renderer process (~100 ms of
// CPU), and making several at once would take the CPU from the jobs
// printing meanwhile. While idle, help makes a second one at a time. A
// failure only leaves a gap, which the next job fills itself (and so
// reports the error).
func (c *chromium) refill() {
	if !c.making.CompareAndSwap(false, true) {
		return // the maker running now goes on until the pool is full
	}
	go func() {
		for {
			select {
			case <-c.quit:
				c.making.Store(false)
				return
			default:
			}
			// Beyond the first ChromiumTabs, pages are made only while
			// no job prints: a burst of jobs then takes pages that are
			// ready without sharing the CPU with the making of more.
			if !c.whileIdle() {
				c.making.Store(false)
				return
			}
			n := c.spares.Load()
			if n >= int64(cap(c.spare)) {
				c.making.Store(false)
				// A page taken between the check and the store would
				// otherwise wait for the next job to be replaced.
				if c.spares.Load() < int64(cap(c.spare)) {
					c.refill()
				}
				return
			}
			if !c.spares.CompareAndSwap(n, n+1) {
				continue
			}
			if n+2 <= int64(cap(c.spare)) && !c.busy(time.Now()) {
				c.help()
			}
			if !c.makeSpare() {
				c.making.Store(false)
				return
			}
		}
	}()
}

// help makes pages beside refill's while no job runs: the cores are free
// then, and a deep pool (convert/spares.go) is full again sooner after a
// burst. It stops when a job starts (one maker at most beside jobs) or the
// pool is full.
func (c *chromium) help() {
	if !c.helping.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer c.helping.Store(false)
		for {
			select {
			case <-c.quit:
				return
			default:
			}
			n := c.spares.Load()
			if c.busy(time.Now()) || n >= int64(cap(c.spare)) {
				return
			}
			if c.spares.CompareAndSwap(n, n+1) && !c.makeSpare() {
				return
			}
		}
	}()
}

// whileIdle returns once the next spare page may be made: at once while
// fewer than ChromiumTabs are ready, else once no job prints and none has
// for sparesIdleGap. Beyond the first ChromiumTabs, pages are made only
// then, so a burst of jobs takes pages that are ready without sharing the
// CPU with the making of more.
// It reports false when the engine is closing.
func (c *chromium) whileIdle() bool {
	for c.spares.Load() >= int64(c.cfg.ChromiumTabs) && c.busy(time.Now()) {
		select {
		case <-c.quit:
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
	return true
}

// sparesIdleGap is how long no job must have run before a spare page
// beyond the first ChromiumTabs is made. Jobs one after another leave gaps
// of a few milliseconds between them (the answer goes out, the next
// request comes in), in which a page started would go on making itself
// (~100 ms of CPU) beside the next job.
const sparesIdleGap = 100 * time.Millisecond

// busy reports whether, at now, a job prints or one ended less than
// sparesIdleGap ago.
func (c *chromium) busy(now time.Time) bool {
	return c.printing.Load() > 0 || now.Sub(time.Unix(0, c.jobEnd.Load())) < sparesIdleGap
}

// makeSpare makes one page into the pool; spares already counts it.
func (c *chromium) makeSpare() bool {
	b, err := c.browserFor()
	if err != nil {
		c.spares.Add(-1)
		return false
	}
	p, err := c.newPage(b)
	c.release(b, false, false)
	if err != nil {
		c.spares.Add(-1)
		c.log.Debug("Chromium spare page failed", "err", err)
		return false
	}
	c.spare <- p // never blocks: spares bounds what is in the channel
	return true
}

// onEvent runs on the page's reader goroutine; it must not send commands,
// so answers go out from their own goroutines.
func (p *jobPage) onEvent(ev any) {
	switch e := ev.(type) {
	case *fetch.EventRequestPaused:
		go p.answer(e)
	case *inspector.EventTargetCrashed:
		p.crashed.Store(true)
		go p.cancel()
	case *page.EventJavascriptDialogOpening:
		// alert() and friends would stall the page until answered.
		go chromedp.Call(p.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	}
}

// answer serves the document itself from memory, lets other requests out
// only when AllowNetwork is set and only to http(s), and fails the rest.
func (p *jobPage) answer(e *fetch.EventRequestPaused) {
	ctx := p.ctx
	if s := p.site.Load(); s != nil {
		s.answer(ctx, e)
		return
	}
	if d := p.doc.Load(); d != nil && e.Request.URL == d.url {
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
	outside(ctx, e, p.allow)
}

// outside answers a request for something that is not the job's own: it
// goes out when allow (Config.AllowNetwork) is set, only over http(s) and
// never to the jobs' made-up host; anything else fails.
func outside(ctx context.Context, e *fetch.EventRequestPaused, allow bool) {
	if u, err := url.Parse(e.Request.URL); err == nil && allow &&
		(u.Scheme == "http" || u.Scheme == "https") && !isDocHost(u.Hostname()) {
		chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: e.RequestID})
		return
	}
	chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{
		RequestID: e.RequestID, ErrorReason: network.ErrorReasonBlockedByClient,
	})
}

func isDocHost(h string) bool {
	h = strings.ToLower(h)
	return h == docHost || strings.HasSuffix(h, "."+docHost)
}
