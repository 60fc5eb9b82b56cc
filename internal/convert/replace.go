package convert

import (
	"context"
	"regexp"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// activeMarker finds anything in HTML that could run code or leave work
// behind in the page: script (elements, inline handlers, javascript: URLs),
// nested browsing contexts (frames, srcdoc, object, embed, portal) and
// meta refreshes. A document with none of these is inert.
var activeMarker = regexp.MustCompile(`(?i)<script|\son[a-z]+\s*=|javascript:|<i?frame|srcdoc|<object|<embed|<portal|http-equiv`)

// canReuse reports whether body may replace the content of an inert page in
// place (Page.setDocumentContent) rather than be navigated to. That skips a
// navigation, the Fetch round trip for the document and a new document's
// setup: about a third of a small report's time. It needs an inert document
// (the page's window outlives document.open, so a previous document's timers
// would otherwise survive into the next report) and UTF-8 bytes (the markup
// goes over the protocol as a string; other charsets are declared by the
// served document and must keep taking the navigation path).
func canReuse(body []byte) bool {
	return utf8.Valid(body) && !activeMarker.Match(body)
}

// loadedJS resolves once the replaced document and its fonts are loaded, as
// a navigation would have waited for the load event.
const loadedJS = `new Promise(r => {
  const done = () => document.fonts.ready.then(() => r(true));
  document.readyState === 'complete' ? done() : addEventListener('load', done, {once: true});
})`

// replaceContent swaps the document of the tab's main frame for body. The
// page keeps its docHost origin, so it still cannot read local files, and its
// requests still go through the Fetch interception, blocked by default.
func replaceContent(ctx context.Context, body []byte) error {
	// A tab's main frame has its target's id.
	frame := cdp.FrameID(chromedp.FromContext(ctx).Target.TargetID)
	if _, err := chromedp.Call(ctx, page.SetDocumentContent,
		page.SetDocumentContentParams{FrameID: frame, HTML: string(body)}); err != nil {
		return err
	}
	_, err := chromedp.Call(ctx, runtime.Evaluate,
		runtime.EvaluateParams{Expression: loadedJS, AwaitPromise: ptr(true), ReturnByValue: ptr(true)})
	return err
}
