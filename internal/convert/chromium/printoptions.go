package chromium

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/report"
)

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
//
// The expression comes from whoever asks for the PDF, a reader perhaps, and
// runs inside the report: it is evaluated without side effects (V8 refuses
// anything that could change the page, DevTools' throwOnSideEffect), so it
// can read the report but never rewrite what its PDF says, and what it
// throws is not echoed (the page's text could be in it).
func waitFor(ctx context.Context, o printOpts) error {
	end := time.Now().Add(o.waitMax)
	if o.waitSelector != "" {
		sel, _ := json.Marshal(o.waitSelector)
		expr := "document.querySelector(" + string(sel) + ") !== null"
		if err := poll(ctx, end, expr, false, "waitForSelector", o.waitSelector, "did not appear", o.waitMax); err != nil {
			return err
		}
	}
	if o.waitExpression != "" {
		expr := "!!(\n" + o.waitExpression + "\n)"
		if err := checkSyntax(ctx, expr, o.waitExpression); err != nil {
			return err
		}
		return poll(ctx, end, expr, true, "waitForExpression", o.waitExpression, "was not true", o.waitMax)
	}
	return nil
}

// checkSyntax compiles expr without running it: a syntax error is the
// request's, and its message names only the request's own text.
func checkSyntax(ctx context.Context, expr, what string) error {
	res, err := chromedp.Call(ctx, runtime.CompileScript,
		runtime.CompileScriptParams{Expression: expr, SourceURL: "", PersistScript: false})
	if err != nil {
		return err
	}
	if ex := res.ExceptionDetails; ex != nil {
		return report.Errorf(report.Validation, "waitForExpression %q is not valid: %s", what, exceptionText(ex))
	}
	return nil
}

// sideEffectEvalTimeout bounds one evaluation of a request's expression.
const sideEffectEvalTimeout = 2 * time.Second

// poll evaluates expr in the page until it is true or end; pure evaluates
// it without side effects (a request's own expression).
func poll(ctx context.Context, end time.Time, expr string, pure bool, name, what, unmet string, limit time.Duration) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(time.Until(end))
	defer deadline.Stop()
	threw := false
	params := runtime.EvaluateParams{Expression: expr, ReturnByValue: ptr(true)}
	if pure {
		params.ThrowOnSideEffect = ptr(true)
		params.Timeout = runtime.TimeDelta(sideEffectEvalTimeout.Milliseconds())
	}
	for {
		res, err := chromedp.Call(ctx, runtime.Evaluate, params)
		if err != nil {
			return err
		}
		if ex := res.ExceptionDetails; ex != nil {
			if pure && sideEffect(ex) {
				return report.Errorf(report.Validation,
					"%s %q may change the page, and is evaluated only without side effects: read the page, do not call functions that write it (document.querySelector works; document.getElementById is refused by Chromium)", name, what)
			}
			threw = true
			if !pure && strings.HasPrefix(exceptionText(ex), "SyntaxError") {
				return report.Errorf(report.Validation, "%s %q is not valid: %s", name, what, exceptionText(ex))
			}
		} else if res.Result != nil && string(res.Result.Value) == "true" {
			return nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			msg := fmt.Sprintf("%s %q %s within %s", name, what, unmet, limit)
			if threw {
				// What it threw may quote the page: it is not shown.
				msg += " (it threw an exception, whose text is not shown)"
			}
			return report.Errorf(report.Conversion, "%s", msg)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sideEffect reports whether ex is V8 refusing an evaluation that could
// have had a side effect.
func sideEffect(ex *runtime.ExceptionDetails) bool {
	return ex.Exception != nil && ex.Exception.ClassName == "EvalError" &&
		strings.Contains(ex.Exception.Description, "Possible side-effect")
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
