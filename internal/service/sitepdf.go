package service

import (
	"context"
	"io"
	"sync"

	"github.com/reportd/reportd/internal/convert"
	"github.com/reportd/reportd/internal/report"
	"github.com/reportd/reportd/internal/site"
)

// siteJob describes rec for the engines as a site, when it is printed as
// one (ok): a site report (its entry page, or with scope=site its pages),
// and a single-file HTML report with scope=site, whose one file is the
// site (its parts, such as each file of a go tool cover report, are then
// printed one by one). Both read their files through the manifest the
// content origin serves (SiteManifest), through the site's view
// (SiteView), loaded only when the engines need a file: a cached PDF
// costs no manifest.
func (s *Service) siteJob(rec report.ReportRecord, opts report.PrintOptions) (convert.Job, bool) {
	job := convert.Job{ReportID: rec.ID, ProjectID: rec.ProjectID, Type: rec.FileType, ContentKey: rec.SHA256}
	single := !rec.IsSite()
	if single && (rec.FileType != report.HTML || opts.Scope != report.ScopeSite) {
		return job, false
	}
	entry, _ := ContentEntry(&rec.Report) // the manifest's entry, without loading it
	var (
		once    sync.Once
		view    site.View
		loadErr error
	)
	open := func(ctx context.Context, p string) (io.ReadCloser, string, error) {
		once.Do(func() {
			var m site.Manifest
			m, loadErr = s.manifestOf(context.WithoutCancel(ctx), rec)
			view = s.SiteView(rec.ID, m)
		})
		if loadErr != nil {
			return nil, "", loadErr
		}
		o, f, err := view.Open(ctx, p)
		if err != nil {
			return nil, "", err
		}
		ct := f.ContentType
		if single {
			// Without a charset the engine adds utf-8 when the bytes are,
			// else the document's own <meta charset> applies, as when it
			// prints the report's entry.
			ct = "text/html"
		}
		return o, ct, nil
	}
	job.Site = &convert.Site{Entry: entry, Files: open, Generator: rec.Generator}
	return job, true
}
