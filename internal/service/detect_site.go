package service

import (
	"context"
	"io"
	"io/fs"
	"slices"

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
	return detectManifest(m, s.SiteView(id, m).FS(ctx))
}

// detectManifest runs detect on the files m lists, read from fsys (m's
// view): the manifest's paths, sorted, are the list a walk of fsys finds.
func detectManifest(m site.Manifest, fsys fs.FS) detection {
	files := make([]string, len(m.Files))
	for i, f := range m.Files {
		files[i] = f.Path
	}
	if !slices.IsSorted(files) {
		slices.Sort(files)
	}
	g, sum, res := detect.SiteFiles(files, func(name string) (io.ReadCloser, error) { return fsys.Open(name) })
	return detection{g, sum, res}
}
