package convert

import (
	"context"
	"os"

	"github.com/reportd/reportd/internal/report"
)

// MarkdownHTML renders a Markdown report to the same HTML document (body
// and print stylesheet) the PDF is printed from, for the dashboard to show.
// It takes the same path as a PDF job: a slot of the Chromium gate, fair
// between projects, and a killable renderer child bounded by the job
// timeout, so a costly document cannot hold the daemon's CPU. Errors are
// *report.Error.
func (m *Manager) MarkdownHTML(ctx context.Context, job Job) ([]byte, error) {
	if err := job.check(); err != nil {
		return nil, err
	}
	if job.Type != report.MD {
		return nil, report.Errorf(report.Validation,
			"report %d is a %s file: only Markdown reports have a rendered HTML view (use /preview)", job.ReportID, job.Type)
	}
	src, err := os.ReadFile(job.Src)
	if err != nil {
		return nil, report.Wrap(report.Storage, err, "the report file is missing")
	}
	leave, err := m.chrome.Gate().Enter(ctx, job.ProjectID)
	if err != nil {
		return nil, err
	}
	defer leave()
	return m.md.Render(ctx, src, m.cfg.JobTimeout)
}
