package chromium

import (
	"fmt"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// crashErr is the error of a job whose page's renderer died: stopped by
// the memory cap since mark, or crashed on its own (V8 out of memory,
// mostly). what names the input.
func (c *chromium) crashErr(err error, mark int64, what string) error {
	if stopped, rss := c.sup.StoppedSince(mark); stopped {
		return report.Wrap(report.Conversion, err, fmt.Sprintf(
			"%s needed more memory than allowed: its renderer reached %s, over convert.max_worker_rss (%s), and was stopped",
			what, engine.ApproxSize(rss), engine.ApproxSize(c.cfg.MaxWorkerRSS)))
	}
	return report.Wrap(report.Conversion, err, fmt.Sprintf(
		"Chromium's renderer crashed while rendering %s (out of memory? each script heap is capped at %d MiB, half of convert.max_worker_rss)",
		what, engine.V8HeapMiB(c.cfg.MaxWorkerRSS)))
}
