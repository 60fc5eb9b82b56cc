package service

import (
	"io"

	"github.com/reportd/reportd/internal/detect"
	"github.com/reportd/reportd/internal/detect/gototal"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
)

// The daemon computes go cover pages' totals from their sources.
func init() { detect.RegisterPageTotal(gototal.PageTotal) }

// detect recognises a staged HTML report's generator and reads its
// headline figures (internal/detect): as a site of one page, so a
// Playwright report whose embedded data lies beyond detect.Limit is read
// on (bounded) rather than missed. It never fails an upload: a file it
// cannot read is simply not recognised.
//
// It also reads the report's per-test results (detect.Results), nil when
// the generator lists none.
func (s *Service) detect(st *files.Staged) (string, *report.Summary, *report.Results) {
	files := []string{"report.html"}
	open := func(string) (io.ReadCloser, error) {
		f, err := st.Open()
		if err != nil {
			s.log.Warn("detect: cannot read the staged upload", "err", err)
			return nil, err
		}
		return f, nil
	}
	g, sum := detect.Site(files, open)
	return g, sum, detect.Results(g, files, open)
}
