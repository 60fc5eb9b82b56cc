package service

import (
	"io"

	"github.com/reportd/reportd/internal/detect"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
)

// detect recognises a staged HTML report's generator and reads its
// headline figures (internal/detect). It never fails an upload: a file it
// cannot read is simply not recognised.
func (s *Service) detect(st *files.Staged) (string, *report.Summary) {
	f, err := st.Open()
	if err != nil {
		s.log.Warn("detect: cannot read the staged upload", "err", err)
		return "", nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, detect.Limit))
	if err != nil {
		s.log.Warn("detect: cannot read the staged upload", "err", err)
		return "", nil
	}
	return detect.Detect(b)
}
