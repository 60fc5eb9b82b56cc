package convert

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/report"
)

// printVariant names the cached variant of a print: today's variant for
// the default print, so a request without options is answered as before;
// otherwise that variant plus a hash of the normalized options.
func (m *Manager) printVariant(p report.PrintOptions) string {
	if p.IsZero() {
		return m.variant
	}
	h := sha256.Sum256([]byte(p.Key()))
	return m.variant + "-" + hex.EncodeToString(h[:8])
}

// waitMax bounds waitForSelector and waitForExpression: half the job's
// deadline, so the print that follows has the other half.
func (m *Manager) waitMax() time.Duration { return m.cfg.JobTimeout / 2 }

// apply sets the requested options over the type's defaults. An explicit
// paper or orientation wins over a CSS @page size in the document.
func (o *printOpts) apply(p report.PrintOptions, waitMax time.Duration) {
	if p.Paper != "" {
		wh := report.Papers[p.Paper]
		o.params.PaperWidth, o.params.PaperHeight = wh[0], wh[1]
	}
	if p.Paper != "" || p.Landscape {
		o.params.PreferCSSPageSize = ptr(false)
	}
	if p.Landscape {
		o.params.Landscape = ptr(true)
	}
	if p.Margin != nil {
		o.params.MarginTop, o.params.MarginRight = ptr(p.Margin[0]), ptr(p.Margin[1])
		o.params.MarginBottom, o.params.MarginLeft = ptr(p.Margin[2]), ptr(p.Margin[3])
	}
	o.params.PageRanges = p.PageRanges
	if p.Scale != 0 {
		o.params.Scale = p.Scale
	}
	if p.NoBackground {
		o.params.PrintBackground = ptr(false)
	}
	o.waitSelector, o.waitExpression, o.waitMax = p.WaitForSelector, p.WaitForExpression, waitMax
}

// waitFor waits for o's selector, then its expression, together at most
// o.waitMax. One that is not valid is a Validation error; one still unmet at
// the end is a Conversion error.
func waitFor(ctx context.Context, o printOpts) error {
	end := time.Now().Add(o.waitMax)
	if o.waitSelector != "" {
		sel, _ := json.Marshal(o.waitSelector)
		expr := "document.querySelector(" + string(sel) + ") !== null"
		if err := poll(ctx, end, expr, "waitForSelector", o.waitSelector, "did not appear", o.waitMax); err != nil {
			return err
		}
	}
	if o.waitExpression != "" {
		expr := "!!(\n" + o.waitExpression + "\n)"
		return poll(ctx, end, expr, "waitForExpression", o.waitExpression, "was not true", o.waitMax)
	}
	return nil
}

// poll evaluates expr in the page until it is true or end.
func poll(ctx context.Context, end time.Time, expr, name, what, unmet string, limit time.Duration) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(time.Until(end))
	defer deadline.Stop()
	last := ""
	for {
		res, err := chromedp.Call(ctx, runtime.Evaluate,
			runtime.EvaluateParams{Expression: expr, ReturnByValue: ptr(true)})
		if err != nil {
			return err
		}
		if ex := res.ExceptionDetails; ex != nil {
			last = exceptionText(ex)
			if strings.HasPrefix(last, "SyntaxError") {
				return report.Errorf(report.Validation, "%s %q is not valid: %s", name, what, last)
			}
		} else if res.Result != nil && string(res.Result.Value) == "true" {
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			msg := fmt.Sprintf("%s %q %s within %s", name, what, unmet, limit)
			if last != "" {
				msg += " (last error: " + last + ")"
			}
			return report.Errorf(report.Conversion, "%s", msg)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func exceptionText(ex *runtime.ExceptionDetails) string {
	if ex.Exception != nil && ex.Exception.Description != "" {
		first, _, _ := strings.Cut(ex.Exception.Description, "\n")
		return first
	}
	return ex.Text
}

// printParamsError turns Chromium's refusals of the requested print
// settings into Validation errors; other errors give nil.
func printParamsError(err error, p page.PrintToPDFParams) error {
	msg := strings.ToLower(err.Error())
	switch {
	case strings.Contains(msg, "page range exceeds page count"):
		return report.Wrap(report.Validation, err, fmt.Sprintf("pageRanges %q asks for pages beyond the end of the document", p.PageRanges))
	case strings.Contains(msg, "page range"):
		return report.Wrap(report.Validation, err, fmt.Sprintf("pageRanges %q was refused by Chromium", p.PageRanges))
	case strings.Contains(msg, "content area is empty"):
		return report.Wrap(report.Validation, err, "margin leaves no room for content on this paper")
	case strings.Contains(msg, "invalid print parameters"), strings.Contains(msg, "invalid printer settings"):
		return report.Wrap(report.Validation, err, "Chromium refused these print options")
	}
	return nil
}
