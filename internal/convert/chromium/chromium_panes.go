package chromium

import (
	"bytes"
	"context"
	_ "embed"

	"github.com/chromedp/chromedp"
)

// Some report generators put one pane per file in a page and show one at a
// time, chosen with a <select>: printed as is, such a report holds only the
// pane that happens to be shown. For the generators known here, the engine
// shows every pane, each under its name as a heading, before printing.
//
// go tool cover -html: <select id="files"> whose options name the panes,
// <pre class="file" id="fileN" style="display: none">.
//
//go:embed panes.js
var panesJS string

// allPanes reports whether body is a report whose panes are all printed:
// one written by go tool cover -html.
func allPanes(body []byte) bool {
	return bytes.Contains(body, []byte(`<select id="files">`)) &&
		bytes.Contains(body, []byte(`<pre class="file" id="file0"`))
}

// showPanes runs panes.js in the loaded page; it reports how many panes it showed.
func showPanes(ctx context.Context) (int, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[int](panesJS))
}
