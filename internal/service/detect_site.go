package service

import (
	"context"
	"io"
	"io/fs"

	"github.com/reportd/reportd/internal/detect"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// detectSite recognises stored site report id's generator and reads its
// headline figures (detect.Site) from the files of its manifest, read
// back through OpenSiteFile with bounded reads. Like detect, it never fails an
// upload: a file it cannot read is simply not looked at.
//
// It also reads the site's per-test results (detect.Results), nil when
// it lists none.
func (s *Service) detectSite(ctx context.Context, id int64, m site.Manifest) (string, *report.Summary, *report.Results) {
	paths := make([]string, len(m.Files))
	for i, f := range m.Files {
		paths[i] = f.Path
	}
	open := func(name string) (io.ReadCloser, error) {
		f, ok := m.Lookup(name)
		if !ok {
			return nil, fs.ErrNotExist
		}
		return s.OpenSiteFile(ctx, id, f)
	}
	g, sum := detect.Site(paths, open)
	return g, sum, detect.Results(g, paths, open)
}
