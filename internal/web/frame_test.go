package web_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// inFrame evaluates js in the document of the iframe matching frameSel and
// waits until it gives a truthy value (an object always is), which it
// returns. It reaches documents that the dashboard itself cannot, such as
// the rendered Markdown in its opaque-origin sandbox.
func inFrame[T any](b *browser, frameSel, what, js string) T {
	b.t.Helper()
	b.waitFor(what+" frame", fmt.Sprintf(`!!document.querySelector(%s)`, jsString(frameSel)), 60*time.Second)
	// The frame's document may still be the initial about:blank when the
	// node is read, and then has no execution context to poll in: read the
	// node again and retry until the whole wait is over.
	deadline := time.Now().Add(60 * time.Second)
	for {
		v, err := pollFrame[T](b, frameSel, js)
		if err == nil {
			return v
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: %v\npage text:\n%s", what, err, b.pageText())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func pollFrame[T any](b *browser, frameSel, js string) (T, error) {
	var zero T
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(frameSel)))
	if err != nil || len(nodes) == 0 {
		return zero, fmt.Errorf("no frame %s: %v", frameSel, err)
	}
	return chromedp.Run(ctx, chromedp.Poll[T](js, chromedp.WithPollingInFrame(nodes[0]),
		chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(50*time.Millisecond)))
}

// rendered is what the Markdown frame shows, read inside the frame.
type rendered struct {
	H1      string     `json:"h1"`
	Links   [][]string `json:"links"` // [text, href]
	Cells   []string   `json:"cells"`
	Code    string     `json:"code"`
	Scripts int        `json:"scripts"`
	Text    string     `json:"text"`
	Checked int        `json:"checked"`
	Style   bool       `json:"style"` // the print stylesheet is in effect
}

// readMarkdownFrame waits for the reader's Markdown frame to hold a
// document with a heading, then reads it.
func readMarkdownFrame(t *testing.T, b *browser) rendered {
	t.Helper()
	return inFrame[rendered](b, ".viewer-md iframe", "rendered Markdown", `document.querySelector('main.report h1') && {
		h1: document.querySelector('h1').textContent,
		links: [...document.querySelectorAll('a[href]')].map((a) => [a.textContent, a.getAttribute('href')]),
		cells: [...document.querySelectorAll('table td, table th')].map((c) => c.textContent.trim()),
		code: [...document.querySelectorAll('pre code')].map((c) => c.textContent).join('\n'),
		scripts: document.querySelectorAll('script').length,
		text: document.body.innerText,
		checked: document.querySelectorAll('input[type=checkbox]:checked').length,
		style: getComputedStyle(document.querySelector('main.report')).fontFamily !== getComputedStyle(document.documentElement).fontFamily || document.styleSheets.length > 0,
	}`)
}
