package convert

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

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
}

type servedDoc struct {
	url  string
	body []byte
}

// newPage makes a page in browser b, which the caller holds in flight.
func (c *chromium) newPage(b *browser) (*jobPage, error) {
	p := &jobPage{b: b, allow: c.cfg.AllowNetwork, origin: fmt.Sprintf("http://j%d.%s", c.seq.Add(1), docHost)}
	p.ctx, p.cancel = chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(p.onEvent))
	err := withDeadline(browserStartTimeout, p.cancel, func() error {
		return chromedp.Do(p.ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
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
			if err := p.load(ctx, "/", []byte(warmDoc)); err != nil {
				return err
			}
			// A renderer's first print pays for fonts and the print
			// pipeline; pay it here, ahead of the job.
			_, err := chromedp.Call(ctx, page.PrintToPDF, page.PrintToPDFParams{})
			return err
		}))
	})
	if err != nil {
		go p.cancel()
		return nil, report.Wrap(report.Conversion, err, "Chromium could not open a page")
	}
	return p, nil
}

// warmDoc is what a spare page prints once, ahead of its job. It holds no
// CJK text on purpose: the CJK fallback font (Noto CJK, a ~20 MB collection)
// costs a fresh renderer ~250 ms of CPU to load and subset, which every
// spare page would pay whether or not its job needs it (measured: 206 vs
// 466 ms of Chromium CPU per fresh-context job on this 2-core machine).
const warmDoc = `<!DOCTYPE html><meta charset="utf-8"><p>Warm</p><p style="font-family:sans-serif">Warm</p><p style="font-family:monospace">Warm</p>`

// load navigates p to path on its origin, serving body from memory.
func (p *jobPage) load(ctx context.Context, path string, body []byte) error {
	d := &servedDoc{url: p.origin + path, body: body}
	p.doc.Store(d)
	defer p.doc.Store(nil)
	return chromedp.Do(ctx, chromedp.Navigate(d.url))
}

// loadedJS resolves once a document written with Page.setDocumentContent
// and its fonts are loaded, as a navigation would have waited for load.
const loadedJS = `new Promise(r => {
  const done = () => document.fonts.ready.then(() => r(true));
  document.readyState === 'complete' ? done() : addEventListener('load', done, {once: true});
})`

// put makes body the page's document. The page is fresh and holds only
// warmDoc, which runs nothing, so writing body over it in place
// (Page.setDocumentContent) leaves body alone in the page as surely as a
// navigation, and skips the navigation's cost. The protocol carries the
// markup as a string, so a document that is not UTF-8 is navigated to
// instead, served with the bytes as they are, for its own charset to apply.
func (p *jobPage) put(ctx context.Context, body []byte) error {
	if !utf8.Valid(body) {
		return p.load(ctx, "/report.html", body)
	}
	frame := cdp.FrameID(chromedp.FromContext(ctx).Target.TargetID) // a tab's main frame has its target's id
	if _, err := chromedp.Call(ctx, page.SetDocumentContent,
		page.SetDocumentContentParams{FrameID: frame, HTML: string(body)}); err != nil {
		return err
	}
	_, err := chromedp.Call(ctx, runtime.Evaluate,
		runtime.EvaluateParams{Expression: loadedJS, AwaitPromise: ptr(true), ReturnByValue: ptr(true)})
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
	b, err := c.browserFor()
	if err != nil {
		return nil, err
	}
	p, err := c.newPage(b)
	if err != nil {
		// A browser that cannot open a page is wedged: replace it as a whole.
		c.retire(b, "hang", err)
		c.release(b, false, false)
		return nil, err
	}
	c.refill()
	return p, nil
}

// claim counts a job in flight on p's browser, unless that browser is gone.
func (c *chromium) claim(p *jobPage) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p.b.retired || p.b.ctx.Err() != nil || p.ctx.Err() != nil {
		return false
	}
	p.b.inflight++
	return true
}

// refill makes pages in the background until cap(spare) are ready or on
// their way. A failure only leaves a gap, which the next job fills itself
// (and so reports the error).
func (c *chromium) refill() {
	for {
		n := c.spares.Load()
		if n >= int64(cap(c.spare)) {
			return
		}
		if !c.spares.CompareAndSwap(n, n+1) {
			continue
		}
		go func() {
			b, err := c.browserFor()
			if err != nil {
				c.spares.Add(-1)
				return
			}
			p, err := c.newPage(b)
			c.release(b, false, false)
			if err != nil {
				c.spares.Add(-1)
				c.log.Debug("Chromium spare page failed", "err", err)
				return
			}
			c.spare <- p // never blocks: spares bounds what is in the channel
		}()
	}
}

// onEvent runs on the page's reader goroutine; it must not send commands,
// so answers go out from their own goroutines.
func (p *jobPage) onEvent(ev any) {
	switch e := ev.(type) {
	case *fetch.EventRequestPaused:
		go p.answer(e)
	case *page.EventJavascriptDialogOpening:
		// alert() and friends would stall the page until answered.
		go chromedp.Call(p.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	}
}

// answer serves the document itself from memory, lets other requests out
// only when AllowNetwork is set and only to http(s), and fails the rest.
func (p *jobPage) answer(e *fetch.EventRequestPaused) {
	ctx := p.ctx
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
	if u, err := url.Parse(e.Request.URL); err == nil && p.allow &&
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
