package convert

import (
	"os"
	"strconv"

	"github.com/reportd/reportd/internal/convert/engine"
	"github.com/reportd/reportd/internal/report"
)

// Selecting pages of a stored PDF (pageRanges) runs pdfcpu over an uploaded
// file, whose cost nothing bounds in advance: a PDF with a huge or cyclic
// object graph can take pdfcpu minutes and gigabytes. So it runs like the
// engines' jobs: under the conversion gate (one of the Chromium slots, served
// project by project), on inputs up to Config.TrimMaxBytes, in a child
// process (the running binary as trimChildName, see engine/childproc.go) whose
// data segment is capped at Config.MaxWorkerRSS and which is killed at the
// job's deadline.

// trimChildStall makes the child wait that many milliseconds before it
// works; tests use it to stand in for a PDF that takes pdfcpu too long.
const trimChildStall = "REPORTD_TRIM_PDF_TEST_STALL_MS"

// trimChild selects the pages (see childMain).
func trimChild(args []string) int {
	ms, err := strconv.Atoi(os.Getenv(trimChildStall))
	return engine.ChildMain(err == nil && ms > 0, func() error {
		if len(args) != 3 {
			return engine.ErrChildArgs
		}
		return trimPDF(args[0], args[1], args[2])
	})
}

// trimDoc writes the pages of job's stored PDF that job.Print.PageRanges
// selects to out, bounded as described above.
func (m *Manager) trimDoc(job Job, out string) error {
	fi, err := os.Stat(job.Src)
	if err != nil {
		return report.Wrap(report.Storage, err, "the report file is missing")
	}
	if fi.Size() > m.cfg.TrimMaxBytes {
		return report.Errorf(report.Conversion, "the PDF is too large to select pages from (%d bytes, at most %d)",
			fi.Size(), m.cfg.TrimMaxBytes)
	}
	leave, err := m.chrome.Gate().Enter(m.ctx, job.ProjectID)
	if err != nil {
		return err
	}
	defer leave()
	return m.runChild(engine.ChildTask{
		Name:   trimChildName,
		Args:   []string{job.Src, job.Print.PageRanges, out},
		Start:  "cannot start the page selection",
		Slow:   "selecting pages of the PDF",
		Failed: "selecting pages of the PDF",
	})
}
