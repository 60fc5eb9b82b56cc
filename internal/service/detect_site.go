package service

import (
	"context"

	"github.com/reportd/reportd/internal/detect"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// detectSite recognises stored site report id's generator and reads its
// headline figures (detect.Site) from the files of its manifest, read
// back through the site's view (SiteView) with bounded reads. Like
// detect, it never fails an upload: a file it cannot read is simply not
// looked at.
//
// It also reads the site's per-test results (detect.Results), nil when
// it lists none.
func (s *Service) detectSite(ctx context.Context, id int64, m site.Manifest) (string, *report.Summary, *report.Results) {
	return detect.SiteFS(s.SiteView(id, m).FS(ctx))
}
