package office

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// One rule decides whose fault a failed office job is, and so whether the
// worker is renewed:
//
//   - the input's: the helper says the deck could not be loaded, and the
//     same worker then converts the known-good warm-up deck (probe). The
//     worker is kept; the error says the deck is damaged.
//   - memory: the worker's peak reached half of convert.max_worker_rss, or
//     LibreOffice said bad_alloc. The worker is renewed; no retry (the deck
//     would fail again).
//   - a timeout: the worker is renewed; no retry.
//   - the worker's: anything else (soffice died, the bridge or pipe broke,
//     the helper exited, the job directory vanished, the probe failed). The
//     worker is renewed and the job retried once on a fresh worker. Its
//     error is marked engineErr, so the failure cache does not remember
//     it, except when soffice died under the job on both workers: then
//     the deck is what crashes it, and that is remembered (office.go).
func (w *officeWorker) failed(ctx context.Context, err error, staging bool, size int64) (error, bool) {
	var re *report.Error
	var died *sofficeDied
	switch {
	case staging:
		w.kill("broken")
		return err, true
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		w.kill("timeout")
		return engine.TimedOut(err, "the presentation", size, w.o.cfg.JobTimeout), false
	case (errors.As(err, &died) || errors.As(err, &re)) &&
		(w.nearMemoryCap(died) || strings.Contains(err.Error(), "bad_alloc")):
		w.kill("memory")
		return report.Wrap(report.Conversion, err, fmt.Sprintf(
			"the presentation needs more memory than allowed (%d MiB, convert.max_worker_rss)", w.o.cfg.MaxWorkerRSS>>20)), false
	case died != nil:
		w.kill("crash")
		return engine.Fault(report.Wrap(report.Conversion, err, "LibreOffice crashed while converting the presentation")), true
	case re != nil:
		if w.probe() {
			return err, false // a healthy worker could not read the deck
		}
		w.kill("broken")
		return engine.Fault(err), true
	}
	w.kill("crash")
	return engine.Fault(report.Wrap(report.Conversion, err, "LibreOffice failed while converting the presentation")), true
}

// probe reports whether the worker still converts the known-good warm-up
// deck: after a failed load, this tells a damaged deck from a broken worker.
func (w *officeWorker) probe() bool {
	defer w.clearJob()
	in := filepath.Join(w.job, "probe.pptx")
	if err := os.WriteFile(in, warmupPPTX, 0o600); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.o.cfg.JobTimeout)
	defer cancel()
	err := w.exchange(ctx, &officeJob{in: in, out: in + ".pdf", office: officeOf(report.PPTX)})
	if err == nil {
		_, err = os.Stat(in + ".pdf")
	}
	if err != nil {
		w.o.log.Warn("LibreOffice worker failed its probe after a failed job", "worker", w.id, "err", err)
		return false
	}
	return true
}
