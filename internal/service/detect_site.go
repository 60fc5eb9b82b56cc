package service

import (
	"context"
	"io/fs"

	"github.com/reportd/reportd/internal/detect"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// detection is what detect finds in a site's files.
type detection struct {
	generator string
	summary   *report.Summary
	results   *report.Results
}

// detectSite recognises stored site report id's generator and reads its
// headline figures (detect.Site) from the files of its manifest, read
// back through the site's view (SiteView) with bounded reads. Like
// detect, it never fails an upload: a file it cannot read is simply not
// looked at.
//
// It also reads the site's per-test results (detect.Results), nil when
// it lists none.
func (s *Service) detectSite(ctx context.Context, id int64, m site.Manifest) detection {
	return detectFS(s.SiteView(id, m).FS(ctx))
}

func detectFS(fsys fs.FS) detection {
	g, sum, res := detect.SiteFS(fsys)
	return detection{g, sum, res}
}
