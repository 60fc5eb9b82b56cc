package chromium

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdpio "github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// printOpts are the Page.printToPDF settings of one job.
type printOpts struct {
	params   page.PrintToPDFParams
	noScript bool // the engine runs no script in the document (Markdown output)
	allPanes bool // show every pane of a known multi-pane report (chromium_panes.go)

	// waitForSelector and waitForExpression of the request (printoptions.go)
	waitSelector, waitExpression string
	waitMax                      time.Duration
}

// printOnce runs one attempt on a page of its own; crashed reports that the
// browser died.
func (c *chromium) printOnce(ctx context.Context, body []byte, o printOpts, out io.Writer) (crashed bool, err error) {
	c.printing.Add(1)
	defer c.printing.Add(-1)
	t0 := time.Now()
	p, err := c.take()
	if err != nil {
		return false, err
	}
	c.log.Debug("chromium take", "wait", time.Since(t0)) // for a spare page, about nothing
	b := p.b
	cw := &countingWriter{w: out}
	large := func() bool { return len(body) > c.largeJob || cw.n > int64(c.largeJob) }
	defer func() { c.release(b, true, large()) }()
	// Whatever the document did ends with its page: frozen now, disposed
	// once idle (chromium_retire.go).
	defer func() { c.retirePage(p, err != nil || large()) }()
	mark, end := c.sup.Watch(b)
	defer end()

	timeout := c.cfg.JobTimeout
	jctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	err = c.render(jctx, p, body, o, cw)
	if err == nil {
		c.done.Add(1)
		return false, nil
	}
	if p.crashed.Load() && ctx.Err() == nil {
		return false, c.crashErr(err, mark, "the document")
	}
	return c.jobErr(ctx, jctx, b, err, timeout, "the document", int64(len(body)))
}

// jobErr names what went wrong in a job on browser b: ctx is the caller's
// context, jctx the job's (with its deadline). crashed reports that the
// browser died, which retires it. what and size name the input in a
// timeout's message (timedOut; size <0: unknown).
func (c *chromium) jobErr(ctx, jctx context.Context, b *browser, err error, timeout time.Duration, what string, size int64) (crashed bool, _ error) {
	var re *report.Error
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) || b.ctx.Err() != nil && ctx.Err() == nil:
		c.retire(b, "crash", err)
		return true, report.Wrap(report.Conversion, err, "Chromium crashed while rendering the document")
	case errors.As(err, &re):
		return false, err
	case errors.Is(err, context.DeadlineExceeded) || jctx.Err() != nil && ctx.Err() == nil:
		c.met.Restarted("chromium-tab", "timeout")
		return false, engine.TimedOut(err, what, size, timeout)
	case ctx.Err() != nil:
		return false, report.Wrap(report.Unavailable, ctx.Err(), "conversion cancelled")
	}
	return false, report.Wrap(report.Conversion, err, "Chromium failed to render the document")
}

// render loads body into p from its own origin, waits for scripts that still
// draw, prints, and streams the PDF to out.
func (c *chromium) render(ctx context.Context, p *jobPage, body []byte, o printOpts, out io.Writer) error {
	t0 := time.Now()
	if o.noScript {
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled,
			emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			return err
		}
	}
	var settle int64
	if !o.noScript && c.cfg.ScriptWait > 0 {
		settle = c.cfg.ScriptWait.Milliseconds() // resolves at once on a page with nothing pending
	}
	if err := p.put(ctx, body, settle); err != nil {
		return err
	}
	t1 := time.Now()
	if o.waitSelector != "" || o.waitExpression != "" {
		if err := waitFor(ctx, o); err != nil {
			return err
		}
	}
	if o.allPanes && !o.noScript {
		if _, err := showPanes(ctx); err != nil {
			return err
		}
	}
	t2 := time.Now()
	t3 := t2 // the print is done, the PDF not yet read
	defer func() {
		c.log.Debug("chromium print", "load", t1.Sub(t0), "settle", t2.Sub(t1),
			"print", t3.Sub(t2), "read", time.Since(t3))
	}()
	return printPDF(ctx, o, out, &t3)
}

// streamCloseTimeout bounds the closing of a read PDF stream.
const streamCloseTimeout = 10 * time.Second

// printPDF prints the page loaded in ctx with o's settings and streams the
// PDF to out. printed, if not nil, is set when the print is done.
func printPDF(ctx context.Context, o printOpts, out io.Writer, printed *time.Time) error {
	params := o.params
	params.TransferMode = page.PrintToPDFTransferModeReturnAsStream
	res, err := chromedp.Call(ctx, page.PrintToPDF, params)
	if printed != nil {
		*printed = time.Now()
	}
	if err != nil {
		if perr := printParamsError(err, o.params); perr != nil {
			return perr
		}
		if strings.Contains(err.Error(), "Printing failed") {
			return report.Wrap(report.Conversion, err, "Chromium could not print the document")
		}
		return err
	}
	// The stream is closed after the answer, not before it: one round trip
	// less in every job. Fire and forget, bounded on its own (the job's
	// context ends when printPDF returns; a lost connection or a closed
	// page ends the call too, and a retired page frees its streams anyway),
	// so the engine's close does not wait for it.
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), streamCloseTimeout)
		go func() {
			defer cancel()
			chromedp.Call(cctx, cdpio.Close, cdpio.CloseParams{Handle: res.Stream})
		}()
	}()
	for {
		r, err := chromedp.Call(ctx, cdpio.Read, cdpio.ReadParams{Handle: res.Stream, Size: 1 << 20})
		if err != nil {
			return err
		}
		if _, err := out.Write(r.Data); err != nil {
			return engine.DiskErr(err, "cannot write the PDF cache")
		}
		if r.EOF {
			return nil
		}
	}
}
