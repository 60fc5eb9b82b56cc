package service

import (
	"context"
	"errors"
	"io"
	"path"

	"github.com/reportd/reportd/internal/blob"
	"github.com/reportd/reportd/internal/files"
	"github.com/reportd/reportd/internal/report"
)

// PDFSite is the source of an HTML report printed as a site (PDFJob.Site):
// its entry page and every file it loads are read through Files, so the
// page's own fetch and XHR work while the engine has no network.
type PDFSite struct {
	Entry     string   // the entry page, relative to the site root
	Files     SiteOpen // opens one file of the site
	Generator string   // the report's generator: the engine knows when some are ready
}

// SiteOpen opens the site's file at p (relative to its root) with its
// content type; a missing file is a report.NotFound error.
type SiteOpen func(ctx context.Context, p string) (io.ReadCloser, string, error)

// siteJob describes rec for the engines as a site, when it is printed as
// one (ok): a single-file HTML report with scope=site, whose one file is
// the site (its parts, such as each file of a go tool cover report, are
// then printed one by one).
func (s *Service) siteJob(ctx context.Context, rec report.ReportRecord, opts report.PrintOptions) (PDFJob, bool, error) {
	job := PDFJob{ReportID: rec.ID, ProjectID: rec.ProjectID, Type: rec.FileType, ContentKey: rec.SHA256}
	if rec.FileType != report.HTML || opts.Scope != report.ScopeSite {
		return job, false, nil
	}
	return s.singleFileSite(job, rec)
}

// singleFileSite is the one-file site of a single-file HTML report, for
// scope=site only: the entry print keeps today's path.
func (s *Service) singleFileSite(job PDFJob, rec report.ReportRecord) (PDFJob, bool, error) {
	key, err := files.Key(rec.FilePath)
	if err != nil {
		return job, false, err
	}
	entry := path.Base(rec.FilePath)
	job.Site = &PDFSite{Entry: entry, Generator: rec.Generator,
		Files: func(ctx context.Context, p string) (io.ReadCloser, string, error) {
			if p != entry {
				return nil, "", report.Errorf(report.NotFound, "no file %s in this report", p)
			}
			o, err := s.blobs.Open(ctx, key)
			if errors.Is(err, blob.ErrNotFound) {
				return nil, "", report.Wrap(report.NotFound, err, "the report's file is missing")
			}
			if err != nil {
				return nil, "", report.Wrap(report.Storage, err, "the report's file cannot be read")
			}
			// No charset: the engine adds utf-8 when the bytes are, else
			// the document's own <meta charset> applies.
			return o, "text/html", nil
		}}
	return job, true, nil
}
